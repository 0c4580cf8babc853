//! fio job files: ini sections, comments, `include`, and value expansion
//! (`${ENV}`, `$ncpus`, `$mb_memory`, `$pagesize`).

use crate::error::{Loc, OptionsError};
use std::path::{Path, PathBuf};

/// One `key[=value]` line.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RawEntry {
    pub key: String,
    /// None for a bare `key` (a flag).
    pub value: Option<String>,
    pub loc: Loc,
}

/// One `[section]` with its entries, in order.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RawSection {
    pub name: String,
    pub loc: Loc,
    pub entries: Vec<RawEntry>,
}

impl RawSection {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

const MAX_INCLUDE_DEPTH: usize = 16;
/// The most bytes one job file (or included file) may have, and all of a job file's
/// includes together: far beyond any real job file (fio-tests' hundreds of jobs are
/// a few hundred KiB), well short of filling memory when a job file is /dev/zero.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// The most `include` lines one job file may expand, over all its includes: an include
/// graph that fans out (each file including the next eight times) ends here, not after
/// 8^16 reads.
pub const MAX_INCLUDES: usize = 1024;

/// What a job file's includes have used so far.
#[derive(Default)]
struct Budget {
    includes: usize,
    bytes: u64,
}

/// Read a job file (`-` = standard input) with its includes.
pub fn read_job_file(path: &Path) -> Result<Vec<RawSection>, OptionsError> {
    let mut sections = Vec::new();
    read_into(path, &mut sections, 0, &mut Budget::default())?;
    Ok(sections)
}

/// Read a text file of at most [`MAX_FILE_BYTES`] (`-` = standard input); `what` names
/// it in errors ("job file", "template").
pub fn load_text(path: &Path, what: &str) -> Result<String, OptionsError> {
    let read = if path == Path::new("-") {
        ioscope_fs::read_limited(std::io::stdin(), MAX_FILE_BYTES)
    } else {
        ioscope_fs::read_file_limited(path, MAX_FILE_BYTES)
    };
    let bytes = read.map_err(|e| OptionsError::File {
        path: path.into(),
        msg: match path == Path::new("-") {
            true => format!("cannot read standard input: {e}"),
            false => format!("cannot read {what}: {e}"),
        },
    })?;
    text_from_bytes(path, bytes)
}

/// Job files must be text: report binary data and invalid UTF-8 with a line number.
fn text_from_bytes(path: &Path, bytes: Vec<u8>) -> Result<String, OptionsError> {
    if let Some(pos) = bytes.iter().position(|&b| b == 0) {
        let line = bytes[..pos].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(OptionsError::at(
            &Loc::file(path, line),
            "this is not a job file: it contains binary data (NUL byte)",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        OptionsError::at(&Loc::file(path, line), "invalid UTF-8 text")
    })
}

fn read_into(
    path: &Path,
    out: &mut Vec<RawSection>,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), OptionsError> {
    let text = load_text(path, "job file")?;
    budget.bytes += text.len() as u64;
    parse_lines(path, &text, out, depth, budget)
}

/// Parse job-file text into sections appended to `out`.
pub fn parse_text(
    path: &Path,
    text: &str,
    out: &mut Vec<RawSection>,
    depth: usize,
) -> Result<(), OptionsError> {
    parse_lines(path, text, out, depth, &mut Budget::default())
}

fn parse_lines(
    path: &Path,
    text: &str,
    out: &mut Vec<RawSection>,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), OptionsError> {
    for (i, raw_line) in text.lines().enumerate() {
        let loc = Loc::file(path, i + 1);
        let line = strip_comment(raw_line).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| {
                    OptionsError::at(&loc, format!("section header '{line}' lacks ']'"))
                })?
                .trim();
            if name.is_empty() {
                return Err(OptionsError::at(&loc, "empty section name '[]'"));
            }
            out.push(RawSection {
                name: name.to_string(),
                loc,
                entries: Vec::new(),
            });
            continue;
        }
        if let Some(inc) = line
            .strip_prefix("include ")
            .or_else(|| line.strip_prefix("include\t"))
        {
            include(path, inc.trim(), &loc, out, (depth, budget))?;
            continue;
        }
        let entry = parse_entry(line, loc.clone());
        match out.last_mut() {
            Some(sec) => sec.entries.push(entry),
            None => {
                return Err(OptionsError::option(
                    &loc,
                    &entry.key,
                    "appears before any [section]; put it under [global] or a job section",
                ))
            }
        }
    }
    Ok(())
}

