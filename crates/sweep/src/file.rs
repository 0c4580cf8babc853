//! The sweep file (TOML): a target, default options, profiles, sweeps with their axes,
//! and optional preconditioning and steady state.
//!
//! ```toml
//! [target]                    # the file, directory or device; any fio option
//! filename = "/tmp/sweep-demo/data"
//! size = "256m"
//! expect_model = "..."        # optional: refuse a disk of another model/serial
//!
//! [defaults]                  # fio options for every point, verbatim
//! ioengine = "libaio"
//!
//! [profiles.randread]         # named option sets (built-ins: see profiles.rs)
//! rw = "randread"
//!
//! [[sweep]]
//! name = "qd-by-jobs"
//! profiles = ["randread"]
//! axes = { iodepth = "pow2:1..64", numjobs = [1, 2] }
//! fixed = { bs = "4k" }       # optional
//! guard = { axis = "iodepth", metric = "iops", drop = 0.1, patience = 2, max_p99 = "2ms" }
//! ```
//!
//! Every option keeps the line it was written on, so a bad value is reported as
//! `sweep.toml:12: ...` by the same option parser a job file goes through.

use crate::axes::{self, Axis};
use crate::error::SweepError;
use crate::opt::scalar;
pub use crate::opt::Opt;
use crate::profiles;
use indexmap::IndexMap;
use ioscope_analysis::steady::Criteria;
use ioscope_analysis::sweep::{Guard, GuardMetric};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The target: where the I/O goes, and what it must be.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// fio options of the target (filename or directory, size, offset, ...).
    pub options: Vec<Opt>,
    pub expect_model: Option<String>,
    pub expect_serial: Option<String>,
    /// Permission for what destroys data beyond the points' own writes (purge).
    pub allow_destructive: bool,
    /// `warmup`: µs of the first point's workload run unmeasured before the first
    /// point of a run (0: none).
    pub warmup_us: u64,
}

/// The warm-up when the sweep file does not say.
pub const DEFAULT_WARMUP_US: u64 = 2_000_000;

/// One `[[sweep]]`.
#[derive(Clone, Debug)]
pub struct SweepDef {
    pub name: String,
    pub profiles: Vec<String>,
    pub axes: Vec<Axis>,
    pub fixed: Vec<Opt>,
    pub guard: Option<GuardDef>,
}

/// The early-stop guard of a sweep: which axis it climbs, and the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardDef {
    pub axis: String,
    pub guard: Guard,
}

/// `[precondition]`: purge, then workload-independent preconditioning.
#[derive(Clone, Debug, PartialEq)]
pub struct Precondition {
    /// `none` or `discard` (BLKDISCARD over the whole device).
    pub purge: Purge,
    /// Sequential writes over the target, `passes` times (SNIA: 2× capacity).
    pub passes: u32,
    pub bs: String,
    pub iodepth: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purge {
    None,
    Discard,
}

/// `[steady_state]`: rounds of a tracking workload until SNIA's criteria hold, or one
/// run with fio's own `ss=` for parity.
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    pub criteria: Criteria,
    /// `iops` or `bw` of the round.
    pub metric: GuardMetric,
    /// The round's workload, fio options (default: 4k randwrite QD32, 60 s).
    pub workload: Vec<Opt>,
    /// `mode = "fio"`: fio's ss= string (e.g. `iops_slope:0.3%`) instead of rounds.
    pub fio_ss: Option<String>,
}

/// The whole sweep file.
#[derive(Clone, Debug)]
pub struct SweepFile {
    pub path: PathBuf,
    /// The text, kept so a run directory records exactly what ran.
    pub text: String,
    pub target: Target,
    pub defaults: Vec<Opt>,
    pub profiles: IndexMap<String, Vec<Opt>>,
    pub sweeps: Vec<SweepDef>,
    pub precondition: Option<Precondition>,
    pub steady: Option<Steady>,
    /// `[template] file = "job.fio"`: points are this job file with `${AXIS}` replaced.
    pub template: Option<Template>,
}

