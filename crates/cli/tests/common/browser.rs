//! The interactive reports checked in headless Chromium through the DevTools protocol
//! over a pipe (`--remote-debugging-pipe`: requests on fd 3, answers on fd 4, each a
//! JSON message ended by NUL), so no port, no WebSocket and no extra package: the page
//! is loaded as a user opens it, every console error, exception and request is
//! recorded, each chart is measured (drawn elements, texts inside the chart, texts
//! overlapping) and hovered with a real mouse event, and its tooltip read back.
//!
//! Needs `Prereq::CHROMIUM` (the caller's `require!`).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// How long one answer or event may take; a loaded 2-core machine starts Chromium in
/// a few seconds, so a minute means it is stuck.
const PATIENCE: Duration = Duration::from_secs(60);

/// One chart as laid out and hovered.
#[derive(Debug)]
pub struct ChartView {
    pub width: f64,
    pub height: f64,
    /// SVG shapes and texts with a non-empty box.
    pub drawn: usize,
    /// Visible texts (titles, axis labels, legend entries not scrolled away).
    pub texts: Vec<String>,
    /// Visible texts whose box leaves the chart's.
    pub outside: Vec<String>,
    /// Pairs of visible texts whose boxes overlap.
    pub overlaps: Vec<(String, String)>,
    /// The tooltip shown with the mouse on the chart's middle data point.
    pub hover: String,
}

/// What a page did in the browser.
#[derive(Debug)]
pub struct PageView {
    /// Console errors and uncaught exceptions.
    pub errors: Vec<String>,
    /// Every URL the page requested besides its own file.
    pub requests: Vec<String>,
    pub charts: Vec<ChartView>,
}

impl PageView {
    /// No errors, nothing fetched, `charts` charts drawn (at least `min_drawn`
    /// elements each), every text inside its chart, none overlapping, a value in every
    /// tooltip.
    pub fn assert_clean(&self, what: &str, charts: usize, min_drawn: usize) {
        assert!(
            self.errors.is_empty(),
            "{what}: console errors: {:?}",
            self.errors
        );
        assert!(
            self.requests.is_empty(),
            "{what}: requests: {:?}",
            self.requests
        );
        assert_eq!(
            self.charts.len(),
            charts,
            "{what}: charts: {:#?}",
            self.charts
        );
        for (i, c) in self.charts.iter().enumerate() {
            assert!(
                c.width > 200.0 && c.height > 200.0 && c.drawn >= min_drawn,
                "{what}: chart {i} drawn as {c:?} (want >= {min_drawn} elements)"
            );
            assert!(
                c.outside.is_empty(),
                "{what}: chart {i}: texts outside: {:?}",
                c.outside
            );
            assert!(
                c.overlaps.is_empty(),
                "{what}: chart {i}: texts overlapping: {:?}",
                c.overlaps
            );
            assert!(
                c.hover.chars().any(|ch| ch.is_ascii_digit()),
                "{what}: chart {i}: hovering a point showed no value: {:?}",
                c.hover
            );
        }
    }
}

struct Cdp {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next: u64,
    session: Option<String>,
    events: Vec<Value>,
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    unsafe {
        use std::os::fd::FromRawFd;
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    }
}

