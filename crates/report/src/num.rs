//! Number formatting as fio prints it: scaled numbers with unit prefixes, bandwidth
//! pairs, latency lines with their unit choice, percentile blocks, sample lines.
//!
//! Written from fio's observable output (see the unit tests, which use lines from
//! real fio 3.33 runs), not from its source.

use ioscope_stats::{LatStat, SampleStat};

/// What a scaled number counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A bare count (IOPS, latency values): `39.6k`.
    None,
    /// Bytes: `310MiB`.
    Byte,
    /// Bytes per second: `155MiB/s`.
    BytePerSec,
    /// Bits per second (unit_base=1): `262Mibit/s`; the value given is in bytes/s.
    BitPerSec,
}

const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];

fn digits(n: u64) -> usize {
    let mut d = 1;
    let mut n = n / 10;
    while n > 0 {
        d += 1;
        n /= 10;
    }
    d
}

/// Scale `num` by 1024 (`pow2`) or 1000 until its integer part has at most `maxlen`
/// digits, then print it with the unit prefix. When it was scaled and there is room
/// (at least two spare digits), the remainder is shown as decimals filling the
/// budget (`66.1MiB`, `4850.0k`); otherwise it is rounded to the nearest integer
/// (`977KiB`). A decimal part that rounds up to 1 carries into the integer part
/// (`10.00KiB` for 10239 bytes, as fio prints it).
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    let maxlen = maxlen.max(1);
    let (mut num, suffix) = match unit {
        Unit::None => (num, ""),
        Unit::Byte => (num, "B"),
        Unit::BytePerSec => (num, "B/s"),
        Unit::BitPerSec => (num.saturating_mul(8), "bit/s"),
    };
    let base: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut idx = 0;
    let mut rem: Option<u64> = None;
    while digits(num) > maxlen && idx + 1 < prefixes.len() {
        rem = Some(num % base);
        num /= base;
        idx += 1;
    }
    let Some(rem) = rem else {
        return format!("{num}{}{suffix}", prefixes[idx]);
    };
    let len = digits(num);
    if maxlen < len + 2 {
        if rem * 2 >= base {
            num += 1;
        }
        return format!("{num}{}{suffix}", prefixes[idx]);
    }
    let decimals = maxlen - len - 1;
    let frac = format!("{:.*}", decimals, rem as f64 / base as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    let frac_digits = frac.get(2..).unwrap_or("");
    format!("{num}.{frac_digits}{}{suffix}", prefixes[idx])
}

/// Effective kb_base (1024 unless 1000).
pub fn kb_base(kb: u32) -> u32 {
    if kb == 1000 {
        1000
    } else {
        1024
    }
}

/// Significant figures for IOPS/bandwidth (fio's default 4; 1..=10).
pub fn sig_figs(s: u32) -> usize {
    if s == 0 {
        4
    } else {
        s.clamp(1, 10) as usize
    }
}

/// Bandwidth as fio's `BW=155MiB/s (162MB/s)`: (primary, alternative). The primary is
/// IEC unless kb_base=1000; unit_base=1 prints bits.
pub fn bw_pair(bytes_per_sec: u64, sig: usize, kb: u32, unit_base: u32) -> (String, String) {
    let unit = if unit_base == 1 {
        Unit::BitPerSec
    } else {
        Unit::BytePerSec
    };
    let iec = kb_base(kb) == 1024;
    (
        num2str(bytes_per_sec, sig, iec, unit),
        num2str(bytes_per_sec, sig, !iec, unit),
    )
}

/// A byte amount as (primary, alternative): `310MiB`, `325MB`.
pub fn bytes_pair(bytes: u64, sig: usize, kb: u32) -> (String, String) {
    let iec = kb_base(kb) == 1024;
    (
        num2str(bytes, sig, iec, Unit::Byte),
        num2str(bytes, sig, !iec, Unit::Byte),
    )
}