/// A template job file, read once when the sweep file is (a run directory keeps a copy,
/// [`TEMPLATE_COPY`], so it reads back wherever the original went).
#[derive(Clone, Debug)]
pub struct Template {
    /// Where it was read from: relative names are relative to the sweep file.
    pub path: PathBuf,
    pub text: String,
}

/// A run directory's copy of the sweep file, and of its template.
pub const SWEEP_COPY: &str = "sweep.toml";
pub const TEMPLATE_COPY: &str = "template.fio";

type Table = IndexMap<String, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    target: Table,
    #[serde(default)]
    defaults: Table,
    #[serde(default)]
    profiles: IndexMap<String, Table>,
    #[serde(default)]
    sweep: Vec<SweepModel>,
    precondition: Option<Table>,
    steady_state: Option<Table>,
    template: Option<Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepModel {
    name: Spanned<String>,
    #[serde(default)]
    profiles: Vec<Spanned<String>>,
    #[serde(default)]
    axes: Table,
    #[serde(default)]
    fixed: Table,
    guard: Option<Table>,
}

/// Line numbers from byte offsets.
struct Lines<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Lines<'_> {
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn err(&self, offset: usize, msg: impl Into<String>) -> SweepError {
        SweepError::At {
            path: self.path.to_path_buf(),
            line: self.line(offset),
            msg: msg.into(),
        }
    }

    /// A table of fio options.
    fn options(&self, t: &Table, what: &str) -> Result<Vec<Opt>, SweepError> {
        t.iter()
            .map(|(k, v)| {
                let value = scalar(v.get_ref()).ok_or_else(|| {
                    self.err(
                        v.span().start,
                        format!("{what}.{k}: give one value (a string, number or boolean)"),
                    )
                })?;
                Ok(Opt {
                    key: k.clone(),
                    value,
                    line: self.line(v.span().start),
                })
            })
            .collect()
    }
}

impl SweepFile {
    pub fn read(path: &Path) -> Result<SweepFile, SweepError> {
        SweepFile::read_with(path, None)
    }

    /// The sweep file a run directory keeps, with the template it keeps.
    pub fn read_copy(dir: &Path) -> Result<SweepFile, SweepError> {
        let template = dir.join(TEMPLATE_COPY);
        let template = template.exists().then_some(template);
        SweepFile::read_with(&dir.join(SWEEP_COPY), template.as_deref())
    }

    /// Read `path`; its template from `template` instead of where it names, if given.
    fn read_with(path: &Path, template: Option<&Path>) -> Result<SweepFile, SweepError> {
        let text = ioscope_options::jobfile::load_text(path, "sweep file")
            .map_err(|e| SweepError::Run(e.to_string()))?;
        SweepFile::parse_with(path, &text, template)
    }

    pub fn parse(path: &Path, text: &str) -> Result<SweepFile, SweepError> {
        SweepFile::parse_with(path, text, None)
    }

    fn parse_with(
        path: &Path,
        text: &str,
        template_at: Option<&Path>,
    ) -> Result<SweepFile, SweepError> {
        let lines = Lines { path, text };
        let model: Model = toml::from_str(text).map_err(|e| {
            let off = e.span().map_or(0, |s| s.start);
            lines.err(off, e.message().to_string())
        })?;
        let target = target(&lines, &model.target)?;
        let defaults = lines.options(&model.defaults, "defaults")?;
        let mut profiles: IndexMap<String, Vec<Opt>> = profiles::builtin();
        for (name, t) in &model.profiles {
            // A profile of the file replaces a built-in one of the same name.
            profiles.insert(name.clone(), lines.options(t, &format!("profiles.{name}"))?);
        }
        let template = match &model.template {
            Some(t) => Some(template(&lines, t, path, template_at)?),
            None => None,
        };
        let sweeps = model
            .sweep
            .iter()
            .map(|s| sweep(&lines, s, &profiles, template.is_some()))
            .collect::<Result<Vec<_>, _>>()?;
        if sweeps.is_empty() {
            return Err(lines.err(
                text.len(),
                "no [[sweep]]: add one with a name, profiles and axes",
            ));
        }
        let mut names: Vec<&str> = sweeps.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(lines.err(
                0,
                format!("two sweeps are named '{}': names must differ", w[0]),
            ));
        }
        Ok(SweepFile {
            path: path.to_path_buf(),
            text: text.to_string(),
            target,
            defaults,
            profiles,
            sweeps,
            precondition: model
                .precondition
                .as_ref()
                .map(|t| precondition(&lines, t))
                .transpose()?,
            steady: model
                .steady_state
                .as_ref()
                .map(|t| steady(&lines, t))
                .transpose()?,
            template,
        })
    }
}

