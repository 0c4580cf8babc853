//! ioscope as an installed tool: `--version`, the completion scripts in bash, zsh and fish
//! (each in the real shell), the man page, documented exit statuses, the examples of
//! every help, colour, and the Debian package installed into a throwaway root.

use crate::common::*;
use ioscope::COMMANDS;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sh(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ------------------------------------------------------------------------- version

#[test]
fn version_names_the_commit_the_build_and_the_fio_it_follows() {
    let d = tmpdir();
    let r = run_in(d.path(), &["--version"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = r.stdout.trim_end();
    assert!(
        line.starts_with(&format!("ioscope-{} (commit ", env!("CARGO_PKG_VERSION")))
            && line.contains(", built 20")
            && line.contains("; features: ")
            && line.ends_with("; follows fio-3.42)"),
        "{line}"
    );
    // The JSON form follows docs/schema/version.schema.json (run_json checks it).
    let (_, v) = run_json(d.path(), &["--version", "--json"]);
    let commit = v["commit"].as_str().unwrap_or_default().to_string();
    assert_eq!(v["fio_compat"], "fio-3.42");
    assert!(
        v["build_date"].as_str().is_some_and(|s| s.len() == 10),
        "{v}"
    );
    // Built from a git checkout: the commit is HEAD's.
    let head =
        sh(Command::new("git").args(["-C", &repo().display().to_string(), "rev-parse", "HEAD"]));
    if head.code == 0 {
        assert_eq!(commit, head.stdout.trim(), "{v}");
    }
    assert!(line.contains(&commit[..12.min(commit.len())]), "{line}");
    // Invoked as fio: the fio release it follows, as harnesses expect of `fio --version`.
    let fio = d.path().join("fio");
    std::os::unix::fs::symlink(bin(), &fio).unwrap();
    let r = run_tool(&fio, d.path(), &["--version"], &[]);
    assert_eq!(r.stdout, "fio-3.42\n");
    // --json alone is no report format.
    let r = run_in(
        d.path(),
        &["--json", "--name=x", "--ioengine=null", "--size=1m"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--json goes with --version"),
        "{}",
        r.stderr
    );
}

// --------------------------------------------------------------------- completions

/// A directory to complete in: files and a directory whose names start with `s`.
fn completion_dir() -> tempfile::TempDir {
    let d = tmpdir();
    std::fs::write(d.path().join("seq.fio"), "[x]\n").unwrap();
    std::fs::create_dir(d.path().join("sruns")).unwrap();
    d
}

/// The cases every shell must complete, as (command line, words that must be offered,
/// words that must not).
type Case = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);
const CASES: &[Case] = &[
    ("ioscope sw", &["sweep"], &["peak"]),
    (
        "ioscope --rw=rand",
        &["randread", "randwrite", "randrw"],
        &["read", "write"],
    ),
    (
        "fio --ioengine=io_",
        &["io_uring", "io_uring_cmd"],
        &["libaio"],
    ),
    ("ioscope sweep ", &["plan", "run", "status", "import"], &[]),
    ("ioscope sweep run q.toml --ret", &["--retry-failed"], &[]),
    ("ioscope peak --engine=li", &["libaio"], &[]),
    ("ioscope completions ", &["bash", "zsh", "fish"], &[]),
    ("ioscope help q", &["quick"], &[]),
    // Under the name fio there are no subcommands: files only.
    ("fio s", &["seq.fio"], &["sweep"]),
    // Job options only on the fio face.
    ("ioscope peak --iodep", &[], &["--iodepth="]),
    ("ioscope --color=ne", &["never"], &[]),
];

/// What `shell` offers for `line`, with the script `script` loaded.
fn offered(shell: &str, script: &Path, dir: &Path, line: &str) -> Vec<String> {
    let r = match shell {
        "bash" => {
            // bash splits the words as readline would (at '=' too, COMP_WORDBREAKS).
            let words = bash_words(line);
            let prog = format!(
                "source {script}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); \
                 _ioscope; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                script = script.display()
            );
            sh(Command::new("bash").arg("-c").arg(prog).current_dir(dir))
        }
        "zsh" => sh(Command::new("timeout")
            .arg("120")
            .args(["zsh", "-f"])
            .arg(repo().join("crates/cli/tests/data/zcomplete.zsh"))
            .arg(script)
            .arg(line)
            .current_dir(dir)),
        "fish" => sh(Command::new("fish")
            .arg("-c")
            .arg(format!(
                "source {}; complete -C {}",
                script.display(),
                fish_quote(line)
            ))
            .current_dir(dir)),
        _ => unreachable!(),
    };
    assert_eq!(r.code, 0, "{shell} completing '{line}': {}", r.stderr);
    assert!(r.stderr.is_empty(), "{shell} '{line}': {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            // fish: "word<TAB>description"; "--rw=randread" offers the value.
            let w = l.split('\t').next().unwrap_or("");
            let w = match (shell, line.rsplit(' ').next()) {
                ("fish", Some(last)) if last.contains('=') => {
                    w.split_once('=').map_or(w, |(_, v)| v)
                }
                _ => w,
            };
            w.trim_end_matches('/').to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// `line` as bash's COMP_WORDS (an empty last word when it ends with a space).
fn bash_words(line: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for w in line.split(' ') {
        match w.split_once('=') {
            Some((k, v)) if k.starts_with('-') => {
                words.extend([k.to_string(), "=".to_string(), v.to_string()]);
                if v.is_empty() {
                    words.pop();
                }
            }
            _ => words.push(w.to_string()),
        }
    }
    words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fish_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Every case completes as it should in `shell` with `script`.
fn completes_every_case(shell: &str, script: &Path) {
    let d = completion_dir();
    for (line, want, not) in CASES {
        let got = offered(shell, script, d.path(), line);
        for w in *want {
            assert!(
                got.iter().any(|g| g == w),
                "{shell}: '{line}<TAB>' offers {got:?}, not {w}"
            );
        }
        for w in *not {
            assert!(
                !got.iter().any(|g| g == w),
                "{shell}: '{line}<TAB>' offers {w}: {got:?}"
            );
        }
    }
    // A flag's value that is a directory: directories only.
    let got = offered(
        shell,
        script,
        d.path(),
        "ioscope sweep run q.toml --output=s",
    );
    assert_eq!(got, ["sruns"], "{shell}");
}

fn script_for(shell: &str, dir: &Path) -> PathBuf {
    let r = run_in(dir, &["completions", shell]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p = dir.join(format!("ioscope.{shell}"));
    std::fs::write(&p, &r.stdout).unwrap();
    p
}

#[test]
fn bash_completes_subcommands_verbs_flags_options_and_values() {
    require!(Prereq::Program {
        name: "bash",
        package: "bash"
    });
    let d = tmpdir();
    let script = script_for("bash", d.path());
    let syntax = sh(Command::new("bash").arg("-n").arg(&script));
    assert_eq!(syntax.code, 0, "{}", syntax.stderr);
    completes_every_case("bash", &script);
    // When '=' is no word break, the whole "--rw=rand" is one word.
    let c = completion_dir();
    let r = sh(Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(ioscope --rw=randw); COMP_CWORD=1; _ioscope; echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .current_dir(c.path()));
    assert_eq!(r.stdout.trim(), "--rw=randwrite");
}

#[test]
fn zsh_completes_subcommands_verbs_flags_options_and_values() {
    require!(Prereq::Program {
        name: "zsh",
        package: "zsh"
    });
    let d = tmpdir();
    let script = script_for("zsh", d.path());
    completes_every_case("zsh", &script);
}

#[test]
fn fish_completes_subcommands_verbs_flags_options_and_values() {
    require!(Prereq::Program {
        name: "fish",
        package: "fish"
    });
    let d = tmpdir();
    let script = script_for("fish", d.path());
    let syntax = sh(Command::new("fish").arg("-n").arg(&script));
    assert_eq!(syntax.code, 0, "{}", syntax.stderr);
    completes_every_case("fish", &script);
}

#[test]
fn completions_name_the_shells_there_are() {
    let d = tmpdir();
    let r = run_in(d.path(), &["completions", "tcsh"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("no completions for 'tcsh' (there are: bash, zsh, fish)"),
        "{}",
        r.stderr
    );
    let r = run_in(d.path(), &["completions"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("name one shell"), "{}", r.stderr);
}

// ------------------------------------------------------------------------ man page

#[test]
fn the_man_page_renders_every_section_without_warnings() {
    require!(
        Prereq::Program {
            name: "man",
            package: "man-db"
        },
        Prereq::Program {
            name: "groff",
            package: "groff-base"
        }
    );
    let page = repo().join("docs/man/ioscope.1");
    check_man_page(&page);
}

/// `man -l` shows every section, every subcommand and exit statuses; groff warns of
/// nothing.
fn check_man_page(page: &Path) {
    let r = sh(Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANWIDTH", "100")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = r.stdout;
    for s in [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "FIO FRONT END",
        "SUBCOMMANDS",
        "JOB OPTIONS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
    ] {
        assert!(
            text.lines().any(|l| l == s),
            "no section {s} in {}",
            page.display()
        );
    }
    for c in COMMANDS.iter().filter(|c| c.name != "fio") {
        assert!(text.contains(&format!("ioscope {}", c.name)), "{}", c.name);
    }
    for needle in [
        "--output-format=FORMAT",
        "iodepth",
        "I/O depth and batching",
        "a significant regression",
        "NO_COLOR",
        "IOSCOPE_COMPAT",
        "ioscope sweep run qd.toml -o runs/qd",
    ] {
        assert!(text.contains(needle), "the man page lacks {needle}");
    }
    let plain = page.extension().map_or(true, |x| x != "gz");
    if plain {
        let w = sh(Command::new("groff")
            // Every warning but a line too long to adjust (a long default value).
            .args(["-man", "-Tutf8", "-ww", "-Wbreak", "-z"])
            .arg(page));
        assert!(w.stderr.is_empty(), "groff warns: {}", w.stderr);
    }
}

// ------------------------------------------------------------ exits and examples

#[test]
fn every_command_documents_its_exit_statuses_and_a_bad_flag_exits_1() {
    let d = tmpdir();
    for c in COMMANDS {
        let codes: Vec<u8> = c.exits.iter().map(|e| e.code).collect();
        assert!(
            codes.starts_with(&[0]) && codes.contains(&1),
            "{}: {codes:?}",
            c.name
        );
        let mut args: Vec<&str> = if c.name == "fio" {
            vec![]
        } else {
            vec![c.name]
        };
        args.push("--help");
        let help = run_in(d.path(), &args).stdout;
        let part = help
            .split("\nExit status:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{}: no exit statuses in --help", c.name));
        for e in c.exits {
            assert!(
                part.lines()
                    .any(|l| l.trim_start().starts_with(&e.code.to_string())),
                "{}: {} missing in\n{part}",
                c.name,
                e.code
            );
        }
        args.pop();
        args.push("--no-such-flag");
        let r = run_in(d.path(), &args);
        assert_eq!(r.code, 1, "{} --no-such-flag: {}", c.name, r.stderr);
        assert!(r.stderr.contains("no-such-flag"), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}: {}", c.name, r.stdout);
    }
}

#[test]
fn every_example_in_the_help_parses() {
    for c in COMMANDS {
        assert!(!c.examples.is_empty(), "{} has no example", c.name);
        for e in c.examples {
            let words: Vec<std::ffi::OsString> = e
                .split_whitespace()
                .skip(1)
                .map(std::ffi::OsString::from)
                .collect();
            assert!(e.starts_with("ioscope "), "{e}");
            if let Err(err) = ioscope::parse_line(&words) {
                panic!("{}: the example `{e}` does not parse: {err:#}", c.name);
            }
        }
    }
}

// ------------------------------------------------------------------------- package

/// dpkg on a throwaway root: its own database, maintainer scripts run outside a chroot
/// (the root has no shell), libc6 taken as given (the root has none).
fn dpkg(root: &Path, args: &[&str]) -> Run {
    sh(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args([
            "--force-depends",
            "--force-script-chrootless",
            "--force-not-root",
        ])
        .args(args))
}

/// Install the package into a throwaway root with dpkg.
fn unpack(deb: &Path, root: &Path) {
    let db = root.join("var/lib/dpkg");
    for sub in ["info", "updates", "triggers", "alternatives"] {
        std::fs::create_dir_all(db.join(sub)).unwrap();
    }
    std::fs::write(db.join("status"), "").unwrap();
    std::fs::write(db.join("available"), "").unwrap();
    let r = dpkg(root, &["-i", &deb.display().to_string()]);
    assert_eq!(r.code, 0, "dpkg -i: {}{}", r.stdout, r.stderr);
    let s = dpkg(root, &["-s", "ioscope"]);
    assert!(
        s.stdout.contains("Status: install ok installed"),
        "{}",
        s.stdout
    );
}

#[test]
fn the_debian_package_installs_a_working_tool() {
    require!(
        Prereq::DebPackage,
        Prereq::Root,
        Prereq::Program {
            name: "dpkg-deb",
            package: "dpkg"
        },
        Prereq::Program {
            name: "bash",
            package: "bash"
        },
        Prereq::Program {
            name: "zsh",
            package: "zsh"
        },
        Prereq::Program {
            name: "fish",
            package: "fish"
        },
        Prereq::Program {
            name: "man",
            package: "man-db"
        }
    );
    let deb = deb_package().expect("package");
    let d = tmpdir();
    let root = d.path().join("root");
    unpack(&deb, &root);
    // The control file: a package of this version that depends on libc only.
    let info = sh(Command::new("dpkg-deb")
        .args(["-f"])
        .arg(&deb)
        .args(["Package", "Version", "Depends"]));
    assert!(info.stdout.contains("Package: ioscope"), "{}", info.stdout);
    assert!(
        info.stdout
            .contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        info.stdout
    );
    assert!(
        info.stdout.contains("Depends: libc6 (>= 2."),
        "{}",
        info.stdout
    );
    for f in [
        "usr/bin/ioscope",
        "usr/share/man/man1/ioscope.1.gz",
        "usr/share/bash-completion/completions/ioscope",
        "usr/share/zsh/vendor-completions/_ioscope",
        "usr/share/fish/vendor_completions.d/ioscope.fish",
        "usr/share/doc/ioscope/README.md",
        "usr/share/doc/ioscope/cli.md",
        "usr/share/doc/ioscope/copyright",
        "usr/share/doc/ioscope/schema/compare.schema.json",
        "usr/share/doc/ioscope/examples/sweep.toml",
        "usr/lib/ioscope/fio-alternative",
    ] {
        assert!(root.join(f).is_file(), "the package lacks /{f}");
    }
    // Nothing installed as /usr/bin/fio: that is for the user to ask for.
    assert!(!root.join("usr/bin/fio").exists());
    // The installed binary is this commit's, and runs a job.
    let installed = root.join("usr/bin/ioscope");
    let want = run_in(d.path(), &["--version", "--json"]).stdout;
    let got = run_tool(&installed, d.path(), &["--version", "--json"], &[]);
    let commit = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["commit"].clone();
    if commit(&got.stdout) != commit(&want) {
        // A package left from an earlier build (.ci/run always builds it afresh).
        skip!(
            "the package {} is of commit {}, not this one ({}): rebuild it with packaging/deb/build.sh",
            deb.display(),
            commit(&got.stdout),
            commit(&want)
        );
    }
    let r = run_tool(
        &installed,
        d.path(),
        &[
            "--name=x",
            "--ioengine=null",
            "--size=1m",
            "--bs=4k",
            "--output-format=json",
        ],
        &[],
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    // The link named fio is the fio face.
    let r = run_tool(
        &root.join("usr/lib/ioscope/fio"),
        d.path(),
        &["--version"],
        &[],
    );
    assert_eq!(r.stdout, "fio-3.42\n");
    check_man_page(&root.join("usr/share/man/man1/ioscope.1.gz"));
    completes_every_case(
        "bash",
        &root.join("usr/share/bash-completion/completions/ioscope"),
    );
    completes_every_case(
        "zsh",
        &root.join("usr/share/zsh/vendor-completions/_ioscope"),
    );
    completes_every_case(
        "fish",
        &root.join("usr/share/fish/vendor_completions.d/ioscope.fish"),
    );
}

#[test]
fn the_fio_alternative_is_made_on_request_and_never_over_an_installed_fio() {
    require!(
        Prereq::DebPackage,
        Prereq::Root,
        Prereq::Program {
            name: "update-alternatives",
            package: "dpkg"
        }
    );
    let deb = deb_package().expect("package");
    let d = tmpdir();
    let root = d.path().join("root");
    unpack(&deb, &root);
    let script = root.join("usr/lib/ioscope/fio-alternative");
    let alt = |verb: &str| {
        sh(Command::new("sh")
            .arg(&script)
            .arg(verb)
            .arg("--root")
            .arg(&root))
    };
    let r = alt("on");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let fio = root.join("usr/bin/fio");
    assert_eq!(
        std::fs::read_link(&fio).unwrap(),
        Path::new("/etc/alternatives/fio")
    );
    assert_eq!(
        std::fs::read_link(root.join("etc/alternatives/fio")).unwrap(),
        Path::new("/usr/lib/ioscope/fio")
    );
    assert_eq!(
        std::fs::read_link(root.join("usr/share/bash-completion/completions/fio")).unwrap(),
        Path::new("/etc/alternatives/fio.bash-completion")
    );
    let r = alt("off");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        std::fs::symlink_metadata(&fio).is_err(),
        "off leaves {fio:?}"
    );
    // Removing the package takes a fio alternative it made away with it.
    assert_eq!(alt("on").code, 0);
    let r = dpkg(&root, &["-r", "ioscope"]);
    assert_eq!(r.code, 0, "dpkg -r: {}{}", r.stdout, r.stderr);
    assert!(
        std::fs::symlink_metadata(&fio).is_err(),
        "dpkg -r leaves {fio:?}"
    );
    assert!(!root.join("usr/bin/ioscope").exists());
    unpack(&deb, &root);
    // An installed fio stays.
    std::fs::create_dir_all(fio.parent().unwrap()).unwrap();
    std::fs::write(&fio, "#!/bin/sh\necho real fio\n").unwrap();
    let r = alt("on");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("is an installed fio and stays"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&fio).unwrap(),
        "#!/bin/sh\necho real fio\n"
    );
}

// ------------------------------------------------------------------------- schemas

#[test]
fn every_schema_compiles_and_refuses_what_is_not_its_document() {
    let dir = repo().join("docs/schema");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".schema.json").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for n in &names {
        assert!(
            readme.contains(&format!("({n}.schema.json)")),
            "README.md lacks {n}"
        );
        for wrong in [
            serde_json::json!("a string"),
            serde_json::json!({"x": [1, 2]}),
        ] {
            let refused = std::panic::catch_unwind(|| schema::validate(n, &wrong)).is_err();
            assert!(refused, "{n} accepts {wrong}");
        }
    }
    // A real document, made a little wrong, is refused with the place named.
    let d = tmpdir();
    let (_, mut v) = run_json(d.path(), &["--version", "--json"]);
    v["features"] = serde_json::json!("mpi");
    let err = std::panic::catch_unwind(|| schema::validate("version", &v)).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("/features"), "{msg}");
}
