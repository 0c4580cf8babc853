//! Graphs and HTML are checked by rendering them in headless Chromium, not by existence:
//! the page is loaded with a probe script appended (a copy; the report itself has no
//! script), which measures every `<svg>` and counts its drawn elements with a non-empty
//! bounding box; the DOM is dumped and the measurements read back. A screenshot of the
//! page is kept in `<target dir>/test-artefacts/` and must not be blank.
//!
//! Needs `Prereq::CHROMIUM` (the caller's `require!`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `<svg>` as the browser laid it out.
#[derive(Debug)]
pub struct SvgBox {
    pub width: f64,
    pub height: f64,
    /// Shapes and texts with a non-empty bounding box.
    pub drawn: usize,
    /// The texts drawn, in document order (titles, axis labels, legends).
    pub texts: Vec<String>,
}

/// What Chromium made of a page.
#[derive(Debug)]
pub struct Rendered {
    pub svgs: Vec<SvgBox>,
    pub screenshot: PathBuf,
    /// Share of the screenshot's pixels that are not white.
    pub ink: f64,
}

const PROBE: &str = r#"<script>
// After the page's charts are drawn (an interactive page unpacks ECharts first).
Promise.resolve(window.ioscopeReady).then(() => {
  const out = [...document.querySelectorAll('svg')].map(s => {
    const r = s.getBoundingClientRect();
    let drawn = 0; const texts = [];
    s.querySelectorAll('rect,path,polyline,polygon,line,circle,text').forEach(e => {
      const b = e.getBBox();
      if (b.width > 0 || b.height > 0) drawn++;
      if (e.tagName === 'text' && e.textContent.trim()) texts.push(e.textContent.trim());
    });
    return {width: r.width, height: r.height, drawn, texts};
  });
  const p = document.createElement('pre');
  p.id = 'render-probe';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>"#;

fn chromium(args: &[&str]) -> std::process::Output {
    let _one = super::browser::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let profile = tempfile::tempdir().expect("profile dir");
    let profile_arg = format!("--user-data-dir={}", profile.path().display());
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            // Wait for the page's own promises (an interactive page unpacks ECharts
            // after its load event) before dumping or taking the screenshot.
            "--virtual-time-budget=10000",
            &profile_arg,
        ])
        .args(args)
        .output()
        .expect("run chromium")
}

/// Render an HTML file; `name` names the screenshot.
pub fn render_html(page: &Path, name: &str) -> Rendered {
    let html = std::fs::read_to_string(page).expect("read page");
    let probe_page = page.with_extension("probe.html");
    let with_probe = match html.rfind("</body>") {
        Some(i) => format!("{}{PROBE}{}", &html[..i], &html[i..]),
        None => format!("{html}{PROBE}"),
    };
    std::fs::write(&probe_page, with_probe).expect("write probe page");
    let url = format!("file://{}", probe_page.display());
    let out = chromium(&["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"render-probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| {
            panic!(
                "chromium did not run the probe on {}: {}",
                page.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).expect("probe JSON");
    let svgs = v
        .as_array()
        .expect("probe array")
        .iter()
        .map(|s| SvgBox {
            width: s["width"].as_f64().unwrap_or(0.0),
            height: s["height"].as_f64().unwrap_or(0.0),
            drawn: s["drawn"].as_u64().unwrap_or(0) as usize,
            texts: s["texts"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let _ = std::fs::remove_file(&probe_page);
    let screenshot = artefacts().join(format!("{name}.png"));
    let shot_arg = format!("--screenshot={}", screenshot.display());
    let url = format!("file://{}", page.display());
    let out = chromium(&[&shot_arg, "--window-size=1200,2400", &url]);
    assert!(
        screenshot.is_file(),
        "chromium took no screenshot of {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let ink = ink(&screenshot);
    Rendered {
        svgs,
        screenshot,
        ink,
    }
}

/// Render a standalone SVG file, inlined in a page of its own.
pub fn render_svg(svg: &Path, name: &str) -> Rendered {
    let text = std::fs::read_to_string(svg).expect("read svg");
    let page = svg.with_extension("svg.html");
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body style=\"margin:0\">{text}</body></html>"),
    )
    .expect("write page");
    let r = render_html(&page, name);
    let _ = std::fs::remove_file(&page);
    r
}

impl Rendered {
    /// Every SVG has a size and at least `min_drawn` visible elements, and the page is
    /// not blank.
    pub fn assert_drawn(&self, what: &str, min_drawn: usize) {
        assert!(!self.svgs.is_empty(), "{what}: no <svg> rendered");
        for (i, s) in self.svgs.iter().enumerate() {
            assert!(
                s.width > 100.0 && s.height > 100.0 && s.drawn >= min_drawn,
                "{what}: svg {i} rendered as {s:?} (want >= {min_drawn} drawn elements)"
            );
        }
        assert!(
            self.ink > 0.01,
            "{what}: the screenshot {} is blank ({:.4} ink)",
            self.screenshot.display(),
            self.ink
        );
    }

    /// All texts of all SVGs.
    pub fn texts(&self) -> Vec<&str> {
        self.svgs
            .iter()
            .flat_map(|s| s.texts.iter().map(String::as_str))
            .collect()
    }
}

/// `<target dir>/test-artefacts`, created.
pub fn artefacts() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let d = tmp.parent().unwrap_or(tmp).join("test-artefacts");
    std::fs::create_dir_all(&d).expect("artefacts dir");
    d
}

/// The share of non-white pixels in a PNG.
fn ink(png_path: &Path) -> f64 {
    let file = std::fs::File::open(png_path).expect("open screenshot");
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let channels = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let total = px.len() / channels;
    let inked = px
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&c| c < 240))
        .count();
    inked as f64 / total.max(1) as f64
}