fn target(lines: &Lines, t: &Table) -> Result<Target, SweepError> {
    let mut out = Target {
        warmup_us: DEFAULT_WARMUP_US,
        ..Target::default()
    };
    let mut opts = Table::new();
    for (k, v) in t {
        let text = || {
            scalar(v.get_ref())
                .ok_or_else(|| lines.err(v.span().start, format!("target.{k}: give one value")))
        };
        match k.as_str() {
            "expect_model" => out.expect_model = Some(text()?),
            "expect_serial" => out.expect_serial = Some(text()?),
            "allow_destructive" => out.allow_destructive = text()? == "1",
            "warmup" => {
                out.warmup_us = ioscope_options::units::parse_time_us(&text()?, 1_000_000)
                    .map_err(|e| lines.err(v.span().start, format!("target.warmup: {e}")))?
            }
            _ => {
                opts.insert(k.clone(), v.clone());
            }
        }
    }
    out.options = lines.options(&opts, "target")?;
    if !out
        .options
        .iter()
        .any(|o| o.key == "filename" || o.key == "directory")
    {
        return Err(lines.err(0, "[target] needs filename (a file or device) or directory"));
    }
    Ok(out)
}

fn template(
    lines: &Lines,
    t: &Table,
    sweep_path: &Path,
    at: Option<&Path>,
) -> Result<Template, SweepError> {
    let file = t
        .get("file")
        .ok_or_else(|| lines.err(0, "[template] needs file = \"JOB.fio\""))?;
    if let Some((k, v)) = t.iter().find(|(k, _)| *k != "file") {
        return Err(lines.err(
            v.span().start,
            format!("template.{k}: unknown key (only file)"),
        ));
    }
    let name = scalar(file.get_ref())
        .ok_or_else(|| lines.err(file.span().start, "template.file: a path"))?;
    // Relative to the sweep file, as includes are relative to their job file.
    let dir = sweep_path.parent().unwrap_or(Path::new("."));
    let path = at.map_or_else(|| dir.join(name), Path::to_path_buf);
    let text = ioscope_options::jobfile::load_text(&path, "the template")
        .map_err(|e| lines.err(file.span().start, format!("template.file: {e}")))?;
    Ok(Template { path, text })
}

