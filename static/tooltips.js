// Claim badge tooltips: shown by CSS on hover and keyboard focus; Escape hides the open one
// (WCAG 1.4.13: dismissible without moving the pointer or the focus).
(function () {
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    document.querySelectorAll(".claim-mark").forEach(function (mark) { mark.classList.add("tip-dismissed"); });
  });
  document.addEventListener("focusin", reset);
  document.addEventListener("mouseover", reset);
  function reset(event) {
    var mark = event.target.closest && event.target.closest(".claim-mark");
    document.querySelectorAll(".claim-mark.tip-dismissed").forEach(function (m) {
      if (m !== mark || event.type === "focusin") m.classList.remove("tip-dismissed");
    });
  }
})();
