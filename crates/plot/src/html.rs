//! One self-contained HTML page: inline CSS, inline SVG, no scripts and nothing fetched,
//! so a report can be mailed, archived or opened offline.

use std::fmt::Write;

/// A page: a title, a metadata list, then sections in order.
pub struct Page {
    title: String,
    meta: Vec<(String, String)>,
    body: String,
}

impl Page {
    pub fn new(title: impl Into<String>) -> Page {
        Page {
            title: title.into(),
            meta: Vec::new(),
            body: String::new(),
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

    /// Lines of preformatted text (a terminal table as printed).
    pub fn pre(&mut self, text: &str) -> &mut Page {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
        self
    }

    /// A table; cells that parse as numbers are right-aligned.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) -> &mut Page {
        self.body.push_str("<table>\n<tr>");
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
        self.body.push_str("</table>\n");
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
        out.push_str("</body>\n</html>\n");
        out
    }
}

const CSS: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 8px}\
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}\
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:bold}\
dd{margin:0}figure{margin:1em 0}svg{max-width:100%;height:auto}pre{background:#f7f7f7;padding:8px;overflow-x:auto}";

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
