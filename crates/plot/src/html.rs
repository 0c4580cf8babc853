//! One self-contained HTML page: inline CSS, interactive charts (Apache ECharts and
//! ioscope's own glue, both inlined) or inline SVG, and nothing fetched, so a report
//! can be mailed, archived or opened offline.

use crate::Figure;
use std::fmt::Write;

/// A page: a title, a metadata list, then sections in order.
pub struct Page {
    title: String,
    meta: Vec<(String, String)>,
    body: String,
    /// Interactive charts so far (their ids are `chart-N`).
    charts: usize,
}

impl Page {
    pub fn new(title: impl Into<String>) -> Page {
        Page {
            title: title.into(),
            meta: Vec::new(),
            body: String::new(),
            charts: 0,
        }
    }

    /// A `key: value` line in the metadata list under the title.
    pub fn meta(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Page {
        self.meta.push((key.into(), value.into()));
        self
    }

    pub fn heading(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.body, "<h2>{}</h2>", escape(text));
        self
    }

    pub fn para(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
        self
    }

    /// A warning set apart (the scheduler ignores priorities: the numbers mean little).
    pub fn warning(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(
            self.body,
            "<p class=\"warning\"><b>Warning:</b> {}</p>",
            escape(text)
        );
        self
    }

    /// Lines of preformatted text (a terminal table as printed).
    pub fn pre(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
        self
    }

    /// A table; cells that parse as numbers are right-aligned.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) -> &mut Page {
        self.body.push_str("<div class=\"table\"><table>\n<tr>");
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr>\n");
        for r in rows {
            self.body.push_str("<tr>");
            for c in r {
                let num = looks_numeric(c);
                let class = if num { " class=\"n\"" } else { "" };
                let _ = write!(self.body, "<td{class}>{}</td>", escape(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table></div>\n");
        self
    }

    /// An SVG document (a [`crate::Figure`]'s), inlined in a figure with a caption.
    pub fn svg(&mut self, svg: &str, caption: &str) -> &mut Page {
        let svg = match svg.find("<svg") {
            Some(i) => &svg[i..],
            None => svg,
        };
        let _ = writeln!(
            self.body,
            "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
            escape(caption)
        );
        self
    }

    /// A figure as interactive charts, one per panel, side by side where the window
    /// is wide enough (small multiples), with `subtitle` (the workload, the device)
    /// under every chart's title and a caption under them all.
    pub fn figure(&mut self, fig: &Figure, subtitle: &str, caption: &str) -> &mut Page {
        let wide = if fig.panels.len() > 1 { " facets" } else { "" };
        let _ = writeln!(self.body, "<figure class=\"charts{wide}\">");
        for panel in &fig.panels {
            self.charts += 1;
            let id = format!("chart-{}", self.charts);
            let spec = crate::interactive::option(panel, subtitle).to_string();
            // JSON inside <script> must not close it.
            let spec = spec.replace("</", "<\\/");
            let _ = writeln!(
                self.body,
                "<div class=\"cell\"><div class=\"chart\" data-spec=\"{id}\" style=\"height:{}px\"></div></div>\n<script type=\"application/json\" id=\"{id}\">{spec}</script>",
                fig.panel_height
            );
        }
        let _ = writeln!(
            self.body,
            "<figcaption>{}</figcaption>\n</figure>",
            escape(caption)
        );
        self
    }

    /// The whole document.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let t = escape(&self.title);
        let _ = writeln!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{t}</h1>"
        );
        if !self.meta.is_empty() {
            out.push_str("<dl class=\"meta\">\n");
            for (k, v) in &self.meta {
                let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
            }
            out.push_str("</dl>\n");
        }
        out.push_str(&self.body);
        if self.charts > 0 {
            let _ = writeln!(
                out,
                "<script type=\"application/octet-stream\" id=\"ioscope-echarts\">{ECHARTS_GZ}</script>\n<script>{LOADER}</script>\n<script>{GLUE}</script>"
            );
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// Apache ECharts 6.1.0, minified, as published on npm (Apache-2.0; its LICENSE and
/// NOTICE are beside it in assets/echarts/), gzipped and base64-encoded by build.rs.
const ECHARTS_GZ: &str = include_str!(concat!(env!("OUT_DIR"), "/echarts.min.js.gz.b64"));
/// Unpacks ECharts in the page.
const LOADER: &str = include_str!("../assets/loader.js");
/// ioscope's glue between the options and ECharts.
const GLUE: &str = include_str!("../assets/charts.js");

const CSS: &str = "body{font-family:sans-serif;margin:2em;max-width:1400px;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 8px}\
th{background:#f0f0f0;position:sticky;top:0}div.table{overflow:auto;max-height:70vh;margin:1em 0}td.n{text-align:right;font-variant-numeric:tabular-nums}\
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:bold}\
dd{margin:0}figure{margin:1em 0}svg{max-width:100%;height:auto}pre{background:#f7f7f7;padding:8px;overflow-x:auto}\
figure.charts{margin:1.5em 0}figure.facets{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:8px 16px}\
figure.facets figcaption{grid-column:1/-1}div.cell{min-width:0}div.chart{width:100%}\
p.warning{background:#fff4e5;border-left:4px solid #e69f00;padding:8px 12px}div.switches{text-align:right;font-size:12px}div.switches button{margin-left:6px;font-size:12px}";

fn looks_numeric(s: &str) -> bool {
    let t = s.trim().trim_start_matches(['+', '-']);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// Text made safe for HTML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_inlines() {
        let mut p = Page::new("a <b> & c");
        p.meta("kernel", "6.1")
            .table(&["job", "bw"], &[vec!["x<y".into(), "12.5".into()]]);
        p.svg("<?xml version=\"1.0\"?><svg width=\"1\"></svg>", "cap");
        let h = p.render();
        assert!(h.contains("<title>a &lt;b&gt; &amp; c</title>"));
        assert!(h.contains("<td>x&lt;y</td><td class=\"n\">12.5</td>"));
        assert!(h.contains("<figure>\n<svg width=\"1\"></svg>"));
        assert!(!h.contains("<?xml"));
        assert!(!h.contains("<script"));
    }
}
