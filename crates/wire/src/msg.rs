//! The commands and their small payloads (sizes and offsets as fio 3.42 sends them).

use crate::WireError;

/// Opcodes.
pub mod op {
    pub const QUIT: u16 = 1;
    pub const EXIT: u16 = 2;
    pub const JOB: u16 = 3;
    pub const JOBLINE: u16 = 4;
    pub const TEXT: u16 = 5;
    pub const TS: u16 = 6;
    pub const GS: u16 = 7;
    pub const SEND_ETA: u16 = 8;
    pub const ETA: u16 = 9;
    pub const PROBE: u16 = 10;
    pub const START: u16 = 11;
    pub const STOP: u16 = 12;
    pub const DISK_UTIL: u16 = 13;
    pub const SERVER_START: u16 = 14;
    pub const ADD_JOB: u16 = 15;
    pub const RUN: u16 = 16;
    pub const IOLOG: u16 = 17;
    pub const UPDATE_JOB: u16 = 18;
    pub const LOAD_FILE: u16 = 19;
    pub const VTRIGGER: u16 = 20;
    pub const SENDFILE: u16 = 21;
    pub const JOB_OPT: u16 = 22;

    /// The command's name, for messages.
    pub fn name(op: u16) -> String {
        const NAMES: [&str; 23] = [
            "",
            "QUIT",
            "EXIT",
            "JOB",
            "JOBLINE",
            "TEXT",
            "TS",
            "GS",
            "SEND_ETA",
            "ETA",
            "PROBE",
            "START",
            "STOP",
            "DISK_UTIL",
            "SERVER_START",
            "ADD_JOB",
            "RUN",
            "IOLOG",
            "UPDATE_JOB",
            "LOAD_FILE",
            "VTRIGGER",
            "SENDFILE",
            "JOB_OPT",
        ];
        match NAMES.get(op as usize) {
            Some(n) if !n.is_empty() => (*n).to_string(),
            _ => format!("UNKNOWN/{op}"),
        }
    }
}

/// Text levels of a TEXT message.
pub const INFO: u32 = 2;
pub const ERROR: u32 = 3;

/// `s` into a fixed NUL-padded field of `n` bytes (cut to leave the NUL).
pub(crate) fn put_str(buf: &mut [u8], off: usize, n: usize, s: &str) {
    let b = s.as_bytes();
    let len = b.len().min(n - 1);
    buf[off..off + len].copy_from_slice(&b[..len]);
}

