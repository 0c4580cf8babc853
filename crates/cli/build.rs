//! What `ioscope --version` says of the build: the commit it was built from and when.
//! `IOSCOPE_COMMIT` overrides the commit (a build from a tarball has no git);
//! `SOURCE_DATE_EPOCH` fixes the date (reproducible builds).

use std::path::Path;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let commit = std::env::var("IOSCOPE_COMMIT")
        .ok()
        .or_else(|| git(&dir, &["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=IOSCOPE_COMMIT={commit}");
    println!("cargo:rerun-if-env-changed=IOSCOPE_COMMIT");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A new commit rebuilds this crate (and only then: the date is the build's).
    if let Some(git_dir) = git(&dir, &["rev-parse", "--absolute-git-dir"]) {
        let g = Path::new(&git_dir);
        println!("cargo:rerun-if-changed={}", g.join("HEAD").display());
        if let Some(head) = git(&dir, &["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", g.join(head).display());
        }
        println!("cargo:rerun-if-changed={}", g.join("packed-refs").display());
    }
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    println!("cargo:rustc-env=IOSCOPE_BUILD_DATE={}", date(secs));
}

fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// `YYYY-MM-DD` (UTC) of a Unix time: the civil date of its day number.
fn date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    // Days since 0000-03-01, in 400-year eras of 146097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
