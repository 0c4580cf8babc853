//! Expanding a sweep file into points: for each sweep, each profile, each combination
//! of axis values (the guard's axis innermost, so climbing it can stop early; otherwise
//! the last axis varies fastest). A point is one fio job: target options, defaults,
//! profile, fixed options and axis values, later ones winning, as fio applies options.
//!
//! A point's key is a hash of its resolved options and the target's identity: resume
//! skips points whose key finished, and an edited sweep file re-runs only the points
//! whose options it changed.

use crate::error::SweepError;
use crate::file::{Opt, SweepDef, SweepFile};
use ioscope_options::error::{Loc, Source};
use ioscope_options::jobfile::{self, RawEntry, RawSection};
use ioscope_options::{spec, JobSet};
use sha2::{Digest, Sha256};
use std::path::Path;

/// One run of the campaign.
#[derive(Clone, Debug)]
pub struct Point {
    /// Position in the campaign (0-based).
    pub index: usize,
    pub sweep: String,
    /// The profile, or `template` for a template sweep without profiles.
    pub profile: String,
    /// (axis, value) in the sweep's axis order.
    pub axes: Vec<(String, String)>,
    /// File-safe name: `sweep.profile.axis-value...`.
    pub id: String,
    /// Stable hash of the resolved options and the target identity (hex).
    pub key: String,
    /// The points sharing a profile and every axis but the guard's form a line.
    pub line: usize,
    /// The job, as sections ready for the option parser.
    sections: Vec<RawSection>,
}

impl Point {
    /// The point's jobs, through the same parser and checks as a job file.
    pub fn job_set(&self) -> Result<JobSet, SweepError> {
        let set = spec::build(
            &[],
            &[],
            std::slice::from_ref(&self.sections),
            &[],
            &jobfile::Keywords::probe(),
        )
        .map_err(|e| SweepError::Point {
            point: self.id.clone(),
            msg: e.to_string(),
        })?;
        if set.jobs.is_empty() {
            return Err(SweepError::Point {
                point: self.id.clone(),
                msg: "no jobs".into(),
            });
        }
        Ok(set)
    }

    /// The point as a fio job file.
    pub fn job_text(&self) -> String {
        let mut out = format!("; ioscope sweep point {}\n", self.id);
        for sec in &self.sections {
            out.push_str(&format!("[{}]\n", sec.name));
            for e in &sec.entries {
                match &e.value {
                    Some(v) => out.push_str(&format!("{}={v}\n", e.key)),
                    None => out.push_str(&format!("{}\n", e.key)),
                }
            }
        }
        out
    }

    /// The axis value of `name`, if the point has that axis.
    pub fn axis(&self, name: &str) -> Option<&str> {
        self.axes
            .iter()
            .find(|(a, _)| a == name)
            .map(|(_, v)| v.as_str())
    }

    /// "randread iodepth=8 numjobs=2".
    pub fn label(&self) -> String {
        let mut s = self.profile.clone();
        for (a, v) in &self.axes {
            s.push_str(&format!(" {a}={v}"));
        }
        s
    }
}

/// At most this many points in one sweep file: `iodepth = "1..4096"` by `numjobs =
/// "1..4096"` is a typo, not sixteen million runs (nor the memory to plan them).
pub const MAX_POINTS: u64 = 20_000;

/// How many points the file makes, before making them.
pub fn count(f: &SweepFile) -> u64 {
    f.sweeps
        .iter()
        .map(|s| {
            let axes = s
                .axes
                .iter()
                .fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64));
            axes.saturating_mul(s.profiles.len().max(1) as u64)
        })
        .fold(0u64, u64::saturating_add)
}

