//! fio's built-in profiles, `--profile=tiobench` and `--profile=act`: a command-line
//! switch with options of its own that generates jobs. They are added after the
//! command line's and the job files' jobs, as one more job file would be: the
//! profile's globals (which win over the command line's) and then its jobs, each
//! defined at `profile NAME` ([`Source::Profile`]).
//!
//! - tiobench: sequential and random writes, then reads, one group each, over four
//!   files in a directory (`size` in MiB, `block`, `numruns`, `dir`, `threads`). fio
//!   3.33 parses these options but ignores them (the jobs always use its defaults);
//!   ioscope applies them, as fio documents them.
//! - act (Aerospike's certification test): on each device, `threads-per-queue` readers
//!   of `read-req-num-512-blocks` sectors and one writer of `large-block-op-kbytes`
//!   bytes (fio's unit, despite the name), paced by `load`, for `test-duration`; after
//!   the run, the share of I/Os over 1, 8 and 64 ms per hour (the runner counts them
//!   for the jobs act defines). `prep` fills each device instead (zeroes, then 4k
//!   random writes).

use crate::error::{Loc, OptionsError, Source};
use crate::jobfile::{Keywords, RawEntry, RawSection};
use crate::units;

/// One option of a profile.
pub struct ProfileOption {
    pub name: &'static str,
    pub help: &'static str,
    /// The default, as text ("" when there is none).
    pub default: &'static str,
}

pub struct Profile {
    pub name: &'static str,
    pub description: &'static str,
    pub options: &'static [ProfileOption],
}

const fn opt(name: &'static str, default: &'static str, help: &'static str) -> ProfileOption {
    ProfileOption {
        name,
        help,
        default,
    }
}

pub static PROFILES: &[Profile] = &[
    Profile {
        name: "tiobench",
        description: "tiotest/tiobench like benchmark: sequential and random writes, then reads",
        options: &[
            opt(
                "size",
                "",
                "Size of the four files together; a bare number is MiB (default: 4 KiB per MiB of memory)",
            ),
            opt("block", "4096", "Block size in bytes"),
            opt("numruns", "1", "Number of runs (loops)"),
            opt("dir", "./", "Test directory"),
            opt("threads", "1", "Number of threads (numjobs) per test"),
        ],
    },
    Profile {
        name: "act",
        description: "ACT Aerospike like benchmark",
        options: &[
            opt(
                "device-names",
                "",
                "Devices to use (comma-separated); required",
            ),
            opt("load", "1", "ACT load multiplier (default 1x)"),
            opt(
                "test-duration",
                "24h",
                "How long the entire test takes to run (a bare number is seconds)",
            ),
            opt(
                "threads-per-queue",
                "8",
                "Number of read I/O threads per device",
            ),
            opt(
                "read-req-num-512-blocks",
                "3",
                "Number of 512-byte blocks to read at a time",
            ),
            opt(
                "large-block-op-kbytes",
                "131072",
                "Size of the large-block writes, in bytes as fio reads it (size suffixes allowed)",
            ),
            opt("prep", "", "Run ACT's prep phase (fill each device) instead of the test"),
        ],
    },
];

pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// `--profile=NAME` and its options out of the command line's global entries: the
/// profile's job file (None without --profile). The last --profile wins, as in fio.
pub fn take(
    cli_global: &mut Vec<RawEntry>,
    kw: &Keywords,
) -> Result<Option<Vec<RawSection>>, OptionsError> {
    let Some(at) = cli_global.iter().rposition(|e| e.key == "profile") else {
        return Ok(None);
    };
    let chosen = cli_global[at].clone();
    let name = chosen.value.clone().unwrap_or_default();
    let bad = |key: &str, msg: String| OptionsError::Option {
        loc: chosen.loc.clone(),
        option: key.to_string(),
        msg,
    };
    let p = find(&name).ok_or_else(|| {
        bad(
            "profile",
            format!(
                "profile '{name}' not found (built in: {})",
                PROFILES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    let mut values: Vec<(&'static str, RawEntry)> = Vec::new();
    cli_global.retain(|e| {
        if e.key == "profile" {
            return false;
        }
        match p.options.iter().find(|o| o.name == e.key) {
            Some(o) => {
                values.push((o.name, e.clone()));
                false
            }
            None => true,
        }
    });
    let v = Values {
        values,
        profile: p.name,
    };
    // act's prep jobs are defined at `profile act-prep`: the runner counts latencies
    // for act's table in act's test jobs only.
    let (lines, source) = match p.name {
        "tiobench" => (tiobench(&v, kw)?, "tiobench"),
        _ => {
            let prep = prep(&v)?;
            (act(&v, prep)?, if prep { "act-prep" } else { "act" })
        }
    };
    Ok(Some(sections(source, &lines, &chosen.loc)))
}

/// The option values given, each with where it was given.
struct Values {
    values: Vec<(&'static str, RawEntry)>,
    profile: &'static str,
}

impl Values {
    fn entry(&self, name: &str) -> Option<&RawEntry> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, e)| e)
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.entry(name).map(|e| e.value.as_deref().unwrap_or(""))
    }

    fn err(&self, name: &str, msg: String) -> OptionsError {
        match self.entry(name) {
            Some(e) => OptionsError::Option {
                loc: e.loc.clone(),
                option: name.to_string(),
                msg,
            },
            None => OptionsError::Option {
                loc: Loc {
                    source: Source::Profile(self.profile.to_string()),
                    line: 0,
                },
                option: name.to_string(),
                msg,
            },
        }
    }

    /// An integer option with size suffixes (fio's int options), at least `min`.
    fn int(&self, name: &str, default: u64, min: u64) -> Result<u64, OptionsError> {
        let Some(t) = self.text(name) else {
            return Ok(default);
        };
        let v = units::parse_int(t).map_err(|e| self.err(name, e))?;
        u64::try_from(v)
            .ok()
            .filter(|&v| v >= min)
            .ok_or_else(|| self.err(name, format!("{t}: must be at least {min}")))
    }
}

fn tiobench(v: &Values, kw: &Keywords) -> Result<Vec<String>, OptionsError> {
    let size = match v.text("size") {
        // tiobench's unit: a bare number is MiB.
        Some(t) if t.chars().all(|c| c.is_ascii_digit()) && !t.is_empty() => {
            let mib: u64 = t
                .parse()
                .map_err(|_| v.err("size", format!("{t}: too large")))?;
            mib.saturating_mul(1 << 20)
        }
        Some(t) => units::parse_size(t, 1024).map_err(|e| v.err("size", e))?,
        None => 4 * 1024 * kw.mb_memory,
    };
    if size == 0 {
        return Err(v.err("size", "must be more than 0".into()));
    }
    let block = v.int("block", 4096, 1)?;
    let loops = v.int("numruns", 1, 1)?;
    let threads = v.int("threads", 1, 1)?;
    let dir = v.text("dir").unwrap_or("./");
    let mut l = vec![
        "buffered=0".to_string(),
        format!("size={size}"),
        format!("bs={block}"),
        format!("loops={loops}"),
        format!("directory={dir}"),
        format!("numjobs={threads}"),
        "timeout=600".into(),
        "group_reporting".into(),
        "thread".into(),
        "overwrite=1".into(),
        "filename=.fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4".into(),
        "ioengine=sync".into(),
    ];
    for (name, rw, first) in [
        ("seqwrite", "write", true),
        ("randwrite", "randwrite", false),
        ("seqread", "read", false),
        ("randread", "randread", false),
    ] {
        l.push(format!("name={name}"));
        if !first {
            l.push("stonewall".into());
        }
        l.push(format!("rw={rw}"));
        if rw.ends_with("write") {
            l.push("end_fsync=1".into());
        }
    }
    Ok(l)
}

/// act's `prep` flag.
fn prep(v: &Values) -> Result<bool, OptionsError> {
    match v.text("prep") {
        None | Some("0") => Ok(false),
        Some("" | "1") => Ok(true),
        Some(o) => Err(v.err("prep", format!("{o}: 0 or 1"))),
    }
}

fn act(v: &Values, prep: bool) -> Result<Vec<String>, OptionsError> {
    let devices: Vec<&str> = match v.text("device-names") {
        Some(d) if !d.trim().is_empty() => d.split(',').map(str::trim).collect(),
        _ => {
            return Err(v.err(
                "device-names",
                "act needs the devices to test: --device-names=/dev/X[,/dev/Y...]".into(),
            ))
        }
    };
    if let Some(empty) = devices.iter().position(|d| d.is_empty()) {
        return Err(v.err(
            "device-names",
            format!("device {} of the list is empty", empty + 1),
        ));
    }
    let load = v.int("load", 1, 0)?;
    let threads = v.int("threads-per-queue", 8, 1)?;
    let blocks = v.int("read-req-num-512-blocks", 3, 1)?;
    let write_bytes = v.int("large-block-op-kbytes", 131072, 1)?;
    let read_bytes = blocks * 512;
    if write_bytes < read_bytes {
        return Err(v.err(
            "large-block-op-kbytes",
            format!("{write_bytes} bytes: the writes must be at least as large as the reads ({read_bytes} bytes)"),
        ));
    }
    let seconds = match v.text("test-duration") {
        None => 24 * 3600,
        Some(t) => {
            units::parse_time_us(t, 1_000_000).map_err(|e| v.err("test-duration", e))? / 1_000_000
        }
    };
    if seconds == 0 {
        return Err(v.err("test-duration", "must be at least one second".into()));
    }
    let mut l: Vec<String> = [
        "direct=1",
        "ioengine=sync",
        "random_generator=lfsr",
        "group_reporting=1",
        "thread",
    ]
    .map(String::from)
    .to_vec();
    if !prep {
        l.push(format!("runtime={seconds}s"));
        l.push("time_based=1".into());
    }
    for d in devices {
        if prep {
            l.extend([
                format!("name=act-prep-zeroes-{d}"),
                format!("filename={d}"),
                "bs=1048576".into(),
                "zero_buffers".into(),
                "rw=write".into(),
                format!("name=act-prep-salt-{d}"),
                "stonewall".into(),
                format!("filename={d}"),
                "bs=4096".into(),
                "ioengine=libaio".into(),
                "iodepth=64".into(),
                "rw=randwrite".into(),
            ]);
            continue;
        }
        let ratio = write_bytes / read_bytes;
        l.extend([
            format!("name=act-read-{d}"),
            format!("filename={d}"),
            "rw=randread".into(),
            format!("numjobs={threads}"),
            format!("rate_iops={}", load * 2000 / threads),
            format!("bs={read_bytes}"),
            format!("name=act-write-{d}"),
            format!("filename={d}"),
            "rw=randwrite".into(),
            format!("rate_iops={}", (load * 1000).div_ceil(ratio)),
            format!("bs={write_bytes}"),
        ]);
    }
    Ok(l)
}

/// `key=value` lines as fio applies a profile's list: globals until the first
/// `name=`, then one job per `name=`, each defined at `source`.
fn sections(source: &str, lines: &[String], at: &Loc) -> Vec<RawSection> {
    let loc = Loc {
        source: Source::Profile(source.to_string()),
        line: at.line,
    };
    let mut out = vec![RawSection {
        name: "global".into(),
        loc: loc.clone(),
        entries: Vec::new(),
    }];
    for line in lines {
        let e = crate::jobfile::parse_entry(line, loc.clone());
        if e.key == "name" {
            out.push(RawSection {
                name: e.value.unwrap_or_default(),
                loc: loc.clone(),
                entries: Vec::new(),
            });
            continue;
        }
        if let Some(s) = out.last_mut() {
            s.entries.push(e);
        }
    }
    out
}

/// `--cmdhelp` with --profile: the profile's options, as fio lists them.
pub fn options_help(p: &Profile) -> String {
    let mut s = String::new();
    for o in p.options {
        let default = if o.default.is_empty() {
            String::new()
        } else {
            format!(" (default: {})", o.default)
        };
        s.push_str(&format!("{:<24}: {}{default}\n", o.name, o.help));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(args: &[&str]) -> Vec<RawEntry> {
        args.iter()
            .enumerate()
            .map(|(i, a)| crate::jobfile::parse_entry(a, Loc::cli(i + 1)))
            .collect()
    }

    fn lines(s: &[RawSection]) -> Vec<String> {
        let mut out = Vec::new();
        for sec in s {
            out.push(format!("[{}]", sec.name));
            for e in &sec.entries {
                out.push(match &e.value {
                    Some(v) => format!("{}={v}", e.key),
                    None => e.key.clone(),
                });
            }
        }
        out
    }

    #[test]
    fn act_jobs_as_fio_defines_them() {
        let mut g = entries(&[
            "profile=act",
            "device-names=/dev/a,/dev/b",
            "test-duration=5",
            "iodepth=2",
        ]);
        let s = take(&mut g, &Keywords::probe()).unwrap().unwrap();
        assert_eq!(g.len(), 1, "only the job option stays: {g:?}");
        let l = lines(&s);
        assert_eq!(
            l[..8],
            [
                "[global]",
                "direct=1",
                "ioengine=sync",
                "random_generator=lfsr",
                "group_reporting=1",
                "thread",
                "runtime=5s",
                "time_based=1"
            ]
        );
        assert_eq!(
            l[8..14],
            [
                "[act-read-/dev/a]",
                "filename=/dev/a",
                "rw=randread",
                "numjobs=8",
                "rate_iops=250",
                "bs=1536"
            ]
        );
        assert_eq!(
            l[14..19],
            [
                "[act-write-/dev/a]",
                "filename=/dev/a",
                "rw=randwrite",
                "rate_iops=12",
                "bs=131072"
            ]
        );
        assert_eq!(l.iter().filter(|x| x.starts_with("[act-")).count(), 4);
        assert!(matches!(&s[1].loc.source, Source::Profile(p) if p == "act"));
        // load=2, 4 threads, 8 sectors, 256 KiB writes: fio's 1000 reads/s per thread, 32 writes/s.
        let mut g = entries(&[
            "profile=act",
            "device-names=/dev/a",
            "load=2",
            "threads-per-queue=4",
            "read-req-num-512-blocks=8",
            "large-block-op-kbytes=256k",
        ]);
        let l = lines(&take(&mut g, &Keywords::probe()).unwrap().unwrap());
        assert!(l.contains(&"runtime=86400s".to_string()), "24h by default");
        assert!(l.contains(&"rate_iops=1000".to_string()) && l.contains(&"bs=4096".to_string()));
        assert!(l.contains(&"rate_iops=32".to_string()) && l.contains(&"bs=262144".to_string()));
    }

    #[test]
    fn act_prep_and_bad_values() {
        let mut g = entries(&["profile=act", "device-names=/dev/a", "prep"]);
        let s = take(&mut g, &Keywords::probe()).unwrap().unwrap();
        let l = lines(&s);
        assert!(!l.iter().any(|x| x.starts_with("runtime")));
        assert!(l.contains(&"[act-prep-zeroes-/dev/a]".to_string()));
        assert!(l.contains(&"[act-prep-salt-/dev/a]".to_string()));
        assert!(matches!(&s[1].loc.source, Source::Profile(p) if p == "act-prep"));
        for (args, want) in [
            (&["profile=act"][..], "act needs the devices"),
            (
                &["profile=act", "device-names=/dev/a", "threads-per-queue=0"],
                "must be at least 1",
            ),
            (
                &[
                    "profile=act",
                    "device-names=/dev/a",
                    "large-block-op-kbytes=128",
                ],
                "at least as large as the reads",
            ),
            (&["profile=nope"], "profile 'nope' not found"),
        ] {
            let mut g = entries(args);
            let e = take(&mut g, &Keywords::probe()).unwrap_err().to_string();
            assert!(e.contains(want), "{args:?}: {e}");
        }
    }

    #[test]
    fn tiobench_applies_its_options() {
        let mut g = entries(&["profile=tiobench"]);
        let kw = Keywords::probe();
        let l = lines(&take(&mut g, &kw).unwrap().unwrap());
        assert!(l.contains(&format!("size={}", 4 * 1024 * kw.mb_memory)));
        assert_eq!(
            l.iter()
                .filter(|x| x.starts_with('['))
                .cloned()
                .collect::<Vec<_>>(),
            [
                "[global]",
                "[seqwrite]",
                "[randwrite]",
                "[seqread]",
                "[randread]"
            ]
        );
        let mut g = entries(&[
            "profile=tiobench",
            "size=8",
            "block=8k",
            "numruns=2",
            "dir=/tmp/x",
            "threads=3",
        ]);
        let l = lines(&take(&mut g, &kw).unwrap().unwrap());
        for want in [
            "size=8388608",
            "bs=8192",
            "loops=2",
            "directory=/tmp/x",
            "numjobs=3",
        ] {
            assert!(l.contains(&want.to_string()), "{want}: {l:?}");
        }
        assert!(g.is_empty(), "size went to the profile");
        let mut g = entries(&["iodepth=4"]);
        assert!(take(&mut g, &kw).unwrap().is_none());
    }
}
