//! ioscope under MPI: `mpirun -np 3` on one machine, and across three "hosts" made of
//! network namespaces. The binary built with `--features mpi` is a prerequisite (`.ci/run`
//! builds it into its own target directory, so the default build is untouched); a
//! machine without it or Open MPI skips these tests visibly (and fails them under
//! CI=true).

use crate::common::netns::NetHosts;
use crate::common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One mpirun at a time: three ranks already oversubscribe two CPUs.
static MPIRUN: Mutex<()> = Mutex::new(());

/// The MPI build (a prerequisite of every test here: `Prereq::Mpi`).
fn bin_or_fail() -> PathBuf {
    mpi_build()
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `mpirun … -np N [extra_mpi] ioscope args` in `dir`, as root, ranks unbound.
fn mpirun_cmd(dir: &Path, np: u32, extra_mpi: &[&str], args: &[&str]) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
        "-np",
    ])
    .arg(np.to_string())
    .args(extra_mpi)
    .arg(bin_or_fail())
    .args(args)
    .current_dir(dir);
    cmd
}

fn mpirun(dir: &Path, np: u32, extra_mpi: &[&str], args: &[&str]) -> Out {
    let _one = MPIRUN.lock().unwrap_or_else(|p| p.into_inner());
    let out = mpirun_cmd(dir, np, extra_mpi, args)
        .output()
        .expect("run mpirun");
    let o = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !o.stderr.contains("panicked"),
        "a rank panicked:\n{}",
        o.stderr
    );
    o
}

fn json(o: &Out) -> Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}\nstderr:\n{}",
            o.stdout, o.stderr
        )
    })
}