/// Every point of the file, in run order; `identity` is the target's (see identity.rs).
pub fn expand(f: &SweepFile, identity: &str) -> Result<Vec<Point>, SweepError> {
    let n = count(f);
    if n > MAX_POINTS {
        return Err(SweepError::Run(format!(
            "{}: {n} points, more than the {MAX_POINTS} a sweep file may make (check the \
             axes' ranges)",
            f.path.display()
        )));
    }
    let template = f.template.as_ref().map(|t| &t.text);
    let mut points = Vec::new();
    let mut line = 0;
    for s in &f.sweeps {
        let profiles: Vec<String> = match s.profiles.is_empty() {
            true => vec!["template".into()],
            false => s.profiles.clone(),
        };
        for profile in &profiles {
            for combo in combinations(s) {
                if combo.new_line && !points.is_empty() {
                    line += 1;
                }
                let sections = match &template {
                    Some(text) => template_sections(f, s, profile, &combo.values, text)?,
                    None => vec![section(f, s, profile, &combo.values)],
                };
                let key = key_of(&sections, identity);
                let id = point_id(&s.name, profile, &combo.values);
                points.push(Point {
                    index: points.len(),
                    sweep: s.name.clone(),
                    profile: profile.clone(),
                    axes: combo.values,
                    id,
                    key,
                    line,
                    sections,
                });
            }
            line += 1;
        }
    }
    dedupe_ids(&mut points);
    Ok(points)
}

struct Combo {
    values: Vec<(String, String)>,
    /// The first point of a new guard line.
    new_line: bool,
}

/// The axis combinations of a sweep, the guard's axis innermost (values in axis order).
fn combinations(s: &SweepDef) -> Vec<Combo> {
    let mut order: Vec<usize> = (0..s.axes.len()).collect();
    if let Some(g) = &s.guard {
        if let Some(pos) = s.axes.iter().position(|a| a.name == g.axis) {
            order.retain(|&i| i != pos);
            order.push(pos);
        }
    }
    let mut out = Vec::new();
    let mut idx = vec![0usize; order.len()];
    loop {
        let values = (0..s.axes.len())
            .map(|a| {
                let k = order.iter().position(|&o| o == a).unwrap_or(0);
                (s.axes[a].name.clone(), s.axes[a].values[idx[k]].clone())
            })
            .collect();
        let new_line = idx.last().map_or(true, |&v| v == 0);
        out.push(Combo { values, new_line });
        // Odometer: the last position (innermost) turns fastest.
        let mut k = order.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < s.axes[order[k]].values.len() {
                break;
            }
            idx[k] = 0;
        }
    }
}

fn entry(path: &Path, o: &Opt) -> RawEntry {
    RawEntry {
        key: o.key.clone(),
        value: Some(o.value.clone()),
        loc: loc(path, o.line),
    }
}

fn loc(path: &Path, line: usize) -> Loc {
    match line {
        0 => Loc {
            source: Source::Builtin,
            line: 0,
        },
        l => Loc::file(path, l),
    }
}

/// A point of a profile sweep: one job section with every option in order.
fn section(f: &SweepFile, s: &SweepDef, profile: &str, axes: &[(String, String)]) -> RawSection {
    let path = f.path.as_path();
    // Points of a sweep report one merged job, whatever numjobs is (fio-tests' choice
    // too); the sweep file may still turn it off.
    let mut entries = vec![RawEntry {
        key: "group_reporting".into(),
        value: Some("1".into()),
        loc: loc(path, 0),
    }];
    entries.extend(f.target.options.iter().map(|o| entry(path, o)));
    entries.extend(f.defaults.iter().map(|o| entry(path, o)));
    entries.extend(
        f.profiles
            .get(profile)
            .into_iter()
            .flatten()
            .map(|o| entry(path, o)),
    );
    entries.extend(s.fixed.iter().map(|o| entry(path, o)));
    let axis_line = |k: &str| s.axes.iter().find(|a| a.name == k).map_or(0, |a| a.line);
    entries.extend(axes.iter().map(|(k, v)| RawEntry {
        key: k.clone(),
        value: Some(v.clone()),
        loc: loc(path, axis_line(k)),
    }));
    RawSection {
        name: profile.to_string(),
        loc: loc(path, 0),
        entries,
    }
}

