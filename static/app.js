// Small enhancements on top of htmx: live countdowns for held slots.
(function () {
  "use strict";
  function tick() {
    document.querySelectorAll(".countdown[data-expires]").forEach(function (el) {
      var left = Math.max(0, Math.round((Date.parse(el.dataset.expires) - Date.now()) / 1000));
      el.textContent = left > 0 ? left + " s left" : "expired";
    });
  }
  setInterval(tick, 1000);
  document.addEventListener("DOMContentLoaded", tick);
})();
