//! What fio prints for two special cases: `--profile=act`'s table of latency shares
//! per hour, and `block_error_percentiles`' block lifetimes (normal output; the JSON
//! `"block"` object is in [`crate::json`]).

use ioscope_stats::act::{ActSlices, THRESHOLDS_US};
use ioscope_stats::block::{BlockStates, STATE_NAMES};

/// act's table over every act job of the run, with its verdict; None when the run had
/// no act job.
pub fn act_table(run: &ioscope_stats::RunResult) -> Option<String> {
    let mut all: Option<ActSlices> = None;
    for a in run.jobs.iter().filter_map(|j| j.act.as_ref()) {
        all.get_or_insert_with(Default::default).merge(a);
    }
    let a = all?;
    let mut s = String::new();
    s.push_str(&format!("{:8}trans{:19}device\n", "", ""));
    s.push_str(&format!("{:8}%>(ms){:18}%>(ms)\n", "", ""));
    s.push_str(" slice");
    for _ in 0..2 {
        for t in THRESHOLDS_US {
            s.push_str(&format!("\t {:2}", t / 1000));
        }
    }
    s.push('\n');
    s.push_str(" -----  -----   -----  ------   -----   -----  ------\n");
    for (i, slice) in a.slices.iter().enumerate() {
        s.push_str(&format!("   {:2}", i + 1));
        let p = ActSlices::percents(slice);
        for _ in 0..2 {
            for v in p {
                s.push_str(&format!("\t{v:.2}"));
            }
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\nact: test complete, device(s): {}\n",
        if a.passed() { "PASSED" } else { "FAILED" }
    ));
    Some(s)
}

/// `  block lifetime percentiles :` and the states line, after the latency line.
pub fn block_section(b: &BlockStates, percentiles: &[f64], out: &mut String) {
    out.push_str("  block lifetime percentiles :\n   |");
    let pts = b.percentiles(percentiles);
    let mut line = 0;
    for (i, (p, n)) in pts.iter().enumerate() {
        let item = format!(" {p:3.2}th={n}");
        if line + item.len() > 75 {
            out.push_str("\n   |");
            line = 0;
        }
        line += item.len() + 1;
        out.push_str(&item);
        out.push(if i + 1 == pts.len() { '\n' } else { ',' });
    }
    let states = b.states();
    let counts: Vec<String> = STATE_NAMES
        .iter()
        .zip(states)
        .map(|(n, c)| format!(" {n}={c}"))
        .collect();
    out.push_str(&format!(
        "        states               :{}\n",
        counts.join(",")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_lines_as_fio_prints_them() {
        let mut b = BlockStates::new(3);
        b.trimmed(1);
        let list = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99,
        ];
        let mut s = String::new();
        block_section(&b, &list, &mut s);
        assert_eq!(
            s,
            "  block lifetime percentiles :\n   \
             | 1.00th=1, 5.00th=1, 10.00th=1, 20.00th=1, 30.00th=1, 40.00th=1, 50.00th=1,\n   \
             | 60.00th=1, 70.00th=1, 80.00th=1, 90.00th=1, 95.00th=1, 99.00th=1,\n   \
             | 99.50th=1, 99.90th=1, 99.95th=1, 99.99th=1\n        \
             states               : unwritten=2, trimmed=1, written=0, trim failure=0, write failure=0\n"
        );
        // No block used: no percentiles, and the states line right after the bar.
        let mut s = String::new();
        block_section(&BlockStates::new(2), &list, &mut s);
        assert_eq!(
            s,
            "  block lifetime percentiles :\n   |        states               : unwritten=2, \
             trimmed=0, written=0, trim failure=0, write failure=0\n"
        );
    }

    #[test]
    fn act_table_as_fio_prints_it() {
        let mut a = ActSlices::for_seconds(5);
        for _ in 0..9999 {
            a.add(0, 100_000);
        }
        a.add(0, 2_000_000);
        let run = ioscope_stats::RunResult {
            jobs: vec![ioscope_stats::JobResult {
                act: Some(a),
                ..Default::default()
            }],
            ..Default::default()
        };
        let t = act_table(&run).expect("a table");
        assert_eq!(
            t,
            "        trans                   device\n        %>(ms)                  %>(ms)\n \
             slice\t  1\t  8\t 64\t  1\t  8\t 64\n \
             -----  -----   -----  ------   -----   -----  ------\n    \
             1\t0.01\t0.00\t0.00\t0.01\t0.00\t0.00\n\nact: test complete, device(s): PASSED\n"
        );
        assert!(act_table(&ioscope_stats::RunResult::default()).is_none());
    }
}