/// A point of a template sweep: the job file with `${AXIS}` replaced; target options
/// and defaults go first (the template's own settings win), the profile's options and
/// axes not named in the template go last into every job (they win).
fn template_sections(
    f: &SweepFile,
    s: &SweepDef,
    profile: &str,
    axes: &[(String, String)],
    text: &str,
) -> Result<Vec<RawSection>, SweepError> {
    let path = f
        .template
        .as_ref()
        .map_or(Path::new("template"), |t| t.path.as_path());
    let mut body = text.to_string();
    let mut unused = Vec::new();
    for (k, v) in axes {
        let var = format!("${{{k}}}");
        if body.contains(&var) {
            body = body.replace(&var, v);
        } else {
            unused.push((k.clone(), v.clone()));
        }
    }
    let mut parsed = Vec::new();
    jobfile::parse_text(path, &body, &mut parsed, 0).map_err(|e| SweepError::Point {
        point: point_id(&s.name, profile, axes),
        msg: e.to_string(),
    })?;
    let sweep_path = f.path.as_path();
    let mut global: Vec<RawEntry> = f
        .target
        .options
        .iter()
        .map(|o| entry(sweep_path, o))
        .collect();
    global.extend(f.defaults.iter().map(|o| entry(sweep_path, o)));
    let mut out = vec![RawSection {
        name: "global".into(),
        loc: loc(sweep_path, 0),
        entries: global,
    }];
    for mut sec in parsed {
        if !sec.is_global() {
            let prof = f.profiles.get(profile).into_iter().flatten();
            sec.entries.extend(prof.map(|o| entry(sweep_path, o)));
            sec.entries
                .extend(s.fixed.iter().map(|o| entry(sweep_path, o)));
            sec.entries.extend(unused.iter().map(|(k, v)| RawEntry {
                key: k.clone(),
                value: Some(v.clone()),
                loc: loc(sweep_path, 0),
            }));
        }
        out.push(sec);
    }
    Ok(out)
}