/// client_stats entries of the hosts (not the aggregate).
fn host_entries(v: &Value) -> Vec<&Value> {
    v["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .filter(|e| e["jobname"] != "All clients")
        .collect()
}

fn aggregate(v: &Value) -> &Value {
    v["client_stats"]
        .as_array()
        .expect("client_stats")
        .iter()
        .find(|e| e["jobname"] == "All clients")
        .expect("an All clients entry")
}

/// json+ bins ({"ns": count}) summed over entries.
fn summed_bins(entries: &[&Value]) -> std::collections::BTreeMap<u64, u64> {
    let mut sum = std::collections::BTreeMap::new();
    for e in entries {
        let bins = e["read"]["clat_ns"]["bins"]
            .as_object()
            .expect("json+ bins");
        for (k, c) in bins {
            *sum.entry(k.parse::<u64>().expect("bin")).or_insert(0) += u(c);
        }
    }
    sum
}

/// fio's percentile rule on json+ bins: the first bin whose cumulative count reaches
/// ceil(p/100 · N)... reported as that bin's value.
fn percentile(bins: &std::collections::BTreeMap<u64, u64>, p: f64) -> u64 {
    let n: u64 = bins.values().sum();
    let want = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (&v, &c) in bins {
        seen += c;
        if seen >= want {
            return v;
        }
    }
    0
}

#[test]
fn three_ranks_merge_exactly_and_start_together() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    let o = mpirun(
        d.path(),
        3,
        &[],
        &[
            "--name=n",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=256m",
            "--output-format=json+",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    let hosts = host_entries(&v);
    assert_eq!(hosts.len(), 3, "one entry per rank");
    let mut ports: Vec<u64> = hosts.iter().map(|e| u(&e["port"])).collect();
    ports.sort_unstable();
    assert_eq!(ports, [0, 1, 2]);
    let all = aggregate(&v);
    let sum: u64 = hosts.iter().map(|e| u(&e["read"]["total_ios"])).sum();
    assert_eq!(u(&all["read"]["total_ios"]), sum);
    assert_eq!(sum, 3 * 65536, "each rank read its 256 MiB in 4k blocks");
    assert_eq!(u(&all["read"]["io_bytes"]), 3 * (256 << 20));
    // The aggregate's bins are the sum of the ranks' bins, and its percentiles are
    // those of the summed histogram (never an average of the ranks' percentiles). The
    // percentiles come from ioscope's finer buckets, json+ has fio's 1856: a reported
    // percentile lies in the fio bucket that the summed json+ bins give.
    let summed = summed_bins(&hosts);
    let agg = summed_bins(&[all]);
    assert_eq!(agg, summed);
    for (label, p) in [
        ("50.000000", 50.0),
        ("99.000000", 99.0),
        ("99.900000", 99.9),
    ] {
        let reported = u(&all["read"]["clat_ns"]["percentile"][label]);
        let fio_bucket = |v: u64| ioscope_stats::hist::fio_index(v);
        assert_eq!(
            fio_bucket(reported),
            fio_bucket(percentile(&summed, p)),
            "p{p}: {reported} vs {}",
            percentile(&summed, p)
        );
    }
    // All ranks started their I/O after one barrier.
    let starts: Vec<u64> = v["ioscope"]["hosts"]
        .as_array()
        .expect("ioscope.hosts")
        .iter()
        .map(|h| u(&h["job_start_ms"]))
        .collect();
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(spread <= 50, "job starts {starts:?} are {spread} ms apart");
}

#[test]
fn per_rank_files_and_logs() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    let dir = d.path().to_str().expect("utf-8 path");
    let job = format!(
        "[global]\nioengine=psync\nbs=4k\nsize=1m\nrw=write\n\n[w]\nfilename={dir}/data.${{IOSCOPE_RANK}}.of.${{IOSCOPE_RANKS}}\nwrite_lat_log={dir}/lat\n"
    );
    std::fs::write(d.path().join("w.fio"), job).expect("job file");
    let o = mpirun(d.path(), 3, &[], &["w.fio", "--output-format=json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    for e in host_entries(&v) {
        let rank = u(&e["port"]);
        let host = e["hostname"].as_str().expect("hostname");
        let data = d.path().join(format!("data.{rank}.of.3"));
        assert_eq!(
            std::fs::metadata(&data).expect("the rank's file").len(),
            1 << 20
        );
        let log = d.path().join(format!("lat.{host}.{rank}_clat.1.log"));
        let text =
            std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
        assert_eq!(
            text.lines().count() as u64,
            u(&e["write"]["total_ios"]),
            "{}",
            log.display()
        );
    }
}

#[test]
fn a_failing_rank_is_reported_and_the_others_kept() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    for r in [0, 2] {
        std::fs::create_dir(d.path().join(format!("r{r}"))).expect("dir");
    }
    // Rank 1's file is a directory: its job cannot open it.
    std::fs::create_dir_all(d.path().join("r1/f")).expect("dir");
    let o = mpirun(
        d.path(),
        3,
        &[],
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--filename=r${IOSCOPE_RANK}/f",
            "--output-format=json",
        ],
    );
    assert_ne!(o.code, 0, "a rank failed:\n{}", o.stderr);
    let v = json(&o);
    let hosts = v["ioscope"]["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 3);
    let errors: Vec<Option<&str>> = hosts.iter().map(|h| h["error"].as_str()).collect();
    assert!(errors[0].is_none() && errors[2].is_none(), "{errors:?}");
    let e = errors[1].unwrap_or_else(|| panic!("rank 1 has an error: {hosts:?}"));
    assert!(e.contains("Is a directory"), "{e}");
    let kept: Vec<&Value> = host_entries(&v)
        .into_iter()
        .filter(|e| e["error"] == 0 && u(&e["write"]["io_bytes"]) == 256 << 10)
        .collect();
    assert_eq!(
        kept.len(),
        2,
        "ranks 0 and 2 wrote their files: {}",
        o.stdout
    );
    assert_eq!(u(&aggregate(&v)["write"]["io_bytes"]), 2 * (256 << 10));
    assert!(o.stderr.contains("rank 1"), "{}", o.stderr);
}

#[test]
fn one_ranks_bad_option_stops_all_before_any_io() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    let o = mpirun(
        d.path(),
        3,
        &[],
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--size=64k",
            "--bs=${IOSCOPE_BS}",
            "--filename=f.${IOSCOPE_RANK}",
        ],
    );
    // IOSCOPE_BS is unset: every rank fails the same way, and says so once.
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("IOSCOPE_BS"), "{}", o.stderr);
    assert!(o.stderr.contains("no rank started any I/O"), "{}", o.stderr);
    let job = "[w]\nioengine=psync\nrw=write\nsize=64k\nfilename=f.${IOSCOPE_RANK}\nnumjobs=${IOSCOPE_RANK}\n";
    std::fs::write(d.path().join("bad.fio"), job).expect("job file");
    let o = mpirun(d.path(), 3, &[], &["bad.fio"]);
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains("rank 0 ("),
        "rank 0's numjobs=0 is named: {}",
        o.stderr
    );
    assert!(!o.stderr.contains("rank 1 ("), "{}", o.stderr);
    for r in 0..3 {
        assert!(
            !d.path().join(format!("f.{r}")).exists(),
            "rank {r} laid out its file"
        );
    }
}

