// Unpacks the ECharts library this page carries gzipped (base64 in the
// #ioscope-echarts element) with the browser's own DecompressionStream, then runs
// it. Nothing is fetched: the page works from a file, offline.
// SPDX-License-Identifier: MIT OR Apache-2.0
(function () {
  "use strict";
  function unpack() {
    var packed = atob(document.getElementById("ioscope-echarts").textContent);
    var bytes = new Uint8Array(packed.length);
    for (var i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (code) {
      var s = document.createElement("script");
      s.textContent = code;
      document.head.appendChild(s);
    });
  }
  window.ioscopeEcharts = (typeof DecompressionStream === "function")
    ? unpack()
    : Promise.reject(new Error("this browser has no DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later draw the charts)"));
  window.ioscopeEcharts.catch(function (e) {
    var p = document.createElement("p");
    p.className = "warning";
    p.textContent = "The interactive charts cannot be drawn: " + e.message +
      ". The tables and the SVG files hold the same figures.";
    document.body.insertBefore(p, document.body.firstChild);
  });
})();
