// Draw each dashboard figure (built server-side in audit/charts.py) with the local Plotly bundle.
(function () {
  function draw() {
    document.querySelectorAll(".plot[data-figure]").forEach(function (el) {
      var key = el.id.replace(/^chart-/, "");
      var fig = JSON.parse(document.getElementById(key).textContent);
      var narrow = window.matchMedia("(max-width: 720px)").matches; // no tool bar over the titles on a phone
      Plotly.newPlot(el, fig.data, fig.layout, { displaylogo: false, responsive: true, displayModeBar: narrow ? false : "hover" }).then(function () {
        el.setAttribute("data-drawn", "true");
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw); else draw();
})();
