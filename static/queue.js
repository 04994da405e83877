// The queue's bulk bar: "tick every case", a live count of the ticked cases, and focus on the
// results of the last bulk action so a screen reader reads them first.
(function () {
  var all = document.getElementById("tick-all");
  var boxes = Array.prototype.slice.call(document.querySelectorAll(".js-tick:not([disabled])"));
  var count = document.getElementById("bulk-count");
  function update() {
    var n = boxes.filter(function (b) { return b.checked; }).length;
    if (count) count.textContent = n ? n + " ticked" : "";
    if (all) { all.checked = n > 0 && n === boxes.length; all.indeterminate = n > 0 && n < boxes.length; }
  }
  if (all) all.addEventListener("change", function () {
    boxes.forEach(function (b) { b.checked = all.checked; });
    update();
  });
  boxes.forEach(function (b) { b.addEventListener("change", update); });
  var results = document.getElementById("bulk-results");
  if (results) results.focus();
  update();
})();