/// sha256 of the effective options (last value of each key, sorted) per section and
/// the target identity, as 16 hex digits.
fn key_of(sections: &[RawSection], identity: &str) -> String {
    let mut h = Sha256::new();
    h.update(identity.as_bytes());
    for sec in sections {
        h.update(b"\n[");
        h.update(sec.name.as_bytes());
        h.update(b"]");
        let mut eff: Vec<(&str, &str)> = Vec::new();
        for e in &sec.entries {
            let v = e.value.as_deref().unwrap_or("");
            match eff.iter_mut().find(|(k, _)| *k == e.key) {
                Some(slot) => slot.1 = v,
                None => eff.push((&e.key, v)),
            }
        }
        eff.sort_unstable();
        for (k, v) in eff {
            h.update(format!("\n{k}={v}").as_bytes());
        }
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A point's id: `sweep.profile.axis-value…`, safe as a file name.
pub fn point_id(sweep: &str, profile: &str, axes: &[(String, String)]) -> String {
    let mut id = format!("{sweep}.{profile}");
    for (k, v) in axes {
        id.push_str(&format!(".{k}-{v}"));
    }
    file_safe(&id)
}

/// `s` with every character that is not a letter, digit, `.`, `_` or `-` made `_`: a
/// name safe in a file name (point ids, chart files, fio-tests columns).
pub fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Sanitising can make two ids equal (`a/b` and `a_b`): number the later ones.
fn dedupe_ids(points: &mut [Point]) {
    let mut seen = std::collections::HashSet::new();
    for p in points.iter_mut() {
        if !seen.insert(p.id.clone()) {
            let base = p.id.clone();
            let mut n = 2;
            while !seen.insert(format!("{base}.{n}")) {
                n += 1;
            }
            p.id = format!("{base}.{n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::SweepFile;

    fn example(extra: &str) -> SweepFile {
        let text = format!("{}{extra}", crate::file::tests_example());
        SweepFile::parse(Path::new("s.toml"), &text).unwrap()
    }

    #[test]
    fn the_example_has_28_points_in_order() {
        let pts = expand(&example(""), "id").unwrap();
        assert_eq!(pts.len(), 2 * 7 * 2);
        // iodepth first in the file, numjobs last: numjobs turns fastest.
        let first: Vec<String> = pts.iter().take(4).map(Point::label).collect();
        assert_eq!(
            first,
            [
                "randread iodepth=1 numjobs=1",
                "randread iodepth=1 numjobs=2",
                "randread iodepth=2 numjobs=1",
                "randread iodepth=2 numjobs=2"
            ]
        );
        assert_eq!(pts[14].label(), "randrw-70-30 iodepth=1 numjobs=1");
        assert_eq!(pts[3].id, "qd-by-jobs.randread.iodepth-2.numjobs-2");
        let set = pts[3].job_set().unwrap();
        let o = &set.jobs[0].opts;
        assert_eq!((o.iodepth, o.numjobs, o.group_reporting), (2, 2, true));
        assert_eq!(set.jobs[0].name, "randread");
        let text = pts[3].job_text();
        assert!(
            text.contains("[randread]\ngroup_reporting=1\nfilename=/tmp/sweep-demo/data\n"),
            "{text}"
        );
        assert!(text.ends_with("iodepth=2\nnumjobs=2\n"), "{text}");
    }

    #[test]
    fn the_guard_axis_turns_fastest_and_lines_follow_it() {
        let pts = expand(&example("guard = { axis = \"iodepth\" }\n"), "id").unwrap();
        let labels: Vec<String> = pts.iter().take(8).map(Point::label).collect();
        assert_eq!(labels[0], "randread iodepth=1 numjobs=1");
        assert_eq!(labels[6], "randread iodepth=64 numjobs=1");
        assert_eq!(labels[7], "randread iodepth=1 numjobs=2");
        assert_eq!(pts[6].line, pts[0].line);
        assert_ne!(pts[7].line, pts[6].line);
        let lines: std::collections::BTreeSet<usize> = pts.iter().map(|p| p.line).collect();
        assert_eq!(lines.len(), 4, "2 profiles x 2 numjobs");
    }

    #[test]
    fn keys_follow_options_and_identity() {
        let a = expand(&example(""), "disk-A").unwrap();
        let b = expand(&example(""), "disk-B").unwrap();
        assert_ne!(a[0].key, b[0].key, "another disk is another point");
        // Changing the runtime of randrw only changes randrw's points.
        let mut f = example("");
        f.profiles.get_mut("randrw-70-30").unwrap().push(Opt {
            key: "runtime".into(),
            value: "3s".into(),
            line: 0,
        });
        let c = expand(&f, "disk-A").unwrap();
        assert!(a[..14].iter().zip(&c[..14]).all(|(x, y)| x.key == y.key));
        assert!(a[14..].iter().zip(&c[14..]).all(|(x, y)| x.key != y.key));
        let mut keys: Vec<&str> = a.iter().map(|p| p.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 28, "every point has its own key");
    }

    #[test]
    fn a_bad_value_names_the_sweep_file_line() {
        let f = SweepFile::parse(
            Path::new("s.toml"),
            &crate::file::tests_example().replace("bs = \"4k\"", "bs = \"4q\""),
        )
        .unwrap();
        let e = expand(&f, "id").unwrap()[0]
            .job_set()
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.toml:9: option 'bs'"), "{e}");
    }

    #[test]
    fn a_template_gets_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        let tpl = dir.path().join("t.fio");
        std::fs::write(
            &tpl,
            "[global]\nioengine=null\n[qd${QD}]\nrw=randread\niodepth=${QD}\n",
        )
        .unwrap();
        let text = "[target]\nfilename=\"/tmp/x\"\nsize=\"1m\"\n[template]\nfile=\"t.fio\"\n\
                    [[sweep]]\nname=\"t\"\naxes={ QD = [1, 8], bs = [\"4k\"] }\n";
        let sf = dir.path().join("s.toml");
        let f = SweepFile::parse(&sf, text).unwrap();
        let pts = expand(&f, "id").unwrap();
        assert_eq!(pts.len(), 2);
        let set = pts[1].job_set().unwrap();
        assert_eq!(set.jobs[0].name, "qd8");
        assert_eq!(set.jobs[0].opts.iodepth, 8);
        // An axis the template does not name is set as an option in every job.
        assert_eq!(set.jobs[0].opts.bs.0[0], 4096);
        assert_eq!(pts[1].profile, "template");
    }
}