/// Unit of a latency line: (divisor from ns, name).
pub fn lat_unit(min: u64, max: u64, dev: f64) -> (u64, &'static str) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        (1_000_000, "msec")
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        (1000, "usec")
    } else {
        (1, "nsec")
    }
}

/// fio's `    NAME (unit): min=…, max=…, avg=…, stdev=…` line (with newline), or None
/// when there are no samples. `name` is `slat`, `clat`, ` lat`, `clat prio 1/0`, `sync`.
pub fn lat_line(name: &str, s: &LatStat) -> Option<String> {
    if s.n == 0 {
        return None;
    }
    let (min, max, mean, dev) = (s.min(), s.max, s.mean(), s.stddev());
    let (div, unit) = lat_unit(min, max, dev);
    Some(format!(
        "    {name} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}\n",
        num2str(min / div, 6, false, Unit::None),
        num2str(max / div, 6, false, Unit::None),
        mean / div as f64,
        dev / div as f64
    ))
}

/// Digits after the decimal point needed to print every percentile of the list
/// (fio's precision for `NN.NNth`), at most 6.
pub fn precision(list: &[f64]) -> usize {
    list.iter()
        .map(|p| {
            let s = format!("{p}");
            s.split_once('.').map(|(_, f)| f.len()).unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
        .min(6)
}

/// A percentile block: header `    NAME percentiles (unit):` and rows
/// `     |  1.00th=[   72],  5.00th=[   87], …`. `vals` are (percentile, ns) in
/// ascending order. The unit is chosen on the smallest and largest value; values are
/// divided rounding up.
pub fn percentile_block(name: &str, vals: &[(f64, u64)], prec: usize) -> String {
    let mut out = String::new();
    let (Some(minv), Some(maxv)) = (
        vals.iter().map(|v| v.1).min(),
        vals.iter().map(|v| v.1).max(),
    ) else {
        return out;
    };
    let (div, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1000, "usec")
    } else {
        (1, "nsec")
    };
    let scaled: Vec<u64> = vals.iter().map(|v| v.1.div_ceil(div)).collect();
    let width = digits(scaled.iter().copied().max().unwrap_or(0)).max(5);
    let per_line = (73 / (prec + 10 + width)).max(1);
    out.push_str(&format!("    {name} percentiles ({unit}):\n"));
    let last = vals.len() - 1;
    for (i, (&(p, _), v)) in vals.iter().zip(&scaled).enumerate() {
        if i % per_line == 0 {
            out.push_str("     |");
        }
        out.push_str(&format!(
            " {:>pw$.prec$}th=[{:>width$}]",
            p,
            v,
            pw = prec + 3
        ));
        if i != last {
            out.push(',');
        }
        if i == last || (i + 1) % per_line == 0 {
            out.push('\n');
        }
    }
    out
}

/// Share of the group's aggregate bandwidth (%), capped at 100, from the mean of the
/// bandwidth samples (KiB/s) and the aggregate (bytes/s).
pub fn bw_agg_pct(bw: &SampleStat, agg_bytes: u64) -> f64 {
    if bw.n == 0 {
        return 0.0;
    }
    let agg_kib = agg_bytes / 1024;
    if agg_kib == 0 {
        return 100.0;
    }
    (bw.mean * 100.0 / agg_kib as f64).min(100.0)
}

/// `   bw (  KiB/s): min=…, max=…, per=…%, avg=…, stdev=…, samples=N` or None
/// without samples. Switches to MiB/s (MB/s) when the mean exceeds kb_base² KiB/s.
pub fn bw_line(bw: &SampleStat, agg_bytes: u64, kb: u32) -> Option<String> {
    if bw.n == 0 {
        return None;
    }
    let per = bw_agg_pct(bw, agg_bytes);
    let k = kb_base(kb) as f64;
    let (mut min, mut max, mut mean, mut dev) = (bw.min, bw.max, bw.mean, bw.stddev());
    let mut label = if k == 1000.0 { "kB" } else { "KiB" };
    if mean > k * k {
        min /= k;
        max /= k;
        mean /= k;
        dev /= k;
        label = if k == 1000.0 { "MB" } else { "MiB" };
    }
    Some(format!(
        "   bw ({label:>5}/s): min={:5}, max={:5}, per={per:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}\n",
        min as u64, max as u64, bw.n
    ))
}

/// `   iops        : min=…, max=…, avg=…, stdev=…, samples=N` or None without samples.
pub fn iops_line(iops: &SampleStat) -> Option<String> {
    if iops.n == 0 {
        return None;
    }
    Some(format!(
        "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}\n",
        iops.min as u64,
        iops.max as u64,
        iops.mean,
        iops.stddev(),
        iops.n
    ))
}

/// ctime(3)-style local time of a Unix time in ms: `Sat Nov 21 05:19:58 2026`.
pub fn ctime(unix_ms: u64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t = (unix_ms / 1000) as libc::time_t;
    // SAFETY: localtime_r only writes the tm we own; a zeroed tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return String::new();
    }
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS.get(tm.tm_wday as usize).unwrap_or(&"???"),
        MONTHS.get(tm.tm_mon as usize).unwrap_or(&"???"),
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year as i64 + 1900
    )
}

