// Draw each dashboard figure (built server-side in audit/charts.py) with the local Plotly bundle,
// when it scrolls into view.
// A click on a point opens the list it summarises (the figure's ``links``, audit/drilldown.py);
// in a narrow plot (a phone, or a half-width chart) the legend goes below the plot, the title
// shrinks and the axes keep few ticks, so nothing overlaps.
(function () {
  function isDates(values) {
    return Array.isArray(values) && values.length > 0 && /^\d{4}-\d{2}-\d{2}/.test(String(values[0]));
  }

  function narrowLayout(layout, data) {
    var out = Object.assign({}, layout);
    out.title = Object.assign({}, layout.title || {}, { font: { size: 13 }, y: 0.97, yanchor: "top", automargin: true });
    out.legend = Object.assign({}, layout.legend || {}, { orientation: "h", x: 0, xanchor: "left", y: -0.32, yanchor: "top", font: { size: 11 } });
    out.margin = { l: 44, r: 10, t: 44, b: 110 };
    out.height = Math.max(layout.height || 320, 380);
    ["xaxis", "yaxis", "yaxis2"].forEach(function (axis) {
      if (!layout[axis]) return;
      out[axis] = Object.assign({}, layout[axis], { automargin: true, tickfont: { size: 10 } });
    });
    var first = (data || [])[0] || {};
    var categories = first.orientation === "h" ? null : first.x;
    if (out.xaxis && isDates(categories)) { out.xaxis.nticks = 4; out.xaxis.tickangle = 0; }
    else if (out.xaxis && Array.isArray(categories) && categories.length > 3) { out.xaxis.tickangle = -90; }
    return out;
  }

  // Plotly (static/vendor/plotly-basic.min.js, 1.19 MB, 0.40 MB as the gzip copy WhiteNoise serves)
  // is fetched only when the first chart comes within 100 px of the viewport, and each chart is drawn
  // when it scrolls into view (IntersectionObserver): the first screen (KPI tiles, queue counts,
  // incident summary, domain table; the charts start about 1,090 px down at 1280 px wide) needs no
  // chart script at all.
  var plotlySrc = (document.currentScript && document.currentScript.getAttribute("data-plotly")) || "";
  var plotlyState = typeof window.Plotly !== "undefined" ? "ready" : "idle";
  var waiting = [];

  function withPlotly(callback) {
    if (plotlyState === "ready") { callback(); return; }
    waiting.push(callback);
    if (plotlyState === "loading") return;
    plotlyState = "loading";
    var script = document.createElement("script");
    script.src = plotlySrc;
    script.onload = function () {
      plotlyState = "ready";
      waiting.splice(0).forEach(function (fn) { fn(); });
    };
    script.onerror = function () {
      plotlyState = "idle";
      document.querySelectorAll(".plot[data-figure]:not([data-drawn])").forEach(function (el) {
        el.setAttribute("data-error", "true");
        el.textContent = "The chart could not be drawn (its script did not load); its data is in the table below.";
      });
    };
    document.head.appendChild(script);
  }

  function drawOne(el) {
    if (el.getAttribute("data-drawing")) return;
    el.setAttribute("data-drawing", "true");
    var narrow = window.matchMedia("(max-width: 720px)").matches;
    var key = el.id.replace(/^chart-/, "");
    var fig = JSON.parse(document.getElementById(key).textContent);
    var compact = narrow || el.clientWidth < 720;
    var layout = compact ? narrowLayout(fig.layout, fig.data) : fig.layout;
    Plotly.newPlot(el, fig.data, layout, { displaylogo: false, responsive: true, displayModeBar: narrow ? false : "hover" }).then(function () {
      el.setAttribute("data-drawn", "true");
      el.on("plotly_click", function (event) {
        var point = event.points && event.points[0];
        var links = fig.links && point ? fig.links[point.curveNumber] : null;
        var url = links ? links[point.pointNumber] : null;
        if (url) window.location.assign(url);
      });
    });
  }

  function start() {
    var plots = document.querySelectorAll(".plot[data-figure]");
    if (!("IntersectionObserver" in window)) {
      withPlotly(function () { plots.forEach(drawOne); });
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        withPlotly(function () { drawOne(entry.target); });
      });
    }, { rootMargin: "100px 0px" });
    plots.forEach(function (el) { observer.observe(el); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
