"""The timeline page's zoom and pan: a small inline script, no library and no network. The page
is drawn whole without it (the script only moves what is there), so it still shows where
scripts do not run.

The SVG (id "timeline") carries the plot's left edge, width and span (ns) as data attributes;
every element that sits at a time carries data-s (and rects data-e), in ns from the first
record. Wheel: zoom about the pointer; drag: pan; double-click or the reset button: all.
"""

SCRIPT = r"""(function () {
  var svg = document.getElementById("timeline");
  if (!svg) return;
  var left = +svg.dataset.left, width = +svg.dataset.plotWidth, span = +svg.dataset.span;
  var total = +svg.dataset.viewWidth, bottom = +svg.dataset.height;
  var ticks = document.getElementById("ticks"), items = svg.querySelectorAll("[data-s]");
  var v0 = 0, v1 = span, NS = svg.namespaceURI;
  function x(ns) { return left + (ns - v0) * width / (v1 - v0); }
  function tick(spanUs) {
    var raw = spanUs / 10, step = Math.pow(10, Math.floor(Math.log10(raw)));
    return [1, 2, 5, 10].map(function (m) { return m * step; })
                        .filter(function (s) { return s >= raw; })[0];
  }
  function add(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    ticks.appendChild(e);
  }
  function draw() {
    for (var i = 0; i < items.length; i++) {
      var e = items[i], s = +e.dataset.s;
      if (e.tagName === "rect") {
        e.setAttribute("x", x(s).toFixed(2));
        e.setAttribute("width", Math.max((+e.dataset.e - s) * width / (v1 - v0), 1).toFixed(2));
      } else if (e.tagName === "line") {
        e.setAttribute("x1", x(s).toFixed(2));
        e.setAttribute("x2", x(s).toFixed(2));
      } else {
        e.setAttribute("x", (x(s) + 3).toFixed(2));
      }
    }
    while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
    var step = tick((v1 - v0) / 1000);
    for (var t = Math.ceil(v0 / 1000 / step) * step; t * 1000 <= v1; t += step) {
      var tx = x(t * 1000).toFixed(1);
      add("line", {x1: tx, y1: 24, x2: tx, y2: bottom, stroke: "#ccc"});
      add("text", {x: tx, y: 20, "text-anchor": "middle"}, +t.toPrecision(6) + " us");
    }
  }
  function at(event) {  // the pointer's time, and its x in SVG units
    var box = svg.getBoundingClientRect(), px = (event.clientX - box.left) * total / box.width;
    return [v0 + (px - left) * (v1 - v0) / width, px];
  }
  function show(a, b) {
    var w = Math.min(Math.max(b - a, 1), span);
    a = Math.min(Math.max(a, 0), span - w);
    v0 = a; v1 = a + w; draw();
  }
  svg.addEventListener("wheel", function (event) {
    event.preventDefault();
    var t = at(event)[0], f = event.deltaY < 0 ? 0.8 : 1.25;
    show(t - (t - v0) * f, t + (v1 - t) * f);
  }, {passive: false});
  var drag = null;
  svg.addEventListener("mousedown", function (event) { drag = [at(event)[1], v0, v1]; });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (event) {
    if (!drag) return;
    var shift = (at(event)[1] - drag[0]) * (drag[2] - drag[1]) / width;
    show(drag[1] - shift, drag[2] - shift);
  });
  svg.addEventListener("dblclick", function () { show(0, span); });
  document.getElementById("zoom-in").onclick = function () {
    var m = (v0 + v1) / 2, h = (v1 - v0) * 0.4; show(m - h, m + h); };
  document.getElementById("zoom-out").onclick = function () {
    var m = (v0 + v1) / 2, h = (v1 - v0) * 0.625; show(m - h, m + h); };
  document.getElementById("zoom-reset").onclick = function () { show(0, span); };
  draw();
})();"""
