// ioscope's report charts: each <div class="chart"> names a JSON ECharts option,
// built by ioscope_plot::interactive, which this script completes (number formats,
// whiskers, log/linear switches) and hands to ECharts once loader.js has unpacked
// it. Nothing is fetched.
// SPDX-License-Identifier: MIT OR Apache-2.0
(function () {
  "use strict";
  var nf = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4 });
  function fmt(v) {
    if (Array.isArray(v)) v = v[1];
    if (v === null || v === undefined || typeof v !== "number" || !isFinite(v)) return "-";
    return nf.format(v);
  }

  // A whisker (an interval) over each bar of a grouped bar series; ECharts lays out
  // bars at barCategoryGap 20% and barGap 30%, which the offsets follow.
  function whiskers(bar, index, count) {
    return {
      type: "custom", name: bar.name, silent: true, z: 10, tooltip: { show: false },
      data: bar.ioscopeWhiskers,
      // Both ends count for the y axis's extent: no whisker runs off the chart.
      encode: { x: 0, y: [1, 2] },
      renderItem: function (params, api) {
        var c = api.value(0);
        var lo = api.coord([c, api.value(1)]), hi = api.coord([c, api.value(2)]);
        var group = api.size([1, 0])[0] * 0.8;
        var w = group / (count + (count - 1) * 0.3);
        var x = lo[0] - group / 2 + index * w * 1.3 + w / 2, cap = w * 0.25;
        var st = { stroke: "#222", lineWidth: 1.5 };
        return { type: "group", children: [
          { type: "line", shape: { x1: x, y1: lo[1], x2: x, y2: hi[1] }, style: st },
          { type: "line", shape: { x1: x - cap, y1: lo[1], x2: x + cap, y2: lo[1] }, style: st },
          { type: "line", shape: { x1: x - cap, y1: hi[1], x2: x + cap, y2: hi[1] }, style: st }
        ] };
      }
    };
  }

  // The name of an x position when x holds categories (metrics, percentiles).
  function xName(opt, v) {
    var names = (opt.ioscope && opt.ioscope.xNames) || [];
    for (var i = 0; i < names.length; i++) if (Math.abs(names[i][0] - v) < 0.45) return names[i][1];
    return names.length ? "" : fmt(v);
  }

  function complete(opt) {
    opt.tooltip = opt.tooltip || {};
    opt.tooltip.valueFormatter = fmt;
    var named = opt.ioscope.xNames && opt.ioscope.xNames.length;
    if (named) {
      opt.xAxis.axisLabel.formatter = function (v) { return xName(opt, v); };
      // Dots of several series at one category: one at a time.
      opt.tooltip.trigger = "item";
    }
    var lines = opt.series.filter(function (s) { return s.type === "line"; });
    // An axis tooltip of forty lines hides the chart: past a dozen, one point at a time.
    if (lines.length > 12) opt.tooltip.trigger = "item";
    if (opt.tooltip.trigger === "item" && opt.ioscope.kind === "lines") {
      opt.tooltip.formatter = function (p) {
        return p.marker + p.seriesName + "<br>" + xName(opt, p.value[0]) +
          ": <b>" + fmt(p.value) + "</b>";
      };
    }
    if (opt.ioscope.logColour && opt.visualMap) {
      // The scale holds log10 of the values: its ends are shown as values.
      opt.visualMap.formatter = function (v) { return fmt(Math.pow(10, v)); };
    }
    if (opt.ioscope.kind === "heatmap") {
      opt.tooltip.formatter = function (p) {
        return opt.xAxis.name + " " + opt.xAxis.data[p.value[0]] + ", " + opt.yAxis.name + " " +
          opt.yAxis.data[p.value[1]] + ": <b>" + fmt(p.value[2]) + "</b>";
      };
    }
    var bars = opt.series.filter(function (s) { return s.type === "bar"; });
    bars.forEach(function (b, i) {
      if (b.ioscopeWhiskers && b.ioscopeWhiskers.length) opt.series.push(whiskers(b, i, bars.length));
    });
    return opt;
  }

  // A button that switches an axis between linear and log; a log axis shows the tail
  // (p99.9 beside p50) that a linear one flattens.
  function switcher(chart, opt, axis, label, box) {
    if (!opt[axis] || opt[axis].type === "category") return;
    if (axis === "xAxis" && opt.ioscope.xNames && opt.ioscope.xNames.length) return;
    var b = document.createElement("button");
    b.type = "button";
    var isLog = function () { return chart.getOption()[axis][0].type === "log"; };
    var show = function () { b.textContent = label + ": " + (isLog() ? "log" : "linear"); };
    b.addEventListener("click", function () {
      var o = {};
      o[axis] = isLog() ? { type: "value", min: opt[axis].min } : { type: "log", logBase: opt[axis].logBase || 10 };
      chart.setOption(o);
      show();
    });
    show();
    box.appendChild(b);
  }

  // Title and subtitle wrap to the chart's width, and the plot starts below them.
  var ruler = document.createElement("canvas").getContext("2d");
  function lines(text, px, width) {
    ruler.font = px + "px sans-serif";
    // A tenth more: lines break at words, not at the last pixel.
    return Math.max(1, Math.ceil(1.1 * ruler.measureText(text || "").width / Math.max(width, 50)));
  }
  function fit(opt, width) {
    var w = width - 70;
    var t = opt.title;
    t.textStyle = Object.assign(t.textStyle || {}, { width: w, overflow: "break", lineHeight: 20 });
    t.subtextStyle = Object.assign(t.subtextStyle || {}, { width: w, overflow: "break", lineHeight: 16 });
    // Padding, title lines, the gap, subtitle lines; then the y axis's name above the plot.
    var head = 20 + 20 * lines(t.text, 15, w) + 16 * (t.subtext ? lines(t.subtext, 12, w) : 0);
    return { title: t, grid: { top: head + 36 } };
  }

  function draw() {
    var charts = [];
    document.querySelectorAll("div.chart[data-spec]").forEach(function (div) {
      var spec = document.getElementById(div.getAttribute("data-spec"));
      var opt = complete(JSON.parse(spec.textContent));
      var chart = echarts.init(div, null, { renderer: "svg" });
      Object.assign(opt.grid, fit(opt, div.clientWidth).grid);
      chart.setOption(opt);
      chart.ioscopeFit = function () { chart.setOption(fit(opt, div.clientWidth)); chart.resize(); };
      var box = document.createElement("div");
      box.className = "switches";
      switcher(chart, opt, "xAxis", "x", box);
      switcher(chart, opt, "yAxis", "y", box);
      div.parentNode.insertBefore(box, div);
      charts.push(chart);
    });
    window.addEventListener("resize", function () { charts.forEach(function (c) { c.ioscopeFit(); }); });
    window.ioscopeCharts = charts;
  }
  // Once the loader has unpacked ECharts; resolved when every chart is drawn.
  window.ioscopeReady = (window.ioscopeEcharts || Promise.resolve()).then(draw);
})();