pub(crate) fn put_u32(buf: &mut [u8], off: usize, v: u32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(buf: &mut [u8], off: usize, v: u64) {
    buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// A double in its 16-byte slot.
pub(crate) fn put_f64(buf: &mut [u8], off: usize, v: f64) {
    buf[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// Who answers a PROBE.
pub struct Host<'a> {
    pub hostname: &'a str,
    /// What fio prints as the server's version (`fio-3.42`).
    pub version: &'a str,
    pub cpus: u32,
}

/// The reply to a PROBE (112 bytes): host name, byte order, version, OS (Linux),
/// architecture, pointer size, CPUs, and the capability flags (bit 0: zlib, which
/// this end has).
pub fn probe_reply(h: &Host) -> Vec<u8> {
    let mut b = vec![0u8; 112];
    put_str(&mut b, 0, 64, h.hostname);
    b[64] = u8::from(cfg!(target_endian = "big"));
    put_str(&mut b, 65, 32, h.version);
    b[97] = 1; // Linux
    b[98] = arch();
    b[99] = std::mem::size_of::<usize>() as u8;
    put_u32(&mut b, 100, h.cpus);
    put_u64(&mut b, 104, PROBE_ZLIB);
    b
}

/// A PROBE's capability bit: this end inflates (a client) or deflates (a server)
/// logs' samples.
pub const PROBE_ZLIB: u64 = 1;

/// fio's architecture numbers.
fn arch() -> u8 {
    match std::env::consts::ARCH {
        "x86_64" => 1,
        "x86" => 2,
        "powerpc" | "powerpc64" => 3,
        "s390x" => 5,
        "sparc64" => 8,
        "arm" => 9,
        "mips" | "mips64" => 12,
        "aarch64" => 13,
        "loongarch64" => 14,
        "riscv64" => 15,
        _ => 16,
    }
}

/// A line of text for the client's output: level, length, time, text.
pub fn text(level: u32, s: &str, unix: std::time::Duration) -> Vec<u8> {
    let mut b = vec![0u8; 24];
    put_u32(&mut b, 0, level);
    put_u32(&mut b, 4, s.len() as u32);
    put_u64(&mut b, 8, unix.as_secs());
    put_u64(&mut b, 16, u64::from(unix.subsec_micros()));
    b.extend_from_slice(s.as_bytes());
    b
}

/// START: the jobs that will run and the statistics reports the client will get (it
/// prints "All clients" once it has them all, from every server, and there are two
/// or more).
pub fn start(jobs: u32, reports: u32) -> Vec<u8> {
    let mut b = vec![0u8; 8];
    put_u32(&mut b, 0, jobs);
    put_u32(&mut b, 4, reports);
    b
}

/// STOP: the run's status (0 ok, 1 a job failed).
pub fn stop(status: u32) -> Vec<u8> {
    let mut b = vec![0u8; 8];
    put_u32(&mut b, 0, status);
    b
}

/// One option of a job for the client's JSON "job options" (200 bytes).
pub fn job_opt(global: bool, job: u32, name: &str, value: &str) -> Vec<u8> {
    let mut b = vec![0u8; 200];
    put_u32(&mut b, 0, u32::from(global));
    put_u32(&mut b, 4, job);
    put_str(&mut b, 8, 64, name);
    put_str(&mut b, 72, 128, value);
    b
}

/// Progress for the client's status line.
#[derive(Clone, Debug, Default)]
pub struct Eta {
    pub running: u32,
    pub ramping: u32,
    pub pending: u32,
    /// Current bandwidth KiB/s and IOPS per direction.
    pub kib_s: [u64; 3],
    pub iops: [u32; 3],
    pub elapsed_s: u64,
    /// Seconds left; `None` when unknown.
    pub eta_s: Option<u64>,
    pub files_open: u32,
    pub jobs: u32,
    /// One character per job (fio's `R` running, `_` done …), run-length written.
    pub states: String,
}

/// The ETA reply (168 bytes and the job states).
pub fn eta(e: &Eta) -> Vec<u8> {
    let mut b = vec![0u8; 168];
    put_u32(&mut b, 0, e.running);
    put_u32(&mut b, 4, e.ramping);
    put_u32(&mut b, 8, e.pending);
    for d in 0..3 {
        put_u64(&mut b, 64 + 8 * d, e.kib_s[d]);
        put_u32(&mut b, 112 + 4 * d, e.iops[d]);
    }
    put_u64(&mut b, 128, e.elapsed_s);
    put_u64(&mut b, 136, e.eta_s.unwrap_or(0x7FFF_FFFF));
    put_u32(&mut b, 144, 1);
    put_u32(&mut b, 148, 4);
    put_u32(&mut b, 152, 4);
    put_u32(&mut b, 156, e.files_open);
    put_u32(&mut b, 160, e.jobs);
    b.extend_from_slice(e.states.as_bytes());
    b.push(0);
    b
}

/// One block device's utilisation (256 bytes).
pub fn disk_util(d: &ioscope_stats::DiskUtil, period_ms: u64) -> Vec<u8> {
    let mut b = vec![0u8; 256];
    put_str(&mut b, 0, 64, &d.name);
    let pairs = [
        (64, d.read_ios, d.write_ios),
        (80, d.read_merges, d.write_merges),
        (96, d.read_sectors, d.write_sectors),
        (112, d.read_ticks, d.write_ticks),
    ];
    for (off, r, w) in pairs {
        put_u64(&mut b, off, r);
        put_u64(&mut b, off + 8, w);
    }
    // util% = 100 · busy / period: the busy time that gives our percentage.
    let busy = (d.util / 100.0 * period_ms as f64).round() as u64;
    put_u64(&mut b, 128, busy);
    put_u64(&mut b, 136, d.in_queue);
    put_u64(&mut b, 144, period_ms);
    b
}

fn le16(p: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(p.get(off..off + 2)?.try_into().ok()?))
}

fn le32(p: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(p.get(off..off + 4)?.try_into().ok()?))
}

fn malformed(op: u16, what: &str) -> WireError {
    WireError::Malformed {
        op,
        what: what.into(),
    }
}

/// A JOB's job file text (up to its NUL; fio's client pads it with other bytes).
pub fn job_text(p: &[u8]) -> Result<String, WireError> {
    let len = le32(p, 0).ok_or_else(|| malformed(op::JOB, "shorter than its header"))? as usize;
    let body = p.get(8..).unwrap_or_default();
    let body = &body[..len.min(body.len())];
    let end = body.iter().position(|&c| c == 0).unwrap_or(body.len());
    String::from_utf8(body[..end].to_vec()).map_err(|_| malformed(op::JOB, "job file is not UTF-8"))
}

/// A JOBLINE's arguments (argv[0], `fio`, left out).
pub fn job_line(p: &[u8]) -> Result<Vec<String>, WireError> {
    let bad = || malformed(op::JOBLINE, "argument list cut short");
    let argc = le16(p, 0).ok_or_else(bad)?;
    let mut off = 4;
    let mut args = Vec::new();
    for _ in 0..argc {
        let n = le16(p, off).ok_or_else(bad)? as usize;
        let s = p.get(off + 2..off + 2 + n).ok_or_else(bad)?;
        let s = s.strip_suffix(&[0]).unwrap_or(s);
        args.push(String::from_utf8_lossy(s).into_owned());
        off += 2 + n;
    }
    Ok(args.into_iter().skip(1).collect())
}

/// A LOAD_FILE's path (a job file on the server's file system: --remote-config).
pub fn load_file(p: &[u8]) -> Result<String, WireError> {
    let n = le16(p, 0).ok_or_else(|| malformed(op::LOAD_FILE, "no length"))? as usize;
    let s = p
        .get(4..4 + n)
        .ok_or_else(|| malformed(op::LOAD_FILE, "path cut short"))?;
    Ok(String::from_utf8_lossy(s).into_owned())
}

/// A client's PROBE (136 bytes): its capabilities (zlib: it inflates logs, as fio's
/// client does; a histogram log only travels so) and the server's address as
/// connected.
pub fn probe_request(server: &str) -> Vec<u8> {
    let mut b = vec![0u8; 136];
    put_u64(&mut b, 0, PROBE_ZLIB);
    put_str(&mut b, 8, 64, server);
    b
}

/// A client's JOBLINE: argc, the client type (1), each argument as length and text
/// with its NUL; argv[0] is `fio`.
pub fn job_line_request(args: &[String]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(args.len() as u16 + 1).to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    for a in std::iter::once("fio").chain(args.iter().map(String::as_str)) {
        b.extend_from_slice(&(a.len() as u16 + 1).to_le_bytes());
        b.extend_from_slice(a.as_bytes());
        b.push(0);
    }
    b
}

/// A client's LOAD_FILE (`--remote-config`): a job file on the server's side, by path.
pub fn load_file_request(path: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(path.len() + 5);
    b.extend_from_slice(&(path.len() as u16).to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(path.as_bytes());
    b.push(0);
    b
}

/// A client's JOB: the job file's text with its NUL.
pub fn job_request(text: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(text.len() + 9);
    b.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(text.as_bytes());
    b.push(0);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_line_and_job_text_as_fio_sends_them() {
        // Captured from fio 3.42's client: `fio --client=… --output-format=json+ job.fio`.
        let mut p = vec![2, 0, 1, 0, 4, 0];
        p.extend_from_slice(b"fio\0");
        p.extend_from_slice(&[22, 0]);
        p.extend_from_slice(b"--output-format=json+\0");
        assert_eq!(job_line(&p).unwrap(), ["--output-format=json+"]);
        assert_eq!(
            load_file(&load_file_request("/srv/j.fio")).unwrap(),
            "/srv/j.fio"
        );
        let mut j = Vec::new();
        j.extend_from_slice(&(8192u32 + 10).to_le_bytes());
        j.extend_from_slice(&1u32.to_le_bytes());
        j.extend_from_slice(b"[x]\nsize=1m\0garbage");
        assert_eq!(job_text(&j).unwrap(), "[x]\nsize=1m");
        assert!(job_line(&p[..9]).is_err());
        // What our client sends reads back the same.
        let args = vec!["--output-format=json+".to_string()];
        assert_eq!(job_line(&job_line_request(&args)).unwrap(), args);
        assert_eq!(job_text(&job_request("[x]\n")).unwrap(), "[x]\n");
    }

    #[test]
    fn probe_reply_names_the_host_and_version() {
        let b = probe_reply(&Host {
            hostname: "h",
            version: "fio-3.42",
            cpus: 2,
        });
        assert_eq!(b.len(), 112);
        assert_eq!(&b[0..2], b"h\0");
        assert_eq!(&b[65..74], b"fio-3.42\0");
        assert_eq!(b[97], 1);
        assert_eq!(b[104], 1, "this server deflates logs");
        assert!(crate::read::probe_wants_zlib(&probe_request("127.0.0.1")));
        assert!(!crate::read::probe_wants_zlib(&[0u8; 136]));
    }
}
