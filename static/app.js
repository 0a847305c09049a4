// Small enhancements on top of htmx: live countdowns for held slots, the
// kiosk clock, announcements of grid changes for screen readers, and a
// board that heals itself after a network drop or a server restart.
// The words these scripts write come from the page (data-* attributes of
// <body>, in the page's language), with English when a page has none.
function pageWord(name, fallback) {
  var v = document.body && document.body.dataset[name];
  return v || fallback;
}

// countdowns writes every held slot's time left.
function countdowns() {
  document.querySelectorAll(".countdown[data-expires]").forEach(function (el) {
    var left = Math.max(0, Math.round((Date.parse(el.dataset.expires) - Date.now()) / 1000));
    el.textContent = left > 0 ? pageWord("wordLeft", "{n} s left").replace("{n}", left) : pageWord("wordExpired", "expired");
  });
}

(function () {
  "use strict";

  function tick() {
    countdowns();
    document.querySelectorAll(".kiosk-clock[data-tz]").forEach(function (el) {
      try {
        el.textContent = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: el.dataset.tz }).format(new Date());
      } catch (e) { /* an unknown zone keeps the server's time */ }
    });
  }
  setInterval(tick, 1000);
  document.addEventListener("DOMContentLoaded", tick);

  // Tell screen-reader users when a slot they can see changes state.
  document.addEventListener("htmx:sseBeforeMessage", function (e) {
    var id = e.detail && e.detail.type;
    var old = id && document.getElementById(id);
    if (!old || !old.classList.contains("slot")) return;
    var before = old.dataset.state;
    setTimeout(function () {
      var now = document.getElementById(id);
      var announcer = document.getElementById("grid-announcer");
      if (!now || !announcer || now.dataset.state === before) return;
      var words = {
        free: pageWord("wordFree", "is free again"),
        held: pageWord("wordHeld", "is being held by someone"),
        taken: pageWord("wordTaken", "was just booked"),
        mine: pageWord("wordMine", "is held for you")
      };
      var time = now.querySelector(".slot-time, .slot-button");
      announcer.textContent = (time ? time.textContent : pageWord("wordSlot", "A slot")) + " " + (words[now.dataset.state] || pageWord("wordChanged", "changed"));
    }, 0);
  });

  // The SSE extension reconnects by itself; if the stream stays down (a
  // server restart that lost the page's session, say), reload once the
  // server answers again, so a kiosk nobody touches recovers.
  var lastError = 0;
  document.addEventListener("htmx:sseError", function () {
    if (!document.querySelector(".kiosk")) return;
    if (lastError && Date.now() - lastError > 30000) {
      fetch("/healthz", { cache: "no-store" }).then(function (r) { if (r.ok) location.reload(); }).catch(function () {});
    }
    if (!lastError) lastError = Date.now();
  });
  document.addEventListener("htmx:sseOpen", function () { lastError = 0; });
})();

// After the hold panel changes, bring it into view (on a phone it sits
// below the week) and move focus to its heading, so keyboard and screen
// reader users land where the next step is.
document.addEventListener("htmx:afterSwap", function (e) {
  if (!e.detail || !e.detail.target || e.detail.target.id !== "hold-panel") return;
  var panel = e.detail.target;
  var heading = panel.querySelector(".panel-heading, [role=alert]");
  var r = panel.getBoundingClientRect();
  if (r.top < 0 || r.top > window.innerHeight - 80) panel.scrollIntoView({ block: "start" });
  if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({ preventScroll: true }); }
  countdowns();
});

// ---- DESK: the front desk's booking and move dialogs (#desk-dialog) ----
// A dialog swapped in takes the focus (its first field, else its
// heading); Escape closes it as its Close button does (which lets go of
// the time it holds); a move button refused by the form's own checks (an
// empty reason) says why.
(function () {
  "use strict";
  function openDialog() {
    return document.querySelector("#desk-dialog dialog[open]");
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!e.detail || !e.detail.target || e.detail.target.id !== "desk-dialog") return;
    var d = openDialog();
    if (!d) return;
    var first = d.querySelector("select, input:not([type=hidden])");
    var heading = d.querySelector("h2");
    (first || heading).focus();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var d = openDialog();
    var close = d && d.querySelector("[data-desk-close]");
    if (!close) return;
    e.preventDefault();
    close.click();
  });
  document.addEventListener("htmx:validation:halted", function (e) {
    var form = e.target && e.target.closest && e.target.closest("#desk-dialog form");
    if (form) form.reportValidity();
  });
})();