fn include(
    from: &Path,
    name: &str,
    loc: &Loc,
    out: &mut Vec<RawSection>,
    (depth, budget): (usize, &mut Budget),
) -> Result<(), OptionsError> {
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(OptionsError::at(
            loc,
            format!("include '{name}' nests deeper than {MAX_INCLUDE_DEPTH} levels (a loop?)"),
        ));
    }
    budget.includes += 1;
    if budget.includes > MAX_INCLUDES {
        return Err(OptionsError::at(
            loc,
            format!(
                "include '{name}': more than {MAX_INCLUDES} includes in all (files that include \
                 each other many times over?)"
            ),
        ));
    }
    if budget.bytes > MAX_FILE_BYTES {
        return Err(OptionsError::at(
            loc,
            format!(
                "include '{name}': the included files pass {} MiB in all",
                MAX_FILE_BYTES >> 20
            ),
        ));
    }
    let target = resolve_include(from, name);
    if !target.exists() {
        return Err(OptionsError::at(
            loc,
            format!("included file '{}' does not exist", target.display()),
        ));
    }
    read_into(&target, out, depth + 1, budget).map_err(|e| match e {
        OptionsError::File { msg, .. } => OptionsError::at(loc, format!("include '{name}': {msg}")),
        other => other,
    })
}

fn resolve_include(from: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    from.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(p))
        .unwrap_or_else(|| p.to_path_buf())
}

/// `;` or `#` starts a comment at the start of a line or after white space.
fn strip_comment(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return "";
    }
    let bytes = line.as_bytes();
    for i in 1..bytes.len() {
        if (bytes[i] == b';' || bytes[i] == b'#') && bytes[i - 1].is_ascii_whitespace() {
            return &line[..i];
        }
    }
    line
}

/// `key=value`, `key = value` or bare `key`.
pub fn parse_entry(line: &str, loc: Loc) -> RawEntry {
    match line.split_once('=') {
        Some((k, v)) => RawEntry {
            key: k.trim().to_string(),
            value: Some(unquote(v.trim()).to_string()),
            loc,
        },
        None => RawEntry {
            key: line.trim().to_string(),
            value: None,
            loc,
        },
    }
}

fn unquote(v: &str) -> &str {
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') && !v[1..v.len() - 1].contains('"') {
        // buffer_pattern keeps its quotes to tell strings from numbers.
        return v;
    }
    v
}

/// Machine facts that job files may refer to.
#[derive(Clone, Debug)]
pub struct Keywords {
    pub ncpus: u64,
    pub mb_memory: u64,
    pub pagesize: u64,
    /// `${NAME}` values that come before the environment: the run's own
    /// `IOSCOPE_RANK`, `IOSCOPE_RANKS` and `IOSCOPE_HOST` (rank 0 of 1 on this host
    /// unless MPI says otherwise), for per-rank file names.
    pub vars: Vec<(String, String)>,
    /// `--compat=fio`: values the strict parser refuses are read as fio 3.33 reads them
    /// ([`crate::compat`]).
    pub compat_fio: bool,
}