impl Cdp {
    fn start(profile: &Path, width: u32, height: u32) -> Cdp {
        let (cmd_r, cmd_w) = pipe();
        let (ans_r, ans_w) = pipe();
        let (r, w) = (cmd_r.as_raw_fd(), ans_w.as_raw_fd());
        let mut c = Command::new("chromium");
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            &format!("--window-size={width},{height}"),
            &format!("--user-data-dir={}", profile.display()),
            "about:blank",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: between fork and exec only fcntl and dup2 run (async-signal-safe).
        // The ends are first copied above fd 10, so that putting one on fd 3 cannot
        // close the other, then placed where Chromium looks (fd 3 in, fd 4 out); dup2
        // leaves the copies without CLOEXEC.
        unsafe {
            c.pre_exec(move || {
                let hr = libc::fcntl(r, libc::F_DUPFD_CLOEXEC, 10);
                let hw = libc::fcntl(w, libc::F_DUPFD_CLOEXEC, 10);
                if hr < 0 || hw < 0 || libc::dup2(hr, 3) < 0 || libc::dup2(hw, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().expect("start chromium");
        drop((cmd_r, ans_w));
        let (tx, from) = channel();
        let reader = std::fs::File::from(ans_r);
        std::thread::spawn(move || {
            let mut rd = BufReader::new(reader);
            let mut buf = Vec::new();
            while rd.read_until(0, &mut buf).map(|n| n > 0).unwrap_or(false) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                buf.clear();
            }
        });
        Cdp {
            child,
            to: std::fs::File::from(cmd_w),
            from,
            next: 0,
            session: None,
            events: Vec::new(),
        }
    }

    fn recv(&mut self, what: &str) -> Value {
        self.from
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("chromium: no answer to {what} in {PATIENCE:?}: {e}"))
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        loop {
            let v = self.recv(method);
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("chromium: {method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn wait_event(&mut self, method: &str) {
        if self.events.iter().any(|e| e["method"] == method) {
            return;
        }
        let start = Instant::now();
        loop {
            let v = self.recv(method);
            let done = v["method"] == method;
            self.events.push(v);
            if done || start.elapsed() > PATIENCE {
                return;
            }
        }
    }

    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("chromium: evaluating {expr}: {e}");
        }
        r["result"]["value"].clone()
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Measures every chart: drawn elements, visible texts (not hidden, not clipped by a
/// scrolling legend), texts outside the chart, overlapping texts.
const MEASURE: &str = r#"JSON.stringify([...document.querySelectorAll('div.chart')].map(d => {
  d.scrollIntoView();
  const r = d.getBoundingClientRect();
  const svg = d.querySelector('svg');
  let drawn = 0; const texts = [], outside = [], boxes = [], overlaps = [];
  if (svg) {
    svg.querySelectorAll('path,rect,text,circle,line,polyline').forEach(e => {
      const b = e.getBoundingClientRect(); if (b.width > 0 || b.height > 0) drawn++;
    });
    svg.querySelectorAll('text').forEach(t => {
      const s = t.textContent.trim();
      if (!s || t.closest('[clip-path]')) return;
      const cs = getComputedStyle(t);
      if (cs.display === 'none' || cs.visibility === 'hidden' || Number(cs.opacity) === 0) return;
      const b = t.getBoundingClientRect(); if (b.width === 0) return;
      texts.push(s);
      if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1) outside.push(s);
      for (const [o, ob] of boxes) {
        const w = Math.min(b.right, ob.right) - Math.max(b.left, ob.left);
        const h = Math.min(b.bottom, ob.bottom) - Math.max(b.top, ob.top);
        // A text's box is its em box: a quarter of it is leading, not ink.
        if (w > 2 && h > 0.25 * Math.min(b.height, ob.height)) overlaps.push([o, s]);
      }
      boxes.push([s, b]);
    });
  }
  return {width: r.width, height: r.height, drawn, texts, outside, overlaps};
}))"#;

/// The viewport point of chart `i`'s middle data point (scrolled into view): the ends
/// of a line sit on the grid's edge, where the pointer is outside by a rounding.
fn point_of(i: usize) -> String {
    format!(
        r#"(() => {{
  const c = window.ioscopeCharts[{i}], d = c.getDom(); d.scrollIntoView();
  const o = c.getOption();
  const s = o.series.findIndex(s => ['line', 'scatter', 'bar', 'heatmap'].includes(s.type) && s.data && s.data.some(v => v !== null));
  const data = o.series[s].data;
  const some = data.map((v, j) => v === null ? -1 : j).filter(j => j >= 0);
  const k = some[Math.floor(some.length / 2)];
  const v = data[k], y = (v && v.value !== undefined) ? v.value : v;
  const at = o.series[s].type === 'bar' ? [k, y] : [y[0], y[1]];
  const p = c.convertToPixel({{seriesIndex: s}}, at), r = d.getBoundingClientRect();
  return {{x: r.left + p[0], y: r.top + p[1]}};
}})()"#
    )
}

/// The text of chart `i`'s tooltip (ECharts puts it in a div beside the SVG's), as
/// soon as it holds a figure: the tooltip follows the mouse a frame or two later, more
/// on a loaded machine, so it is polled for up to 10 s rather than read once.
fn tooltip_of(i: usize) -> String {
    format!(
        r#"new Promise(done => {{
  const read = () => [...window.ioscopeCharts[{i}].getDom().querySelectorAll('div')]
    .filter(e => !e.querySelector('svg') && getComputedStyle(e).display !== 'none')
    .map(e => e.innerText.trim()).filter(t => t).join(' | ');
  const start = Date.now();
  const poll = () => {{
    const t = read();
    if (/[0-9]/.test(t) || Date.now() - start > 10000) done(t); else setTimeout(poll, 50);
  }};
  poll();
}})"#
    )
}

