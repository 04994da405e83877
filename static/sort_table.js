// A table marked "sortable" sorts by a column when its header button is pressed: each cell carries
// its value in data-sort (a number, or text); empty values go last. aria-sort says the order to
// screen readers; pressing the same header again reverses it.
(function () {
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("thead th");
    headers.forEach(function (th, column) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") !== "descending";
        if (th.getAttribute("aria-sort") === null && column === 0) descending = false;
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        function key(row) {
          var text = row.cells[column] ? row.cells[column].getAttribute("data-sort") : "";
          var number = parseFloat(text);
          return { empty: text === null || text === "", number: isNaN(number) ? null : number, text: text || "" };
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (x.empty !== y.empty) return x.empty ? 1 : -1;
          var order = x.number !== null && y.number !== null ? x.number - y.number : x.text.localeCompare(y.text);
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
