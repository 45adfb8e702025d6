/* agentevals view: draws each <div data-chart="key" data-kind="..."> from the page's JSON data
   (<script type="application/json" id="chart-data">) with uPlot, on the axes the data gives (its
   "window" of x, its "range" of y: see _axes.py), with a dashed line at each of its "marks" (where the
   scorer's version changed). After drawing, the element's data-points attribute holds the number of
   points drawn, data-marks the marks in view and data-scale-KEY each scale's "min max" as drawn. */
(function () {
  "use strict";
  var element = document.getElementById("chart-data");
  var data = element ? JSON.parse(element.textContent || "{}") : {};
  var css = getComputedStyle(document.documentElement);
  function color(name) { return css.getPropertyValue(name).trim(); }
  var axis = { stroke: color("--muted"), grid: { stroke: color("--line"), width: 1 }, ticks: { stroke: color("--line") } };
  function clean(values) { return values.map(function (v) { return v === null || v === undefined ? null : v; }); }
  function count(values) { return values.filter(function (v) { return v !== null; }).length; }
  function width(el, least) { return Math.max(el.clientWidth || el.parentElement.clientWidth || 300, least || 120); }
  function flat(values) {  // a line of equal values sits mid-height, not on an edge
    var known = values.filter(function (v) { return v !== null; });
    var lo = Math.min.apply(null, known), hi = Math.max.apply(null, known);
    return known.length && lo === hi ? [lo - 1, hi + 1] : null;
  }
  function fmt(v) { return v === null || v === undefined ? "–" : (Math.round(v * 1000) / 1000).toString(); }
  // The x axis spans the data's window when it shows all the data (drawn, or reset by a double
  // click); a zoom (a drag) shows what was chosen.
  function windowed(win) {
    return function (u, lo, hi) {
      var xs = u.data[0];
      return win && lo <= xs[0] && hi >= xs[xs.length - 1] ? win.slice() : [lo, hi];
    };
  }
  var whole = [1, 2, 5].reduce(function (all, m) {  // tick steps of a count axis: no 0.5 records
    for (var p = 1; p <= 1e12; p *= 10) { all.push(m * p); }
    return all;
  }, []).sort(function (a, b) { return a - b; });

  var kinds = {  // each: the uPlot options, data and number of points drawn of one chart
    spark: function (el, d) {
      var xs = d.x, ys = clean(d.y);
      if (xs.length === 1) { xs = d.window; ys = [ys[0], ys[0]]; }  // one day: a flat line across its window
      var opts = { width: width(el, 40), height: 36, legend: { show: false }, cursor: { show: false },
        scales: flat(ys) ? { x: { time: true }, y: { range: flat(ys) } } : { x: { time: true } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke: color("--accent"), width: 1.5, points: { show: false } }] };
      return { opts: opts, data: [xs, ys], points: count(d.y) };
    },
    trend: function (el, d) {
      var opts = { width: width(el), height: 260, scales: { x: { time: true, range: windowed(d.window) } }, axes: [axis, axis],
        series: [{}, { label: "p10", stroke: color("--band"), value: function (u, v) { return fmt(v); } },
          { label: "p90", stroke: color("--band"), value: function (u, v) { return fmt(v); } },
          { label: "p50", stroke: color("--alt"), width: 1.5, dash: [4, 3], value: function (u, v) { return fmt(v); } },
          { label: "mean", stroke: color("--accent"), width: 2, value: function (u, v) { return fmt(v); } }],
        bands: [{ series: [2, 1], fill: color("--band") }] };
      return { opts: opts, data: [d.x, clean(d.p10), clean(d.p90), clean(d.p50), clean(d.mean)], points: count(d.mean) };
    },
    histogram: function (el, d) {
      var bars = uPlot.paths.bars({ size: [0.9, 80], align: 1 });
      var opts = { width: width(el), height: 220,
        scales: { x: { time: false, range: windowed(d.window) }, y: { range: d.range } },
        axes: [axis, Object.assign({}, axis, { incrs: whole })], legend: { show: true },
        series: [{ label: "score ≥", value: function (u, v) { return fmt(v); } },
          { label: "records", fill: color("--band"), stroke: color("--accent"), paths: bars, points: { show: false } }] };
      return { opts: opts, data: [d.x, d.y], points: d.y.length };
    },
    cost: function (el, d) {
      var opts = { width: width(el), height: 220,
        scales: { x: { time: true, range: windowed(d.window) }, y: { range: d.range }, tokens: { range: d.tokens_range } },
        axes: [axis, axis, { side: 1, scale: "tokens", size: 64, incrs: whole, grid: { show: false }, stroke: color("--muted") }],
        series: [{}, { label: "cost $", stroke: color("--accent"), width: 2, value: function (u, v) { return v === null ? "–" : "$" + v.toFixed(4); } },
          { label: "tokens", stroke: color("--alt"), scale: "tokens", width: 1.5 }] };
      return { opts: opts, data: [d.x, clean(d.cost), clean(d.tokens)], points: d.x.length };
    },
    compare: function (el, d) {
      var xs = d.labels.map(function (_, i) { return i; });
      var bars = uPlot.paths.bars({ size: [0.35, 60], align: 1 });
      var top = Math.max.apply(null, [1].concat(clean(d.a), clean(d.b)).filter(function (v) { return v !== null; }));
      var bottom = Math.min.apply(null, [0].concat(clean(d.a), clean(d.b)).filter(function (v) { return v !== null; }));
      var opts = { width: width(el), height: 240, scales: { x: { time: false, range: [-0.6, xs.length - 0.4] }, y: { range: [bottom, top] } },
        axes: [Object.assign({}, axis, { values: function (u, ticks) { return ticks.map(function (t) { return d.labels[t] || ""; }); }, splits: function () { return xs; } }), axis],
        series: [{ label: "scorer", value: function (u, v) { return d.labels[v] || ""; } },
          { label: "A", fill: color("--muted"), stroke: color("--muted"), paths: uPlot.paths.bars({ size: [0.35, 60], align: -1 }), points: { show: false } },
          { label: "B", fill: color("--accent"), stroke: color("--accent"), paths: bars, points: { show: false } }] };
      return { opts: opts, data: [xs, clean(d.a), clean(d.b)], points: xs.length };
    }
  };

  function noted(el) {  // each scale's span as drawn, on the element (what the axes show)
    return function (u, key) { el.setAttribute("data-scale-" + key, u.scales[key].min + " " + u.scales[key].max); };
  }
  // A dashed line where the scorer's version changed (the data's "marks": x and a short label, drawn
  // beside the line unless the chart is a sparkline); data-marks holds how many are in view.
  function marked(el, marks, labelled) {
    return function (u) {
      var ctx = u.ctx, px = uPlot.pxRatio, shown = 0;
      ctx.save();
      ctx.strokeStyle = ctx.fillStyle = color("--alt");
      ctx.lineWidth = px;
      ctx.setLineDash([4 * px, 3 * px]);
      ctx.font = 11 * px + "px system-ui, sans-serif";
      ctx.textBaseline = "top";
      (marks || []).forEach(function (m) {
        if (m.x < u.scales.x.min || m.x > u.scales.x.max) { return; }
        var x = Math.round(u.valToPos(m.x, "x", true));
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        if (labelled) { ctx.fillText(m.label, x + 3 * px, u.bbox.top + 2 * px); }
        shown += 1;
      });
      ctx.restore();
      el.setAttribute("data-marks", String(shown));
    };
  }

  var drawn = [];
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var d = data[el.getAttribute("data-chart")];
    var kind = kinds[el.getAttribute("data-kind")];
    if (!d || !kind) { el.setAttribute("data-points", "0"); return; }
    var made = kind(el, d);
    made.opts.hooks = { setScale: [noted(el)], draw: [marked(el, d.marks, el.getAttribute("data-kind") !== "spark")] };
    var plot = new uPlot(made.opts, made.data, el);
    el.setAttribute("data-points", String(made.points));
    drawn.push({ el: el, plot: plot, least: el.getAttribute("data-kind") === "spark" ? 40 : 120 });
  });
  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      drawn.forEach(function (c) { c.plot.setSize({ width: width(c.el, c.least), height: c.plot.height }); });
    }, 100);
  });
})();
