//! What `ioscope --version` says: the version, the commit and date of the build, the
//! features built in and the fio it follows (`--version --json` as one document,
//! docs/schema/version.schema.json).

use serde_json::{json, Value};

/// The fio release whose behaviour and formats ioscope follows; what `fio --version`
/// prints when ioscope is invoked as `fio`.
pub const FIO_COMPAT: &str = "fio-3.42";

/// Cargo features built in.
fn features() -> Vec<&'static str> {
    let mut f = Vec::new();
    if cfg!(feature = "mpi") {
        f.push("mpi");
    }
    f
}

fn commit() -> &'static str {
    env!("IOSCOPE_COMMIT")
}

/// `ioscope-0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-26; features: mpi; follows fio-3.33)`.
pub fn line() -> String {
    let f = features();
    let short = commit().get(..12).unwrap_or(commit());
    format!(
        "ioscope-{} (commit {short}, built {}; features: {}; follows {FIO_COMPAT})",
        env!("CARGO_PKG_VERSION"),
        env!("IOSCOPE_BUILD_DATE"),
        if f.is_empty() {
            "none".to_string()
        } else {
            f.join(", ")
        },
    )
}

/// `--version --json`.
pub fn json() -> Value {
    json!({
        "name": "ioscope",
        "version": env!("CARGO_PKG_VERSION"),
        "commit": commit(),
        "build_date": env!("IOSCOPE_BUILD_DATE"),
        "features": features(),
        "fio_compat": FIO_COMPAT,
        "target": format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
    })
}