/// mpirun under a signal, three ranks on the null engine for up to a minute, signalled
/// after 3 s: (stdout, stderr, working directory).
fn signal_mpirun(sig: libc::c_int, format: &str) -> (String, String, tempfile::TempDir) {
    let d = tmpdir();
    let _one = MPIRUN.lock().unwrap_or_else(|p| p.into_inner());
    let format = format!("--output-format={format}");
    let args = [
        "--name=n",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=1g",
        "--time_based",
        "--runtime=60",
        &format,
    ];
    let child = mpirun_cmd(d.path(), 3, &[], &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun");
    std::thread::sleep(Duration::from_secs(3));
    let t = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().expect("wait");
    assert!(t.elapsed() < Duration::from_secs(10), "stopped promptly");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (stdout, stderr, d)
}

/// Every rank's results, merged, marked interrupted.
fn check_interrupted(v: &Value, what: &str) {
    let hosts = host_entries(v);
    assert_eq!(hosts.len(), 3, "every rank's results: {what}");
    for e in &hosts {
        assert!(u(&e["read"]["total_ios"]) > 0, "{what}");
    }
    let sum: u64 = hosts.iter().map(|e| u(&e["read"]["total_ios"])).sum();
    assert_eq!(u(&aggregate(v)["read"]["total_ios"]), sum, "{what}");
    assert_eq!(v["ioscope"]["interrupted"], true, "{what}");
}

/// Ctrl-C on mpirun: Open MPI aborts the job (SIGTERM to every rank, SIGKILL a second
/// later) and stops relaying output after about 16 KiB. Rank 0 saves the complete merged
/// report in the working directory first and says where; a normal report, short enough,
/// also arrives whole on stdout.
#[test]
fn sigint_on_mpirun_still_prints_merged_results() {
    require!(Prereq::Mpi, Prereq::Root);
    let (stdout, stderr, d) = signal_mpirun(libc::SIGINT, "json");
    let saved: Vec<_> = std::fs::read_dir(d.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json"))
        .collect();
    assert_eq!(saved.len(), 1, "one saved report: {stderr}");
    let text = std::fs::read_to_string(&saved[0]).expect("saved report");
    assert!(
        stderr.contains(&*saved[0].file_name().unwrap().to_string_lossy()),
        "stderr names the saved report: {stderr}"
    );
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    check_interrupted(&v, &stderr);
    assert!(
        stdout.starts_with(&text[..4096]),
        "stdout has the start of it"
    );
    assert!(stderr.contains("interrupted"), "{stderr}");

    let (stdout, stderr, _d) = signal_mpirun(libc::SIGINT, "normal");
    assert!(
        stdout.contains("run interrupted by SIGTERM"),
        "{stdout}\n{stderr}"
    );
    for r in 0..3 {
        assert!(
            stdout.contains(&format!(":{r}> n: (groupid=0")),
            "rank {r}: {stdout}"
        );
    }
    assert!(stdout.contains("All clients"), "{stdout}");
}

/// SIGUSR1 on mpirun is forwarded to every rank: a graceful stop, the whole merged JSON
/// report on stdout.
#[test]
fn sigusr1_on_mpirun_stops_gracefully_with_the_whole_report() {
    require!(Prereq::Mpi, Prereq::Root);
    let (stdout, stderr, _d) = signal_mpirun(libc::SIGUSR1, "json");
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\n{stderr}"));
    check_interrupted(&v, &stderr);
    assert_eq!(v["ioscope"]["signal"], "SIGUSR1", "{stderr}");
}

/// Three "hosts" on one machine (`common::netns`), reached by mpirun through `ip netns
/// exec` instead of ssh: `netns-agent` and `hosts` in the hosts' scratch directory.
///
/// mpirun runs AGENT HOST <orted command line for a shell>. Each host gets its own
/// host name and mount namespace; every host but the first mounts a private tmpfs
/// over the directory named in `private-dir` (when that file exists), so that files
/// written there are on that host only.
fn mpi_hosts(n: usize) -> Result<NetHosts, String> {
    let h = NetHosts::new(n)?;
    let dir = h.dir.path().display().to_string();
    let agent = h.dir.path().join("netns-agent");
    let host = h.dir.path().join("netns-host");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\nhost=$1; shift\nexec ip netns exec \"$host\" unshare --uts --mount {dir}/netns-host \"$host\" \"$@\"\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(
        &host,
        format!(
            "#!/bin/sh\nhostname \"$1\"\nprivate=$(cat {dir}/private-dir 2>/dev/null)\n\
             if [ \"$1\" != {first} ] && [ -n \"$private\" ]; then\n\
             mount -t tmpfs ioscope-test \"$private\" || exit 1\nfi\nshift\nexec /bin/sh -c \"$*\"\n",
            first = h.names[0]
        ),
    )
    .map_err(|e| e.to_string())?;
    Command::new("chmod")
        .arg("+x")
        .arg(&agent)
        .arg(&host)
        .status()
        .map_err(|e| e.to_string())?;
    let hostfile: String = h.names.iter().map(|n| format!("{n} slots=1\n")).collect();
    std::fs::write(h.dir.path().join("hosts"), hostfile).map_err(|e| e.to_string())?;
    Ok(h)
}

#[test]
fn three_network_namespace_hosts_in_one_report() {
    require!(Prereq::Mpi, Prereq::NetNs);
    let hosts = match mpi_hosts(3) {
        Ok(h) => h,
        Err(e) => skip!("network namespaces on a bridge: {e}"),
    };
    let agent = hosts.dir.path().join("netns-agent");
    let hostfile = hosts.dir.path().join("hosts");
    let cidr = format!("{}.0/24", hosts.subnet);
    let d = tmpdir();
    let (agent, hostfile) = (agent.to_str().unwrap(), hostfile.to_str().unwrap());
    let mca = [
        "--hostfile",
        hostfile,
        "--mca",
        "plm_rsh_agent",
        agent,
        "--mca",
        "plm_rsh_no_tree_spawn",
        "1",
        "--mca",
        "oob_tcp_if_include",
        &cidr,
        "--mca",
        "btl_tcp_if_include",
        &cidr,
        "--mca",
        "pml",
        "ob1",
        "--mca",
        "btl",
        "tcp,self",
    ];
    let o = mpirun(
        d.path(),
        3,
        &mca,
        &[
            "--name=n",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=64m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let v = json(&o);
    let mut names: Vec<String> = host_entries(&v)
        .iter()
        .map(|e| e["hostname"].as_str().expect("hostname").to_string())
        .collect();
    names.sort();
    assert_eq!(names, hosts.names, "one entry per namespace host");
    let sum: u64 = host_entries(&v)
        .iter()
        .map(|e| u(&e["read"]["total_ios"]))
        .sum();
    assert_eq!(u(&aggregate(&v)["read"]["total_ios"]), sum);
    assert_eq!(sum, 3 * 16384);

    // Logs on each host's own file system: without --gather-logs only rank 0's are
    // here; with it, every rank's, whole.
    let logs = d.path().join("logs");
    std::fs::create_dir(&logs).expect("logs dir");
    std::fs::write(hosts.dir.path().join("private-dir"), logs.to_str().unwrap())
        .expect("private-dir");
    let logged = |gather: bool| {
        let mut args = vec![
            "--name=n",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=16m",
            "--write_lat_log=logs/l",
            "--output-format=json",
        ];
        if gather {
            args.push("--gather-logs");
        }
        let o = mpirun(d.path(), 3, &mca, &args);
        assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
        (json(&o), o.stderr)
    };
    let clat_log = |e: &Value| {
        logs.join(format!(
            "l.{}.{}_clat.1.log",
            e["hostname"].as_str().unwrap(),
            e["port"]
        ))
    };
    let (v, _) = logged(false);
    let here: Vec<bool> = host_entries(&v)
        .iter()
        .map(|e| clat_log(e).exists())
        .collect();
    assert_eq!(
        here.iter().filter(|&&h| h).count(),
        1,
        "only rank 0's logs: {here:?}"
    );
    let (v, stderr) = logged(true);
    assert!(stderr.contains("ioscope: gathered 6 log files"), "{stderr}");
    for e in host_entries(&v) {
        let text = std::fs::read_to_string(clat_log(e))
            .unwrap_or_else(|err| panic!("{}: {err}\n{stderr}", clat_log(e).display()));
        assert_eq!(
            text.lines().count() as u64,
            u(&e["read"]["total_ios"]),
            "{}",
            clat_log(e).display()
        );
        assert_eq!(u(&e["read"]["total_ios"]), 4096);
    }
}

#[test]
fn without_mpi_a_multi_rank_launch_is_refused() {
    // The default build, started as if by mpirun as rank 1 of 3.
    let d = tmpdir();
    let env = [
        ("OMPI_COMM_WORLD_RANK".to_string(), "1".to_string()),
        ("OMPI_COMM_WORLD_SIZE".to_string(), "3".to_string()),
    ];
    let r = run_tool(
        &bin(),
        d.path(),
        &["--name=n", "--ioengine=null", "--size=1m"],
        &env,
    );
    if mpi_feature_in_default_build() {
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("built without MPI"), "{}", r.stderr);
    assert!(r.stderr.contains("--features mpi"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "no run: {}", r.stdout);
}

#[test]
fn subcommands_that_run_alone_refuse_a_multi_rank_launch() {
    let d = tmpdir();
    let env = [
        ("PMIX_RANK".to_string(), "0".to_string()),
        ("PMIX_SIZE".to_string(), "2".to_string()),
    ];
    for sub in ["quick", "fairness", "peak"] {
        let r = run_tool(&bin(), d.path(), &[sub, "--help"], &env);
        assert_eq!(r.code, 1, "{sub}: {}", r.stderr);
        assert!(
            r.stderr.contains("does not run across MPI ranks"),
            "{sub}: {}",
            r.stderr
        );
    }
    // The workflows do run across ranks: a build without MPI says how to get one.
    for sub in ["sweep", "compare"] {
        let r = run_tool(&bin(), d.path(), &[sub, "--help"], &env);
        if mpi_feature_in_default_build() {
            continue;
        }
        assert_eq!(r.code, 1, "{sub}: {}", r.stderr);
        assert!(
            r.stderr.contains("built without MPI"),
            "{sub}: {}",
            r.stderr
        );
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `cargo test --features mpi` builds the test binary itself with MPI.
fn mpi_feature_in_default_build() -> bool {
    cfg!(feature = "mpi")
}

/// A sweep file over `dir/data.${IOSCOPE_RANK}`: two size-bounded points (4 KiB and
/// 64 KiB blocks), each rank's target in `subdir` (which must exist: `directory=`).
fn rank_sweep(dir: &Path, subdir: &str) -> PathBuf {
    let text = format!(
        "[target]\ndirectory = \"{}/{subdir}\"\nfilename = \"data\"\nsize = \"2m\"\n\n\
         [defaults]\nioengine = \"psync\"\n\n[profiles.w]\nrw = \"write\"\n\n\
         [[sweep]]\nname = \"bs\"\nprofiles = [\"w\"]\naxes = {{ bs = [\"4k\", \"64k\"] }}\n",
        dir.display()
    );
    let path = dir.join("ranks.toml");
    std::fs::write(&path, text).expect("sweep file");
    path
}

#[test]
fn a_sweep_runs_every_point_on_every_rank() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    for r in 0..3 {
        std::fs::create_dir(d.path().join(format!("r{r}"))).expect("rank dir");
    }
    let sweep = rank_sweep(d.path(), "r${IOSCOPE_RANK}");
    let file = sweep.to_str().expect("utf-8");
    let o = mpirun(
        d.path(),
        3,
        &[],
        &[
            "sweep",
            "run",
            file,
            "-o",
            "out",
            "--live=live.jsonl",
            "--history=h.db",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("2 points: 2 run"), "{}", o.stdout);
    let live: Vec<Value> = std::fs::read_to_string(d.path().join("live.jsonl"))
        .expect("rank 0's stream")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // Each rank wrote its own target.
    for r in 0..3 {
        let data = d.path().join(format!("r{r}/data"));
        assert_eq!(
            std::fs::metadata(&data).expect("the rank's file").len(),
            2 << 20
        );
    }
    // Each point's result is the ranks' merged report, in fio's client shape.
    let mut csv_iops = Vec::new();
    for bs in ["4k", "64k"] {
        let p = d.path().join(format!("out/points/bs.w.bs-{bs}.json"));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&p).expect("point")).expect("JSON");
        let hosts = host_entries(&v);
        let mut ports: Vec<u64> = hosts.iter().map(|e| u(&e["port"])).collect();
        ports.sort_unstable();
        assert_eq!(ports, [0, 1, 2], "{}", p.display());
        let per_rank = (2u64 << 20) / if bs == "4k" { 4096 } else { 65536 };
        for e in &hosts {
            assert_eq!(u(&e["write"]["total_ios"]), per_rank, "{bs}");
        }
        let all = aggregate(&v);
        assert_eq!(u(&all["write"]["total_ios"]), 3 * per_rank, "{bs}");
        // The stream: every rank's intervals of this point add up to the merged report.
        let point = format!("bs.w.bs-{bs}");
        let mine: Vec<&Value> = live
            .iter()
            .filter(|l| l["type"] == "interval" && l["point"] == point.as_str())
            .collect();
        let mut ranks: Vec<u64> = mine.iter().map(|l| u(&l["rank"])).collect();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks, [0, 1, 2], "{point}");
        let ios: u64 = mine.iter().map(|l| u(&l["write"]["ios"])).sum();
        assert_eq!(ios, 3 * per_rank, "{point}");
        assert_eq!(v["ioscope"]["sweep"]["axes"]["bs"], bs);
        csv_iops.push(all["write"]["iops"].as_f64().expect("iops"));
    }
    // The history has each point's merged run.
    let r = run_in(d.path(), &["history", "--db=h.db", "list", "--json"]);
    let rows: Value = serde_json::from_str(&r.stdout).expect("the history");
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "{rows}");
    // The report reads the aggregate: results.csv has one row per point, its IOPS.
    let csv = std::fs::read_to_string(d.path().join("out/results.csv")).expect("results.csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let head: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let col = head.iter().position(|h| *h == "iops").expect("iops column");
    for (row, want) in rows.iter().zip(&csv_iops) {
        let got: f64 = row
            .split(',')
            .nth(col)
            .and_then(|x| x.parse().ok())
            .expect("iops");
        assert!((got - want).abs() <= want * 1e-6 + 0.01, "{row} vs {want}");
    }
}

#[test]
fn one_ranks_bad_point_stops_the_sweep_before_any_io() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    // No r2: rank 2's `directory=` does not exist.
    for r in 0..2 {
        std::fs::create_dir(d.path().join(format!("r{r}"))).expect("rank dir");
    }
    let sweep = rank_sweep(d.path(), "r${IOSCOPE_RANK}");
    let file = sweep.to_str().expect("utf-8");
    let o = mpirun(d.path(), 3, &[], &["sweep", "run", file, "-o", "out"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains("rank 2 ("),
        "names the rank: {}",
        o.stderr
    );
    assert!(o.stderr.contains("/r2"), "and its directory: {}", o.stderr);
    for r in 0..2 {
        assert!(
            !d.path().join(format!("r{r}/data")).exists(),
            "rank {r} did no I/O"
        );
    }
}

#[test]
fn compare_runs_both_sides_on_every_rank() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    let job = |bs: &str| format!("[j]\nioengine=null\nrw=randread\nbs={bs}\nsize=64m\n");
    std::fs::write(d.path().join("a.fio"), job("4k")).expect("a");
    std::fs::write(d.path().join("b.fio"), job("64k")).expect("b");
    let o = mpirun(
        d.path(),
        3,
        &[],
        &[
            "compare", "--run", "--repeat", "2", "-o", "ab", "a.fio", "b.fio",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    for (side, bs) in [("a", 4096u64), ("b", 65536)] {
        for i in 1..=2 {
            let p = d.path().join(format!("ab/{side}-{i}.json"));
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(&p).expect("result")).expect("JSON");
            let hosts = host_entries(&v);
            assert_eq!(hosts.len(), 3, "{}", p.display());
            assert_eq!(u(&aggregate(&v)["read"]["total_ios"]), 3 * (64 << 20) / bs);
        }
    }
    // The table compares the aggregates: 3 ranks' I/Os per side.
    assert!(o.stdout.contains("All clients  read  iops"), "{}", o.stdout);
}

#[test]
fn the_live_stream_and_history_cover_every_rank() {
    require!(Prereq::Mpi, Prereq::Root);
    let d = tmpdir();
    let o = mpirun(
        d.path(),
        2,
        &[],
        &[
            "--name=n",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--rate_iops=2000",
            "--output-format=json",
            "--live=live.jsonl",
            "--live-interval=250ms",
            "--history=h.db",
            "--label=m",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json(&o);
    let text = std::fs::read_to_string(d.path().join("live.jsonl")).expect("rank 0's stream");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            schema::validate("live-stream", &v);
            v
        })
        .collect();
    let ios = |t: &str, rank: Option<u64>| -> u64 {
        lines
            .iter()
            .filter(|l| l["type"] == t && rank.is_none_or(|r| l["rank"] == r))
            .map(|l| u(&l["read"]["ios"]))
            .sum()
    };
    for h in host_entries(&v) {
        let r = u(&h["port"]);
        let n = lines
            .iter()
            .filter(|l| l["type"] == "interval" && l["rank"] == r)
            .count();
        assert!(n >= 3, "rank {r}: {n} intervals in 2 s at 250 ms");
        assert_eq!(
            ios("interval", Some(r)),
            u(&h["read"]["total_ios"]),
            "rank {r}"
        );
    }
    let all = u(&aggregate(&v)["read"]["total_ios"]);
    assert_eq!(ios("aggregate", None), all, "the aggregate lines add up");
    let r = run_in(d.path(), &["history", "--db=h.db", "list", "--json"]);
    let rows: Value = serde_json::from_str(&r.stdout).expect("the history");
    assert_eq!(rows.as_array().map(Vec::len), Some(1));
    // Recorded: the run of all ranks (the "All clients" figures).
    let (got, want) = (
        rows[0]["read"]["iops"].as_f64().unwrap_or(0.0),
        aggregate(&v)["read"]["iops"].as_f64().unwrap_or(-1.0),
    );
    assert!(
        (got - want).abs() < 1.0,
        "history {got} IOPS, report {want}"
    );
}
