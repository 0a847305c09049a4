// Small enhancements on top of htmx: live countdowns for held slots, the
// kiosk clock, announcements of grid changes for screen readers, and a
// board that heals itself after a network drop or a server restart.
// The words these scripts write come from the page (data-* attributes of
// <body>, in the page's language), with English when a page has none.
function pageWord(name, fallback) {
  var v = document.body && document.body.dataset[name];
  return v || fallback;
}

// holdsOver says when a hold has ended by the page's own clock: its
// patient was told "until 10:42" (the end of its life, which heartbeats do
// not move), and only once that time has passed does the page say it is
// over; a hold that ends earlier (the page was closed) is answered by its
// heartbeat with the "expired" panel.
function holdsOver() {
  document.querySelectorAll(".hold-until[data-until]").forEach(function (el) {
    if (Date.now() >= Date.parse(el.dataset.until) && el.dataset.over && el.textContent !== el.dataset.over) {
      el.textContent = el.dataset.over;
      el.classList.add("over");
    }
  });
}

// countdowns writes the time left of every offer that counts down.
function countdowns() {
  holdsOver();
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

  // A kiosk board of two languages takes turns between them.
  document.addEventListener("DOMContentLoaded", function () {
    var board = document.querySelector(".kiosk[data-langs]");
    var langs = board ? board.dataset.langs.split(" ") : [];
    if (langs.length < 2) return;
    // Counted in seconds against data-every as it stands each second.
    var turn = 0, shown = 0;
    setInterval(function () {
      if (++shown < (parseInt(board.dataset.every, 10) || 15)) return;
      shown = 0;
      turn = (turn + 1) % langs.length;
      board.dataset.lang = langs[turn];
      document.documentElement.lang = langs[turn];
    }, 1000);
  });

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
// A dialog swapped in works at once and takes the focus (its first
// field, else its heading); Escape closes it as its Close button does
// (which lets go of the time it holds); a move button refused by the
// form's own checks (an empty reason) says why.
(function () {
  "use strict";
  function openDialog() {
    return document.querySelector("#desk-dialog dialog[open]");
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!e.detail || !e.detail.target || e.detail.target.id !== "desk-dialog") return;
    var d = openDialog();
    if (!d) return;
    // htmx gives swapped-in content its behaviour only when the swap
    // settles, a timer later (20 ms, far more on a busy machine), while
    // the dialog is on screen and focused now: until then Close and Escape
    // (which clicks Close) would do nothing and Book would submit the form
    // as a plain page load. Processed here, it works from the moment it
    // shows; at the settle htmx finds it processed and leaves it.
    htmx.process(d);
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
  // A patient the look-up offers fills the dialog's fields (the phone's
  // change asks for their no-shows) and the offers go; the booked message
  // closes on its button.
  document.addEventListener("click", function (e) {
    var t = e.target && e.target.closest && e.target.closest("[data-fill-name], [data-booked-close]");
    if (!t) return;
    if (t.hasAttribute("data-booked-close")) {
      var box = t.closest(".desk-booked");
      if (box) box.remove();
      return;
    }
    var d = openDialog();
    if (!d) return;
    [["#desk-name", t.dataset.fillName], ["#desk-phone", t.dataset.fillPhone], ["#desk-email", t.dataset.fillEmail]].forEach(function (f) {
      var el = d.querySelector(f[0]);
      if (el) el.value = f[1] || "";
    });
    var list = d.querySelector("#desk-matches");
    if (list) list.innerHTML = "";
    var phone = d.querySelector("#desk-phone");
    if (phone) phone.dispatchEvent(new Event("change", { bubbles: true }));
    var book = d.querySelector("button[type=submit]");
    if (book) book.focus();
  });
})();

// ---- MARK: the booking dialog's Close and the day sheet's Print button ----
// Close (and Escape, which clicks it) empties #desk-dialog and gives the
// focus back to the booking's block; a booking dialog swapped in (or
// swapped again after a mark) takes the focus on its heading. The Print
// button is hidden until this script runs: without it the browser's own
// print menu does the same.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!t || !t.closest) return;
    if (t.closest("[data-print]")) {
      window.print();
      return;
    }
    var close = t.closest("[data-mark-close]");
    if (!close) return;
    var d = close.closest("dialog");
    var id = d && d.dataset.booking;
    var box = document.getElementById("desk-dialog");
    if (box) box.innerHTML = "";
    var block = id && document.querySelector('[data-booking="' + id + '"]');
    if (block && block.focus) block.focus();
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-print]").forEach(function (b) { b.hidden = false; });
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!e.detail || !e.detail.target || e.detail.target.id !== "desk-dialog") return;
    var h = document.querySelector("#desk-dialog dialog.booking-dialog[open] h2");
    if (h) h.focus();
  });
})();