/// One Chromium at a time in this test process: a browser is a dozen processes, and
/// several at once load the machine that the real-time tests beside them measure on.
pub static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Open `page` at `width`×`height`, let it draw, hover each chart; when `shot` is
/// given, save a full-page screenshot there.
pub fn view(page: &Path, width: u32, height: u32, shot: Option<&Path>) -> PageView {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let profile = tempfile::tempdir().expect("profile dir");
    let mut b = Cdp::start(profile.path(), width, height);
    let targets = b.call("Target.getTargets", json!({}));
    let target = targets["targetInfos"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["type"] == "page"))
        .map(|t| t["targetId"].clone())
        .expect("a page target");
    let s = b.call(
        "Target.attachToTarget",
        json!({"targetId": target, "flatten": true}),
    );
    b.session = s["sessionId"].as_str().map(str::to_string);
    for domain in ["Page", "Runtime", "Log", "Network"] {
        b.call(&format!("{domain}.enable"), json!({}));
    }
    let url = format!("file://{}", page.display());
    b.events.clear();
    b.call("Page.navigate", json!({"url": url}));
    b.wait_event("Page.loadEventFired");
    // The charts are drawn once the page has unpacked ECharts (a promise it keeps).
    b.eval("Promise.resolve(window.ioscopeReady).then(() => true)");
    let measured: Value =
        serde_json::from_str(b.eval(MEASURE).as_str().unwrap_or("[]")).expect("measure");
    let mut charts = Vec::new();
    for (i, m) in measured.as_array().into_iter().flatten().enumerate() {
        let p = b.eval(&point_of(i));
        // Two moves: onto the chart, then onto the point.
        let (x, y) = (
            p["x"].as_f64().unwrap_or(0.0),
            p["y"].as_f64().unwrap_or(0.0),
        );
        for (dx, dy) in [(-3.0, -1.0), (0.0, 0.0)] {
            b.call(
                "Input.dispatchMouseEvent",
                json!({"type": "mouseMoved", "x": x + dx, "y": y + dy}),
            );
        }
        let mut hover = b.eval(&tooltip_of(i)).as_str().unwrap_or("").to_string();
        if !hover.chars().any(|c| c.is_ascii_digit()) {
            hover = format!("(nothing at {x:.0},{y:.0}: {hover:?})");
        }
        let strs = |k: &str| -> Vec<String> {
            m[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        };
        charts.push(ChartView {
            width: m["width"].as_f64().unwrap_or(0.0),
            height: m["height"].as_f64().unwrap_or(0.0),
            drawn: m["drawn"].as_u64().unwrap_or(0) as usize,
            texts: strs("texts"),
            outside: strs("outside"),
            overlaps: m["overlaps"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    (
                        p[0].as_str().unwrap_or("").into(),
                        p[1].as_str().unwrap_or("").into(),
                    )
                })
                .collect(),
            hover,
        });
    }
    if let Some(path) = shot {
        b.eval("window.scrollTo(0, 0)");
        let size = b.eval("JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight])");
        let wh: Vec<f64> =
            serde_json::from_str(size.as_str().unwrap_or("[0,0]")).unwrap_or_default();
        let shot = b.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": wh.first().copied().unwrap_or(width as f64),
                            "height": wh.get(1).copied().unwrap_or(height as f64), "scale": 1}}),
        );
        let png = base64(shot["data"].as_str().unwrap_or(""));
        std::fs::write(path, png).expect("write screenshot");
    }
    let mut errors = Vec::new();
    let mut requests = Vec::new();
    for e in &b.events {
        let p = &e["params"];
        match e["method"].as_str().unwrap_or("") {
            "Runtime.exceptionThrown" => errors.push(p["exceptionDetails"].to_string()),
            "Runtime.consoleAPICalled" if p["type"] == "error" => {
                errors.push(p["args"].to_string())
            }
            "Log.entryAdded" if p["entry"]["level"] == "error" => {
                errors.push(p["entry"]["text"].to_string())
            }
            "Network.requestWillBeSent" => {
                let u = p["request"]["url"].as_str().unwrap_or("");
                if u != url && !u.starts_with("data:") {
                    requests.push(u.to_string());
                }
            }
            _ => {}
        }
    }
    PageView {
        errors,
        requests,
        charts,
    }
}

/// Standard base64, decoded (the screenshot arrives so).
fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The ECharts options a report page embeds, in page order.
pub fn specs(html: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(html)
        .unwrap()
        .split("<script type=\"application/json\" id=\"chart-")
        .skip(1)
        .map(|s| {
            let json = &s[s.find('>').unwrap() + 1..s.find("</script>").unwrap()];
            serde_json::from_str(&json.replace("<\\/", "</")).unwrap()
        })
        .collect()
}
