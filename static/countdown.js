// Live SLA countdowns. The server computes each case's deadline (due_at), its at-risk instant
// and, in data-windows, the stretches of time in which the tier's clock runs between now and
// the deadline (the whole span for L1's wall clock; each working window for L2/L3 business
// hours, pauses already taken out). This script sums what is left of those windows every
// second, so a business-time clock stands still at night, and switches the state (text and
// style) when a line is crossed; a state never goes back. data-goal says which clock runs ("to
// acknowledge", "to resolve"). A case without a deadline (paused, resolved) keeps its stopped state.
(function () {
  var LABELS = { on_track: "On track", at_risk: "At risk", breached: "Breached" };
  var ORDER = ["on_track", "at_risk", "breached"];

  function fmt(seconds) {
    var s = Math.abs(Math.round(seconds));
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    var parts = d ? [d + "d", h + "h", m + "m"] : h ? [h + "h", m + "m", r + "s"] : [m + "m", r + "s"];
    return parts.join(" ");
  }

  function clockLeft(el, now, dueMs) {
    var raw = el.getAttribute("data-windows");
    if (!raw) return (dueMs - now) / 1000;
    var windows = JSON.parse(raw), left = 0;
    windows.forEach(function (w) {
      var start = Math.max(w[0], now), end = Math.min(w[1], dueMs);
      if (end > start) left += end - start;
    });
    return left / 1000;
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll(".countdown[data-due]").forEach(function (el) {
      var due = el.getAttribute("data-due");
      if (!due) return;
      var dueMs = Date.parse(due), riskMs = Date.parse(el.getAttribute("data-at-risk") || "") || dueMs;
      var state = now > dueMs ? "breached" : now >= riskMs ? "at_risk" : "on_track";
      var server = el.getAttribute("data-state") || "on_track";
      if (ORDER.indexOf(server) > ORDER.indexOf(state)) state = server; // a state never goes back
      el.querySelector(".cd-state").textContent = LABELS[state];
      var t = el.querySelector(".cd-time");
      if (t) {
        var business = el.getAttribute("data-business") === "1" ? "business time " : "";
        var goal = el.getAttribute("data-goal") || "";
        t.textContent = now <= dueMs ? fmt(clockLeft(el, now, dueMs)) + " " + business + "left " + goal
                                     : fmt((dueMs - now) / 1000) + " overdue";
      }
      ORDER.forEach(function (s) { el.classList.toggle("sla--" + s, s === state); });
      var row = el.closest(".case-row");
      if (row) ORDER.forEach(function (s) { row.classList.toggle("sla-row--" + s, s === state); });
    });
  }

  tick();
  setInterval(tick, 1000);
})();
