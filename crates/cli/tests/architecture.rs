//! The shape of the code, checked from its source: no import circle inside any crate
//! (between files, and between a crate's top-level folders), and in the runner no file
//! over 600 lines and no function over 80. An import is a `crate::…`, `super::…` or
//! `self::…` path, or a path through a child module a file declares (`core::Loop`), in
//! code outside tests and comments.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `.rs` files of a crate's `src`, by path relative to it, without their tests.
fn sources(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "tests") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap_or(&p).display().to_string();
                if rel == "tests.rs" || rel.ends_with("/tests.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                out.insert(rel, code_of(&text));
            }
        }
    }
    out
}

/// The code: no `#[cfg(test)]` tail, no comments.
fn code_of(text: &str) -> String {
    let text = text.find("#[cfg(test)]").map_or(text, |i| &text[..i]);
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a/b/mod.rs` → [a, b]; `a/c.rs` → [a, c]; `lib.rs` → [].
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Identifier paths after `prefix` in `code` (`crate::a::b` → ["a", "b"]).
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        let after = &rest[i + prefix.len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let path: Vec<&str> = after
            .split("::")
            .map_while(|seg| {
                let end = seg
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(seg.len());
                let id = &seg[..end];
                (!id.is_empty()).then_some((id, end == seg.len()))
            })
            .scan(true, |go, (id, whole)| {
                let take = *go;
                *go = whole;
                take.then_some(id)
            })
            .collect();
        // A `{a, b::c}` group after the prefix: each of its paths.
        let group = after.strip_prefix('{').or_else(|| {
            let joined = path.join("::");
            after[joined.len()..].strip_prefix("::{")
        });
        if let Some(g) = group {
            let inner = g.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                let mut p = path.clone();
                p.extend(
                    item.split("::")
                        .map(str::trim)
                        .filter(|s| !s.is_empty() && *s != "self"),
                );
                out.push(p);
            }
        }
        out.push(path);
    }
    out
}

/// The file a module path names (the longest prefix that is a module of the crate).
fn resolve<'a>(mods: &'a BTreeMap<Vec<String>, String>, path: &[String]) -> Option<&'a String> {
    (1..=path.len()).rev().find_map(|n| mods.get(&path[..n]))
}

/// Import edges between the files of `src`.
fn imports(src: &Path) -> (BTreeMap<String, String>, BTreeMap<String, BTreeSet<String>>) {
    let files = sources(src);
    let mods: BTreeMap<Vec<String>, String> =
        files.keys().map(|r| (module_path(r), r.clone())).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, code) in &files {
        let here = module_path(rel);
        let parent: Vec<String> = here[..here.len().saturating_sub(1)].to_vec();
        let mut targets = Vec::new();
        for p in paths_after(code, "crate::") {
            targets.push(p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        }
        for p in paths_after(code, "super::") {
            let mut t = parent.clone();
            t.extend(p.iter().map(|s| s.to_string()));
            targets.push(t);
        }
        for p in paths_after(code, "self::") {
            let mut t = here.clone();
            t.extend(p.iter().map(|s| s.to_string()));
            targets.push(t);
        }
        for child in declared_children(code) {
            if !paths_after(code, &format!("{child}::")).is_empty() {
                let mut t = here.clone();
                t.push(child);
                targets.push(t);
            }
        }
        for t in targets {
            if let Some(f) = resolve(&mods, &t).filter(|f| *f != rel) {
                edges.entry(rel.clone()).or_default().insert(f.clone());
            }
        }
    }
    (files, edges)
}

/// `mod x;` declarations.
fn declared_children(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub(crate) ")
                .or(l.strip_prefix("pub "))
                .unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// The strongly connected groups of more than one node (Tarjan).
fn circles(nodes: &[String], edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_string(), t.next);
        t.low.insert(v.to_string(), t.next);
        t.next += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        for w in t.edges.get(v).cloned().unwrap_or_default() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                c.push(w);
                if done {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn crates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .expect("crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn no_import_circle_in_any_crate() {
    let mut found = Vec::new();
    for src in crates() {
        let (files, edges) = imports(&src);
        let names: Vec<String> = files.keys().cloned().collect();
        for c in circles(&names, &edges) {
            found.push(format!("{}: files {c:?}", src.display()));
        }
        // Between a crate's top-level folders (and its root files).
        let unit = |f: &str| {
            f.split('/')
                .next()
                .unwrap_or(f)
                .trim_end_matches(".rs")
                .to_string()
        };
        let mut units: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, bs) in &edges {
            for b in bs {
                if unit(a) != unit(b) {
                    units.entry(unit(a)).or_default().insert(unit(b));
                }
            }
        }
        let all: Vec<String> = files
            .keys()
            .map(|f| unit(f))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for c in circles(&all, &units) {
            found.push(format!("{}: folders {c:?}", src.display()));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_runner_has_no_long_file_or_function() {
    let src = crates_dir().join("runner/src");
    let mut found = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("runner/src").flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "tests") {
                    stack.push(p);
                }
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap_or(&p).display().to_string();
            if rel.ends_with("tests.rs") || rel == "testing.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let lines = text.lines().count();
            if lines > 600 {
                found.push(format!("{rel}: {lines} lines (at most 600)"));
            }
            for (name, n) in long_functions(&code_of(&text), 80) {
                found.push(format!("{rel}: fn {name}: {n} lines (at most 80)"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Functions of more than `max` lines: from the `fn` line to the line that closes it.
fn long_functions(code: &str, max: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub(super) "))
            .or(t.strip_prefix("pub "))
            .unwrap_or(t);
        let t = t.strip_prefix("const ").unwrap_or(t);
        let t = t.strip_prefix("unsafe ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut depth = 0i32;
        let mut opened = false;
        for (j, body) in lines.iter().enumerate().skip(i) {
            for c in body.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if !opened && body.trim_end().ends_with(';') {
                break;
            }
            if opened && depth <= 0 {
                if j - i + 1 > max {
                    out.push((name.clone(), j - i + 1));
                }
                break;
            }
        }
    }
    out
}

#[test]
fn the_checks_see_a_circle_and_a_long_function() {
    let d = std::env::temp_dir().join(format!("ioscope-arch-{}", std::process::id()));
    std::fs::create_dir_all(d.join("a")).expect("tmp");
    std::fs::write(d.join("lib.rs"), "mod a;\nmod b;\n").expect("write");
    std::fs::write(d.join("a/mod.rs"), "use crate::b::B;\npub struct A;\n").expect("write");
    std::fs::write(
        d.join("b.rs"),
        "use crate::a::A; // a comment: crate::nothing\npub struct B;\n",
    )
    .expect("write");
    let (files, edges) = imports(&d);
    let names: Vec<String> = files.keys().cloned().collect();
    assert_eq!(circles(&names, &edges).len(), 1, "{edges:?}");
    let body = format!(
        "fn long() {{\n{}}}\nfn short() {{}}\n",
        "    x();\n".repeat(80)
    );
    assert_eq!(long_functions(&body, 80), [("long".to_string(), 82)]);
    let _ = std::fs::remove_dir_all(&d);
}
