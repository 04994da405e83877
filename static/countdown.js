// Live SLA countdowns. The server computes each case's deadline (due_at) and at-risk instant
// from the tier's SLA, the workspace's business hours and any pause; this script only counts
// down to them every second and switches the state (text and style) when a line is crossed.
// A case without a deadline (paused, acknowledged at L1, resolved) shows its stopped state.
(function () {
  var LABELS = { on_track: "On track", at_risk: "At risk", breached: "Breached" };
  var ORDER = ["on_track", "at_risk", "breached"];

  function fmt(seconds) {
    var s = Math.abs(Math.round(seconds));
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    var parts = d ? [d + "d", h + "h", m + "m"] : h ? [h + "h", m + "m", r + "s"] : [m + "m", r + "s"];
    return parts.join(" ");
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
      var left = (dueMs - now) / 1000;
      el.querySelector(".cd-state").textContent = LABELS[state];
      var t = el.querySelector(".cd-time");
      if (t) t.textContent = left >= 0 ? fmt(left) + " left" : fmt(left) + " overdue";
      ORDER.forEach(function (s) { el.classList.toggle("sla--" + s, s === state); });
      var row = el.closest(".case-row");
      if (row) ORDER.forEach(function (s) { row.classList.toggle("sla-row--" + s, s === state); });
    });
  }

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
  tick();
  setInterval(tick, 1000);
})();