fn sweep(
    lines: &Lines,
    s: &SweepModel,
    profiles: &IndexMap<String, Vec<Opt>>,
    template: bool,
) -> Result<SweepDef, SweepError> {
    let name = s.name.get_ref().clone();
    if name.is_empty() || name.contains(['/', '\0']) {
        return Err(lines.err(
            s.name.span().start,
            format!("sweep name '{name}': a plain name"),
        ));
    }
    let mut names = Vec::new();
    for p in &s.profiles {
        if !profiles.contains_key(p.get_ref()) {
            let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
            return Err(lines.err(
                p.span().start,
                format!(
                    "sweep '{name}': no profile '{}' (defined: {})",
                    p.get_ref(),
                    known.join(", ")
                ),
            ));
        }
        names.push(p.get_ref().clone());
    }
    if names.is_empty() && !template {
        return Err(lines.err(
            s.name.span().start,
            format!("sweep '{name}': list its profiles, e.g. profiles = [\"randread\"]"),
        ));
    }
    let axes = s
        .axes
        .iter()
        .map(|(k, v)| {
            let mut a = axes::parse(k, v.get_ref())
                .map_err(|m| lines.err(v.span().start, format!("sweep '{name}': axes.{k}: {m}")))?;
            a.line = lines.line(v.span().start);
            Ok(a)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let guard = match &s.guard {
        Some(g) => Some(guard(lines, g, &name, &axes)?),
        None => None,
    };
    Ok(SweepDef {
        fixed: lines.options(&s.fixed, &format!("sweep '{name}': fixed"))?,
        name,
        profiles: names,
        axes,
        guard,
    })
}

fn guard(lines: &Lines, t: &Table, sweep: &str, axes: &[Axis]) -> Result<GuardDef, SweepError> {
    let mut axis = axes.first().map(|a| a.name.clone()).unwrap_or_default();
    let mut g = Guard {
        metric: GuardMetric::Iops,
        drop: 0.10,
        patience: 2,
        max_p99_ns: None,
    };
    for (k, v) in t {
        let bad = |m: &str| lines.err(v.span().start, format!("sweep '{sweep}': guard.{k}: {m}"));
        let text = scalar(v.get_ref()).ok_or_else(|| bad("give one value"))?;
        match k.as_str() {
            "axis" => axis = text,
            "metric" => {
                g.metric = match text.as_str() {
                    "iops" => GuardMetric::Iops,
                    "bw" => GuardMetric::Bw,
                    _ => return Err(bad("iops or bw")),
                }
            }
            "drop" => {
                g.drop = text
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .map(|d| if text.ends_with('%') { d / 100.0 } else { d })
                    .filter(|d| (0.0..1.0).contains(d))
                    .ok_or_else(|| bad("a fraction below 1 (0.1) or a percentage (10%)"))?
            }
            "patience" => {
                g.patience = text
                    .parse()
                    .ok()
                    .filter(|&p| p >= 1)
                    .ok_or_else(|| bad("a number of points, at least 1"))?
            }
            "max_p99" => {
                let us = ioscope_options::units::parse_time_us(&text, 1).map_err(|e| bad(&e))?;
                g.max_p99_ns = Some(us as f64 * 1000.0);
            }
            _ => return Err(bad("unknown key (axis, metric, drop, patience, max_p99)")),
        }
    }
    if !axes.iter().any(|a| a.name == axis) {
        return Err(lines.err(
            0,
            format!(
                "sweep '{sweep}': the guard climbs axis '{axis}', which the sweep does not have"
            ),
        ));
    }
    Ok(GuardDef { axis, guard: g })
}

fn precondition(lines: &Lines, t: &Table) -> Result<Precondition, SweepError> {
    let mut p = Precondition {
        purge: Purge::None,
        passes: 2,
        bs: "128k".into(),
        iodepth: 32,
    };
    for (k, v) in t {
        let bad = |m: &str| lines.err(v.span().start, format!("precondition.{k}: {m}"));
        let text = scalar(v.get_ref()).ok_or_else(|| bad("give one value"))?;
        match k.as_str() {
            "purge" => {
                p.purge = match text.as_str() {
                    "none" | "0" => Purge::None,
                    "discard" => Purge::Discard,
                    "format" | "sanitize" => {
                        return Err(bad(
                            "NVMe format/sanitize is not supported yet (no NVMe controller to test it on); use discard",
                        ))
                    }
                    _ => return Err(bad("none or discard")),
                }
            }
            "passes" => p.passes = text.parse().map_err(|_| bad("a number of passes (0: none)"))?,
            "bs" => p.bs = text,
            "iodepth" => p.iodepth = text.parse().ok().filter(|&d| d >= 1).ok_or_else(|| bad("a queue depth"))?,
            _ => return Err(bad("unknown key (purge, passes, bs, iodepth)")),
        }
    }
    Ok(p)
}

/// The most steady-state rounds a sweep file may ask for.
pub const MAX_ROUNDS: usize = 10_000;

fn steady(lines: &Lines, t: &Table) -> Result<Steady, SweepError> {
    let mut s = Steady {
        criteria: Criteria::default(),
        metric: GuardMetric::Iops,
        workload: Vec::new(),
        fio_ss: None,
    };
    let mut workload = None;
    for (k, v) in t {
        let bad = |m: &str| lines.err(v.span().start, format!("steady_state.{k}: {m}"));
        if k == "workload" {
            let tbl = v
                .get_ref()
                .as_table()
                .ok_or_else(|| bad("a table of fio options"))?;
            let tbl: Table = tbl
                .iter()
                .map(|(k2, v2)| (k2.clone(), Spanned::new(v.span(), v2.clone())))
                .collect();
            workload = Some(lines.options(&tbl, "steady_state.workload")?);
            continue;
        }
        let text = scalar(v.get_ref()).ok_or_else(|| bad("give one value"))?;
        let num = |lo: f64| {
            text.trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|&x| x >= lo)
        };
        // Rounds are counted: whole numbers, and few (each round runs for seconds).
        let count = |lo: usize| {
            text.parse::<usize>()
                .ok()
                .filter(|n| (lo..=MAX_ROUNDS).contains(n))
        };
        match k.as_str() {
            "rounds" | "max_rounds" => {
                s.criteria.max_rounds = count(1)
                    .ok_or_else(|| bad(&format!("a whole number of rounds, 1 to {MAX_ROUNDS}")))?
            }
            "window" => {
                s.criteria.window = count(2).ok_or_else(|| {
                    bad(&format!(
                        "rounds in the window, a whole number from 2 to {MAX_ROUNDS}"
                    ))
                })?
            }
            "range_pct" => s.criteria.range_pct = num(0.0).ok_or_else(|| bad("a percentage"))?,
            "slope_pct" => s.criteria.slope_pct = num(0.0).ok_or_else(|| bad("a percentage"))?,
            "metric" => {
                s.metric = match text.as_str() {
                    "iops" => GuardMetric::Iops,
                    "bw" => GuardMetric::Bw,
                    _ => return Err(bad("iops or bw")),
                }
            }
            "mode" => match text.as_str() {
                "snia" => {}
                "fio" => {
                    s.fio_ss = Some(s.fio_ss.take().unwrap_or_else(|| "iops_slope:10%".into()))
                }
                _ => {
                    return Err(bad(
                        "snia (rounds, the default) or fio (fio's ss= in one run)",
                    ))
                }
            },
            "ss" => s.fio_ss = Some(text),
            _ => return Err(bad(
                "unknown key (rounds, window, range_pct, slope_pct, metric, workload, mode, ss)",
            )),
        }
    }
    if s.fio_ss.is_some() {
        let has = |k: &str| workload.iter().flatten().any(|o| o.key == k);
        if !(has("ss_dur") || has("steadystate_duration")) {
            return Err(lines.err(
                0,
                "steady_state: fio's ss= needs its window: add ss_dur (e.g. \"60s\") to the workload",
            ));
        }
    }
    if s.criteria.window > s.criteria.max_rounds {
        return Err(lines.err(
            0,
            "steady_state: the window is longer than the most rounds allowed",
        ));
    }
    s.workload = workload.unwrap_or_else(|| {
        [
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("runtime", "60s"),
            ("time_based", "1"),
        ]
        .iter()
        .map(|(k, v)| Opt {
            key: k.to_string(),
            value: v.to_string(),
            line: 0,
        })
        .collect()
    });
    Ok(s)
}

/// The issue's example, as written (tests of other modules use it too).
#[cfg(test)]
pub(crate) fn tests_example() -> &'static str {
    tests::EXAMPLE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's example (docs/examples/sweep.toml), after an empty first line.
    pub const EXAMPLE: &str = concat!("\n", include_str!("../../../docs/examples/sweep.toml"));

    #[test]
    fn the_issue_example_parses() {
        let f = SweepFile::parse(Path::new("s.toml"), EXAMPLE).unwrap();
        assert_eq!(f.target.options.len(), 2);
        assert_eq!(f.target.options[0].line, 3);
        assert_eq!(
            f.defaults
                .iter()
                .map(|o| o.key.as_str())
                .collect::<Vec<_>>(),
            ["ioengine", "direct", "bs", "runtime", "time_based"]
        );
        assert_eq!(f.defaults[1].value, "1");
        let s = &f.sweeps[0];
        assert_eq!(s.profiles, ["randread", "randrw-70-30"]);
        assert_eq!(s.axes[0].name, "iodepth");
        assert_eq!(s.axes[0].values, ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(s.axes[1].values, ["1", "2"]);
        // The file's profile replaced the built-in of the same name.
        assert_eq!(f.profiles["randread"][0].line, 14);
        assert!(
            f.profiles.contains_key("seqwrite"),
            "built-ins are there too"
        );
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let err = |text: &str| {
            SweepFile::parse(Path::new("s.toml"), text)
                .unwrap_err()
                .to_string()
        };
        let bad_axis = EXAMPLE.replace("pow2:1..64", "pow2:1..");
        assert!(
            err(&bad_axis).starts_with("s.toml:23: sweep 'qd-by-jobs': axes.iodepth:"),
            "{}",
            err(&bad_axis)
        );
        let bad_profile = EXAMPLE.replace("\"randrw-70-30\"]", "\"nope\"]");
        assert!(
            err(&bad_profile).contains("s.toml:22: sweep 'qd-by-jobs': no profile 'nope'"),
            "{}",
            err(&bad_profile)
        );
        let unknown = format!("{EXAMPLE}\n[nonsense]\nx = 1\n");
        assert!(
            err(&unknown).contains("s.toml:25:") && err(&unknown).contains("nonsense"),
            "{}",
            err(&unknown)
        );
        let no_target = "[[sweep]]\nname = \"x\"\nprofiles = [\"randread\"]\n";
        assert!(err(no_target).contains("target"), "{}", err(no_target));
        let list_default = EXAMPLE.replace("bs = \"4k\"", "bs = [\"4k\"]");
        assert!(
            err(&list_default).contains("s.toml:9: defaults.bs: give one value"),
            "{}",
            err(&list_default)
        );
    }

    #[test]
    fn guard_precondition_and_steady_state() {
        let text = format!(
            "{EXAMPLE}guard = {{ axis = \"iodepth\", drop = \"20%\", patience = 3, max_p99 = \"2ms\" }}\n\
             [precondition]\npasses = 1\n[steady_state]\nwindow = 4\nrounds = 10\nworkload = {{ rw = \"randwrite\", runtime = \"1s\" }}\n"
        );
        let f = SweepFile::parse(Path::new("s.toml"), &text).unwrap();
        let g = f.sweeps[0].guard.as_ref().unwrap();
        assert_eq!(g.axis, "iodepth");
        assert!((g.guard.drop - 0.2).abs() < 1e-12);
        assert_eq!(g.guard.patience, 3);
        assert_eq!(g.guard.max_p99_ns, Some(2e6));
        assert_eq!(f.precondition.as_ref().unwrap().passes, 1);
        let st = f.steady.as_ref().unwrap();
        assert_eq!((st.criteria.window, st.criteria.max_rounds), (4, 10));
        assert_eq!(st.workload.len(), 2);
        let bad = text.replace("axis = \"iodepth\"", "axis = \"bs\"");
        let e = SweepFile::parse(Path::new("s.toml"), &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("axis 'bs', which the sweep does not have"),
            "{e}"
        );
    }
}
