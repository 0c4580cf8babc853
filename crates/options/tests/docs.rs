//! docs/options.md is generated from the option table; this test fails when it is
//! stale. Regenerate with: UPDATE_DOCS=1 cargo test -p ioscope-options --test docs

use std::path::PathBuf;

#[test]
fn option_reference_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/options.md");
    let want = ioscope_options::help::markdown_reference();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).expect("write docs/options.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/options.md is stale: run `UPDATE_DOCS=1 cargo test -p ioscope-options --test docs`"
    );
}

#[test]
fn every_default_parses_and_every_name_is_unique() {
    let _ = ioscope_options::spec::defaults();
    let mut names: Vec<&str> = ioscope_options::OPTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
        .collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(n, names.len(), "an option name or alias is listed twice");
}
