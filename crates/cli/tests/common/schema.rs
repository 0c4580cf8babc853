//! Every JSON document the tests see is checked against its schema in docs/schema
//! (ioscope's own documents, and the "ioscope" key it adds to fio's): [`check_output`]
//! for a command's stdout (by the command line), [`check`] for a document read from a
//! file (by what it carries).

use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema")
}

/// The compiled validator of docs/schema/NAME.schema.json (compiled once per process).
fn validator(name: &str) -> std::sync::Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, std::sync::Arc<jsonschema::Validator>>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache.lock().unwrap_or_else(|p| p.into_inner());
    c.entry(name.to_string())
        .or_insert_with(|| {
            let path = schema_dir().join(format!("{name}.schema.json"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let schema: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
            let v = jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{}: not a schema: {e}", path.display()));
            std::sync::Arc::new(v)
        })
        .clone()
}

/// Assert `doc` follows schema `name`, listing every violation when it does not.
pub fn validate(name: &str, doc: &Value) {
    let v = validator(name);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(20)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "document does not follow docs/schema/{name}.schema.json:\n{}\ndocument: {}",
        errors.join("\n"),
        truncated(doc)
    );
}

fn truncated(doc: &Value) -> String {
    let s = doc.to_string();
    match s.char_indices().nth(2000) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The schema of what `ioscope ARGS` prints on stdout as JSON, when it is ioscope's own
/// document (None: fio's format, whose "ioscope" key [`check`] validates).
pub fn of_command(args: &[&str]) -> Option<&'static str> {
    let has = |w: &str| {
        args.iter()
            .any(|a| *a == w || a.starts_with(&format!("{w}=")))
    };
    let verb = args.get(1).copied().unwrap_or("");
    match args.first().copied().unwrap_or("") {
        "compare" => Some("compare"),
        "fairness" => Some("fairness"),
        "quick" => Some("quick"),
        "peak" => Some("peak"),
        "sweep" if verb == "plan" => Some("sweep-plan"),
        "sweep" if verb == "status" => Some("sweep-status"),
        "log" if verb == "summary" => Some("log-summary"),
        _ if has("--version") => Some("version"),
        _ if has("--dump-jobs") => Some("dump-jobs"),
        _ => None,
    }
}

/// Check a JSON document ioscope printed for `args`.
pub fn check_output(args: &[&str], doc: &Value) {
    match of_command(args) {
        Some(name) => validate(name, doc),
        None => check(doc),
    }
}

/// Check a JSON document by what it carries: a report's results table, a journal line,
/// or a fio-format document with ioscope's key (each interim report of a file of them).
pub fn check(doc: &Value) {
    if doc.get("ioscope_report").is_some() {
        validate("report-results", doc);
    } else if doc.get("event").is_some() && doc.get("jobs").is_none() {
        validate("sweep-journal", doc);
    } else if let Some(meta) = doc.get("ioscope") {
        validate("ioscope-meta", meta);
    }
}

/// Check every JSON document in `text`: one document, or JSON Lines.
pub fn check_text(text: &str) {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        check(&v);
        return;
    }
    for l in text.lines().filter(|l| l.trim_start().starts_with('{')) {
        if let Ok(v) = serde_json::from_str::<Value>(l) {
            check(&v);
        }
    }
}