/// The text of an errno value (`No space left on device`, `Success` for 0).
pub fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(vals: &[f64]) -> SampleStat {
        let mut s = SampleStat::default();
        for &v in vals {
            s.add(v);
        }
        s
    }

    #[test]
    fn num2str_like_fio() {
        // IOPS (4 significant figures, SI, no unit), from fio 3.33 outputs.
        assert_eq!(num2str(39647, 4, false, Unit::None), "39.6k");
        assert_eq!(num2str(14418, 4, false, Unit::None), "14.4k");
        assert_eq!(num2str(4759, 4, false, Unit::None), "4759");
        assert_eq!(num2str(1995000, 4, false, Unit::None), "1995k");
        assert_eq!(num2str(132000, 4, false, Unit::None), "132k");
        // Latency min/max (6 digits).
        assert_eq!(num2str(4850042, 6, false, Unit::None), "4850.0k");
        assert_eq!(num2str(1141123, 6, false, Unit::None), "1141.1k");
        assert_eq!(num2str(124753, 6, false, Unit::None), "124753");
        // Block sizes in the job header line (measured with fio 3.33 --bs=N).
        let bs = |n| num2str(n, 4, true, Unit::Byte);
        assert_eq!(bs(4096), "4096B");
        assert_eq!(bs(16384), "16.0KiB");
        assert_eq!(bs(16896), "16.5KiB");
        assert_eq!(bs(17000), "16.6KiB");
        assert_eq!(bs(10239), "10.00KiB");
        assert_eq!(bs(99999), "97.7KiB");
        assert_eq!(bs(102400), "100KiB");
        assert_eq!(bs(1000000), "977KiB");
        assert_eq!(bs(1047552), "1023KiB");
        assert_eq!(bs(1048064), "1024KiB");
        assert_eq!(bs(123456789), "118MiB");
        assert_eq!(bs(131072), "128KiB");
        assert_eq!(num2str(16000, 4, false, Unit::Byte), "16.0kB");
        assert_eq!(num2str(0, 4, true, Unit::Byte), "0B");
        assert_eq!(num2str(u64::MAX, 4, true, Unit::Byte), "16.0EiB");
    }

    #[test]
    fn bandwidth_pairs() {
        // IOPS=39.6k, BW=155MiB/s (162MB/s)(310MiB/2001msec)
        let io = 79335u64 * 4096;
        let bw = io * 1000 / 2001;
        assert_eq!(
            bw_pair(bw, 4, 1024, 0),
            ("155MiB/s".into(), "162MB/s".into())
        );
        assert_eq!(bytes_pair(io, 4, 1024), ("310MiB".into(), "325MB".into()));
        // write: IOPS=16.9k, BW=66.1MiB/s (69.3MB/s)(132MiB/2001msec)
        let io = 33856u64 * 4096;
        assert_eq!(
            bw_pair(io * 1000 / 2001, 4, 1024, 0),
            ("66.1MiB/s".into(), "69.3MB/s".into())
        );
        // kb_base=1000 swaps: BW=4080MB/s (3891MiB/s)(8159kB/2msec)
        let io = 1992u64 * 4096;
        assert_eq!(
            bw_pair(io * 1000 / 2, 4, 1000, 0),
            ("4080MB/s".into(), "3891MiB/s".into())
        );
        assert_eq!(bytes_pair(io, 4, 1000), ("8159kB".into(), "7968KiB".into()));
        // unit_base=1: BW=262Mibit/s (274Mbit/s)(32.7MiB/1001msec)
        let io = 8377u64 * 4096;
        let (a, b) = bw_pair(io * 1000 / 1001, 4, 1024, 1);
        assert_eq!((a.as_str(), b.as_str()), ("262Mibit/s", "274Mbit/s"));
    }

    #[test]
    fn latency_lines() {
        let mk = |min: u64, max: u64, vals: &[u64]| {
            let mut s = LatStat::default();
            s.add(min);
            s.add(max);
            for &v in vals {
                s.add(v);
            }
            s
        };
        // nsec when min <= 2000.
        let s = mk(1502, 4_850_042, &[100_000, 120_000]);
        let l = lat_line("clat", &s).unwrap_or_default();
        assert!(
            l.starts_with("    clat (nsec): min=1502, max=4850.0k, avg="),
            "{l}"
        );
        // usec: min=3, max=4029
        let s = mk(3100, 4_029_000, &[6000, 6000, 6000, 6000]);
        let l = lat_line("slat", &s).unwrap_or_default();
        assert!(
            l.starts_with("    slat (usec): min=3, max=4029, avg="),
            "{l}"
        );
        // msec: min=1107, max=3115
        let s = mk(1_107_000_000, 3_115_000_000, &[1_800_000_000]);
        let l = lat_line(" lat", &s).unwrap_or_default();
        assert!(
            l.starts_with("     lat (msec): min=1107, max=3115, avg="),
            "{l}"
        );
        assert_eq!(lat_line("clat", &LatStat::default()), None);
        // The %5.02f fields: "avg= 6.21, stdev=16.95".
        assert_eq!(
            format!("avg={:5.2}, stdev={:5.2}", 6.2149, 16.951),
            "avg= 6.21, stdev=16.95"
        );
        assert_eq!(lat_unit(2001, 100_000, 1000.5), (1000, "usec"));
        assert_eq!(lat_unit(2000, 100_000, 1000.5), (1, "nsec"));
    }

    #[test]
    fn percentile_rows() {
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        assert_eq!(precision(&list), 2);
        assert_eq!(precision(&[50.0, 99.0]), 0);
        assert_eq!(precision(&[1.5, 99.999]), 3);
        // Values (ns) from a real run's json: 62720 → 63 usec (rounded up).
        let ns = [
            62720u64, 87500, 103900, 129900, 150600, 168700, 187392, 211500, 244700, 292700,
            362700, 436700, 700500, 856500, 1548300, 2056700, 5406720,
        ];
        let vals: Vec<(f64, u64)> = list.iter().copied().zip(ns).collect();
        let b = percentile_block("clat", &vals, 2);
        let want = "    clat percentiles (usec):
     |  1.00th=[   63],  5.00th=[   88], 10.00th=[  104], 20.00th=[  130],
     | 30.00th=[  151], 40.00th=[  169], 50.00th=[  188], 60.00th=[  212],
     | 70.00th=[  245], 80.00th=[  293], 90.00th=[  363], 95.00th=[  437],
     | 99.00th=[  701], 99.50th=[  857], 99.90th=[ 1549], 99.95th=[ 2057],
     | 99.99th=[ 5407]
";
        assert_eq!(b, want);
        // nsec block with a 5-digit value (steady-state capture).
        let vals = [(99.95, 748u64), (99.99, 14016)];
        assert_eq!(
            percentile_block("clat", &vals, 2),
            "    clat percentiles (nsec):\n     | 99.95th=[  748], 99.99th=[14016]\n"
        );
        // Whole-number list: "|  50th=[   40],  99th=[  191]".
        let vals = [(50.0, 40u64), (99.0, 191)];
        assert_eq!(
            percentile_block("clat", &vals, 0),
            "    clat percentiles (nsec):\n     |  50th=[   40],  99th=[  191]\n"
        );
        assert_eq!(percentile_block("clat", &[], 2), "");
        // Wide values: 3 per line (fio 3.33, psync reads half from page cache).
        let ns = [
            724u64, 748, 772, 852, 932, 1020, 1096, 1160, 1256, 1432, 1960, 91648, 111104, 118272,
            148480, 166912, 1695744,
        ];
        let vals: Vec<(f64, u64)> = list.iter().copied().zip(ns).collect();
        let want = "    clat percentiles (nsec):
     |  1.00th=[    724],  5.00th=[    748], 10.00th=[    772],
     | 20.00th=[    852], 30.00th=[    932], 40.00th=[   1020],
     | 50.00th=[   1096], 60.00th=[   1160], 70.00th=[   1256],
     | 80.00th=[   1432], 90.00th=[   1960], 95.00th=[  91648],
     | 99.00th=[ 111104], 99.50th=[ 118272], 99.90th=[ 148480],
     | 99.95th=[ 166912], 99.99th=[1695744]
";
        assert_eq!(percentile_block("clat", &vals, 2), want);
    }

    #[test]
    fn sample_lines() {
        // bw (  KiB/s): min=151944, max=166048, per=99.98%, avg=158565.33, stdev=7091.34, samples=3
        let s = samples(&[151944.0, 166048.0, 157704.0]);
        let l = bw_line(&s, 162_375_000, 1024).unwrap_or_default();
        assert!(
            l.starts_with("   bw (  KiB/s): min=151944, max=166048, per="),
            "{l}"
        );
        assert!(
            l.ends_with(", avg=158565.33, stdev=7091.34, samples=3\n"),
            "{l}"
        );
        // bw (  MiB/s): min= 1773, max= 1842, per=99.97%
        let s = samples(&[1773.0 * 1024.0, 1842.0 * 1024.0]);
        let l = bw_line(&s, 1803 * 1024 * 1024 + 500_000, 1024).unwrap_or_default();
        assert!(
            l.starts_with("   bw (  MiB/s): min= 1773, max= 1842, per=100.00%"),
            "{l}"
        );
        // kb_base=1000: "bw (   kB/s): min=66250"
        let s = samples(&[66250.0]);
        let l = bw_line(&s, 63_000_000, 1000).unwrap_or_default();
        assert!(
            l.starts_with("   bw (   kB/s): min=66250, max=66250, per=100.00%"),
            "{l}"
        );
        assert_eq!(bw_line(&SampleStat::default(), 0, 1024), None);
        // iops        : min= 1040, max= 8542, avg=4781.50, stdev=3699.72, samples=4
        let s = samples(&[1040.0, 8542.0, 4772.0, 4772.0]);
        let l = iops_line(&s).unwrap_or_default();
        assert!(
            l.starts_with("   iops        : min= 1040, max= 8542, avg=4781.50, stdev="),
            "{l}"
        );
        assert!(l.ends_with(", samples=4\n"));
    }

    #[test]
    fn misc() {
        assert_eq!(strerror(28), "No space left on device");
        assert_eq!(strerror(0), "Success");
        let t = ctime(1_795_238_525_436);
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with(" 2026"), "{t}");
        assert_eq!(sig_figs(0), 4);
        assert_eq!(kb_base(0), 1024);
    }
}