// ---- GRID: the staff day grid and week view ----
// Each cell and block carries its place (data-gr row line, data-gs rows
// spanned, data-gc column), set here as its grid position, since the page
// allows no inline styles. The grid is one tab stop (a roving tabindex):
// the arrow keys move between free times and bookings, Home and End go to
// a column's first and last, Enter books or opens. A live update that
// replaces the focused element gives the focus back to its successor.
(function () {
  "use strict";
  var SEL = ".daygrid .cell.free, .daygrid .block.booking";
  var current = "", inGrid = false;

  function keyOf(el) {
    return el.dataset.booking ? "b:" + el.dataset.booking : "f:" + el.dataset.specialist + "@" + el.dataset.start;
  }
  function place(root) {
    var els = root.querySelectorAll ? Array.prototype.slice.call(root.querySelectorAll("[data-gr]")) : [];
    if (root.dataset && root.dataset.gr) els.push(root);
    els.forEach(function (el) {
      var span = el.dataset.gs && el.dataset.gs !== "1" ? " / span " + el.dataset.gs : "";
      el.style.gridRow = el.dataset.gr + span;
      el.style.gridColumn = el.dataset.gc;
    });
  }
  function rove(grid) {
    var all = grid.querySelectorAll(SEL);
    if (!all.length) return null;
    var keep = null;
    Array.prototype.forEach.call(all, function (el) {
      if (!keep && current && keyOf(el) === current) keep = el;
    });
    keep = keep || all[0];
    Array.prototype.forEach.call(all, function (el) { el.tabIndex = el === keep ? 0 : -1; });
    return keep;
  }
  function pos(el) {
    var r = +el.dataset.gr;
    return { c: +el.dataset.gc, r: r, e: r + (+(el.dataset.gs || 1)) };
  }
  function score(key, p, q) {
    switch (key) {
      case "ArrowDown": return q.c === p.c && q.r >= p.e ? q.r - p.r : Infinity;
      case "ArrowUp": return q.c === p.c && q.r < p.r ? p.r - q.r : Infinity;
      case "Home": return q.c === p.c ? q.r : Infinity;
      case "End": return q.c === p.c ? -q.r : Infinity;
    }
    var dc = key === "ArrowRight" ? q.c - p.c : p.c - q.c;
    if (dc <= 0) return Infinity;
    var dr = q.r <= p.r && p.r < q.e ? 0 : Math.min(Math.abs(q.r - p.r), Math.abs(q.e - 1 - p.r));
    return dc * 100000 + dr;
  }
  function next(el, key) {
    var p = pos(el), best = null, bestScore = Infinity;
    Array.prototype.forEach.call(el.closest("[data-grid]").querySelectorAll(SEL), function (o) {
      if (o === el && key !== "Home" && key !== "End") return;
      var s = score(key, p, pos(o));
      if (s < bestScore) { bestScore = s; best = o; }
    });
    return best;
  }
  function settle(root) {
    place(root);
    document.querySelectorAll("[data-grid]").forEach(function (grid) {
      var keep = rove(grid);
      if (keep && inGrid && (document.activeElement === document.body || !document.activeElement)) keep.focus({ preventScroll: true });
    });
  }
  document.addEventListener("keydown", function (e) {
    var el = e.target && e.target.closest && e.target.closest(SEL);
    if (!el || ["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Home", "End"].indexOf(e.key) < 0) return;
    var to = next(el, e.key);
    e.preventDefault();
    if (!to) return;
    el.tabIndex = -1;
    to.tabIndex = 0;
    to.focus();
    to.scrollIntoView({ block: "nearest", inline: "nearest" });
  });
  document.addEventListener("focusin", function (e) {
    var el = e.target && e.target.closest && e.target.closest(SEL);
    inGrid = !!el;
    if (el) current = keyOf(el);
  });
  if (typeof htmx !== "undefined") {
    htmx.onLoad(settle);
  } else {
    document.addEventListener("DOMContentLoaded", function () { settle(document); });
  }
})();

// ---- FILTER: a type's select shows only the specialists who perform it ----
// Each type's option names its specialists (data-specialists); the select
// named by data-filters hides the others and moves off a hidden choice.
(function () {
  "use strict";
  function filter(sel) {
    var target = document.querySelector(sel.dataset.filters);
    var opt = sel.options[sel.selectedIndex];
    if (!target || !opt) return;
    var ids = (opt.dataset.specialists || "").split(" ");
    var first = null;
    Array.prototype.forEach.call(target.options, function (o) {
      var ok = ids.indexOf(o.value) >= 0;
      o.hidden = !ok;
      o.disabled = !ok;
      if (ok && !first) first = o;
    });
    var cur = target.options[target.selectedIndex];
    if ((!cur || cur.disabled) && first) first.selected = true;
  }
  function all(root) {
    (root.querySelectorAll ? root : document).querySelectorAll("select[data-filters]").forEach(filter);
  }
  document.addEventListener("change", function (e) {
    if (e.target && e.target.matches && e.target.matches("select[data-filters]")) filter(e.target);
  });
  if (typeof htmx !== "undefined") htmx.onLoad(all);
  else document.addEventListener("DOMContentLoaded", function () { all(document); });
})();

// ---- COPY: a button that copies its data-copy text (the manage link, a kiosk's link) ----
// A button hidden in the markup shows only where there is a clipboard to
// copy to (the link beside it can always be selected). A button with
// data-copied says that for a moment in place of its label; a status
// beside it (span[data-copied]) says it there instead.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    if (!navigator.clipboard) return;
    document.querySelectorAll("button[data-copy][hidden]").forEach(function (b) { b.hidden = false; });
  });
  document.addEventListener("click", function (e) {
    var b = e.target && e.target.closest && e.target.closest("[data-copy]");
    if (!b) return;
    var say = b.parentNode.querySelector("span[data-copied]");
    var label = b.textContent;
    function done(ok) {
      if (say) {
        say.textContent = ok ? "Copied." : "Select the link and copy it.";
      } else if (ok && b.dataset.copied) {
        b.textContent = b.dataset.copied;
        setTimeout(function () { b.textContent = label; }, 2000);
      }
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(b.dataset.copy).then(function () { done(true); }, function () { done(false); });
    } else {
      done(false);
    }
  });
})();
