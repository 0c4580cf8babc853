//! `ioscope history`'s flags: one table, read by parsing, help, docs and completions.

use crate::command::{self, Flag};
use ioscope_options::flags::{flag, FlagValue};
use std::path::PathBuf;
use FlagValue::{None as NoVal, Required as ReqVal};

/// `ioscope history`'s arguments.
#[derive(Default)]
pub struct Args {
    pub db: Option<PathBuf>,
    pub json: bool,
    pub markdown: bool,
    pub format: Option<String>,
    pub baseline: Option<String>,
    pub candidate: Option<String>,
    pub metric: Option<String>,
    pub threshold: Option<f64>,
    pub operands: Vec<String>,
}

impl command::Args for Args {
    fn flags() -> &'static [Flag<Args>] {
        FLAGS
    }

    fn operand(&mut self, word: String) -> Result<(), String> {
        self.operands.push(word);
        Ok(())
    }
}

const FLAGS: &[Flag<Args>] = &[
    Flag {
        def: flag("db", ReqVal, "FILE", "The history database (default: $IOSCOPE_HISTORY, else ~/.local/share/ioscope/history.sqlite)"),
        verbs: &[],
        set: |a, v| {
            a.db = v.map(PathBuf::from);
            Ok(())
        },
    },
    Flag {
        def: flag("json", NoVal, "", "list, show, compare: print JSON"),
        verbs: &["list", "show", "compare", "check"],
        set: |a, _| {
            a.json = true;
            Ok(())
        },
    },
    Flag {
        def: flag("markdown", NoVal, "", "compare, check: print the table as GitHub markdown"),
        verbs: &["compare", "check"],
        set: |a, _| {
            a.markdown = true;
            Ok(())
        },
    },
    Flag {
        def: flag("format", ReqVal, "csv|json", "export: CSV of the summary columns (default) or JSON of whole records"),
        verbs: &["export"],
        set: |a, v| {
            a.format = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("baseline", ReqVal, "RUNS", "check: the runs to judge against (a label, id:N[-M] or time:FROM..TO)"),
        verbs: &["check"],
        set: |a, v| {
            a.baseline = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("candidate", ReqVal, "RUNS", "check: the runs judged (default: the latest label other than the baseline)"),
        verbs: &["check"],
        set: |a, v| {
            a.candidate = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("metric", ReqVal, "LIST", "check: the metrics judged, comma-separated (default: bw,iops,clat_mean,clat_p99; any of compare's)"),
        verbs: &["check"],
        set: |a, v| {
            a.metric = v.map(str::to_string);
            Ok(())
        },
    },
    Flag {
        def: flag("threshold", ReqVal, "PCT", "check: a significant change smaller than PCT% is no regression (default 5)"),
        verbs: &["check"],
        set: |a, v| {
            let t: f64 = v.unwrap_or("").trim_end_matches('%').parse().map_err(|_| "--threshold: a percentage, e.g. 5".to_string())?;
            if !(0.0..=1000.0).contains(&t) {
                return Err("--threshold: between 0 and 1000 (%)".into());
            }
            a.threshold = Some(t);
            Ok(())
        },
    },
];