impl Keywords {
    pub fn probe() -> Self {
        // SAFETY: sysconf has no preconditions.
        let (ncpus, pages, pagesize) = unsafe {
            (
                libc::sysconf(libc::_SC_NPROCESSORS_ONLN),
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let pagesize = if pagesize > 0 { pagesize as u64 } else { 4096 };
        Keywords {
            ncpus: ncpus.max(1) as u64,
            mb_memory: (pages.max(0) as u64).saturating_mul(pagesize) / (1024 * 1024),
            pagesize,
            vars: Vec::new(),
            compat_fio: false,
        }
        .with_rank(0, 1, &hostname())
    }

    /// Read values leniently, as fio 3.33 does (`--compat=fio`).
    pub fn with_compat_fio(mut self, on: bool) -> Self {
        self.compat_fio = on;
        self
    }

    /// This process is rank `rank` of `ranks` (MPI), on `host`.
    pub fn with_rank(mut self, rank: u32, ranks: u32, host: &str) -> Self {
        self.vars = vec![
            ("IOSCOPE_RANK".into(), rank.to_string()),
            ("IOSCOPE_RANKS".into(), ranks.to_string()),
            ("IOSCOPE_HOST".into(), host.to_string()),
        ];
        self
    }

    fn var(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    }
}

/// This machine's host name (as the kernel's UTS namespace has it).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Expand `${VAR}` from the environment and `$ncpus`/`$mb_memory`/`$pagesize`.
/// Other `$words` (e.g. `$jobname` in filename_format) are left alone.
pub fn expand_value(v: &str, kw: &Keywords) -> Result<String, String> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or_else(|| format!("'{v}': '${{' without a closing '}}'"))?;
            let var = &body[..end];
            let val = kw
                .var(var)
                .ok_or_else(|| format!("environment variable '{var}' is not set"))?;
            out.push_str(&val);
            rest = &body[end + 1..];
            continue;
        }
        let word_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let word = &after[..word_len];
        match word {
            "ncpus" => out.push_str(&kw.ncpus.to_string()),
            "mb_memory" => out.push_str(&kw.mb_memory.to_string()),
            "pagesize" => out.push_str(&kw.pagesize.to_string()),
            _ => {
                out.push('$');
                out.push_str(word);
            }
        }
        rest = &after[word_len..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Vec<RawSection>, OptionsError> {
        let mut v = Vec::new();
        parse_text(Path::new("t.fio"), s, &mut v, 0).map(|_| v)
    }

    #[test]
    fn sections_comments_flags() {
        let v = parse(
            "; c\n[global]\nsize=4m ; comment\nbs=4k # c\n\n[j1]\ntime_based\nrw = randread\n",
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].entries[0].value.as_deref(), Some("4m"));
        assert_eq!(v[0].entries[1].value.as_deref(), Some("4k"));
        assert!(v[1].entries[0].value.is_none());
        assert_eq!(v[1].entries[1].key, "rw");
        assert_eq!(v[1].entries[1].loc.line, 8);
    }

    #[test]
    fn bad_syntax() {
        assert!(parse("size=4m\n").is_err());
        assert!(parse("[abc\n").is_err());
        let e = parse("[j]\ninclude /nonexistent/x.fio\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.fio:2"), "{e}");
    }

    #[test]
    fn expansion() {
        let kw = Keywords {
            vars: vec![("IOSCOPE_RANK".into(), "2".into())],
            ncpus: 2,
            mb_memory: 100,
            pagesize: 4096,
            compat_fio: false,
        };
        assert_eq!(expand_value("($ncpus*2)", &kw).unwrap(), "(2*2)");
        assert_eq!(
            expand_value("$jobname.$jobnum", &kw).unwrap(),
            "$jobname.$jobnum"
        );
        std::env::set_var("IOSCOPE_T_VAR", "xyz");
        assert_eq!(expand_value("a${IOSCOPE_T_VAR}b", &kw).unwrap(), "axyzb");
        assert!(expand_value("${IOSCOPE_SURELY_UNSET_VAR}", &kw).is_err());
        assert_eq!(expand_value("/d/f.${IOSCOPE_RANK}", &kw).unwrap(), "/d/f.2");
        let probed = Keywords::probe();
        assert_eq!(
            expand_value("${IOSCOPE_RANK}/${IOSCOPE_RANKS}", &probed).unwrap(),
            "0/1"
        );
        assert_eq!(
            expand_value("${IOSCOPE_HOST}", &probed).unwrap(),
            hostname()
        );
    }

    #[test]
    fn binary_and_utf8() {
        let e = text_from_bytes(Path::new("b"), vec![b'a', b'\n', 0, 1])
            .unwrap_err()
            .to_string();
        assert!(e.contains("b:2") && e.contains("binary"), "{e}");
        let e = text_from_bytes(Path::new("u"), vec![b'[', b'j', b']', b'\n', 0xff])
            .unwrap_err()
            .to_string();
        assert!(e.contains("u:2") && e.contains("UTF-8"), "{e}");
    }
}
