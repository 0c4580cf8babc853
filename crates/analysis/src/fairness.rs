//! Fairness between jobs of different I/O priorities: what each job should have
//! transferred under a weight model ("ideal") against what it did ("xferred"), in the
//! integer arithmetic of the hand-made tables on the CFQ list, so those tables are
//! reproduced to the byte.

use crate::{AnalysisError, Model, Priority};

/// One job's input: its name, priority and bytes transferred.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub prio: Priority,
    pub xferred: u64,
    /// The job's cgroup weight (fio's `cgroup_weight`), for the io.weight model.
    pub cgroup_weight: Option<u64>,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub prio: Priority,
    pub weight: u64,
    /// floor(total * weight / total_weight).
    pub ideal: u64,
    pub xferred: u64,
    /// floor(xferred * 100 / ideal) - 100; `None` when ideal is 0.
    pub diff_pct: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub rows: Vec<Row>,
    /// Sum of xferred ("total data transferred").
    pub total: u64,
    /// Sum of the weights ("total priority").
    pub total_weight: u64,
    /// The weights are cgroup weights, not derived from priorities: the order that
    /// matters is the weights' (io.weight model).
    pub by_weight: bool,
}

/// A job of lower priority that transferred more than one of higher priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the job that should have got more.
    pub higher: usize,
    /// Index of the job that got more.
    pub lower: usize,
}

/// The table for `entries` under `model`.
pub fn fairness_table(entries: &[Entry], model: &Model) -> Result<Table, AnalysisError> {
    let weights = match model {
        // cgroup v2's default io.weight is 100.
        Model::IoWeight => entries
            .iter()
            .map(|e| e.cgroup_weight.unwrap_or(100))
            .collect(),
        _ => {
            let prios: Vec<Priority> = entries.iter().map(|e| e.prio).collect();
            model.weights(&prios)?
        }
    };
    let total: u64 = entries.iter().map(|e| e.xferred).sum();
    let total_weight: u64 = weights.iter().sum();
    let rows = entries
        .iter()
        .zip(&weights)
        .map(|(e, &weight)| {
            // u128: total * weight overflows u64 for a long run on a fast disk.
            let ideal = if total_weight == 0 {
                0
            } else {
                (u128::from(total) * u128::from(weight) / u128::from(total_weight)) as u64
            };
            Row {
                name: e.name.clone(),
                prio: e.prio,
                weight,
                ideal,
                xferred: e.xferred,
                diff_pct: diff_pct(e.xferred, ideal),
            }
        })
        .collect();
    Ok(Table {
        rows,
        total,
        total_weight,
        by_weight: matches!(model, Model::IoWeight),
    })
}

/// The seed's %diff: integer division first, then minus 100 (so 74.1% → -26, not -25).
pub fn diff_pct(xferred: u64, ideal: u64) -> Option<i64> {
    if ideal == 0 {
        return None;
    }
    let pct = u128::from(xferred) * 100 / u128::from(ideal);
    Some(i64::try_from(pct).unwrap_or(i64::MAX) - 100)
}

impl Table {
    /// The seed's text: two total lines, the header and one line per job, columns
    /// separated by tabs (the seed's columns are tab stops).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            format!("total priority: {}", self.total_weight),
            format!("total data transferred: {}", self.total),
            match self.by_weight {
                true => "class\tprio\tweight\tideal\txferred\t%diff",
                false => "class\tprio\tideal\txferred\t%diff",
            }
            .to_string(),
        ];
        for r in &self.rows {
            let diff = r.diff_pct.map_or("-".to_string(), |d| d.to_string());
            // By cgroup weight, the weight is what sets the ideal: show it.
            let weight = match self.by_weight {
                true => format!("{}\t", r.weight),
                false => String::new(),
            };
            out.push(format!(
                "{}\t{}\t{weight}{}\t{}\t{}",
                r.prio.class.name(),
                r.prio.level,
                r.ideal,
                r.xferred,
                diff
            ));
        }
        out
    }

    /// Each job's share normalised by its weight (bytes per unit of weight); jobs of
    /// weight 0 have no share and are left out.
    pub fn shares(&self) -> Vec<f64> {
        self.rows
            .iter()
            .filter(|r| r.weight > 0)
            .map(|r| r.xferred as f64 / r.weight as f64)
            .collect()
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²) over the weighted shares: 1 when every job got
/// exactly its weight's share, 1/n when one job got everything. `None` without data.
pub fn jain_index(shares: &[f64]) -> Option<f64> {
    let sum: f64 = shares.iter().sum();
    let sq: f64 = shares.iter().map(|x| x * x).sum();
    if shares.is_empty() || sq == 0.0 {
        return None;
    }
    Some(sum * sum / (shares.len() as f64 * sq))
}

/// Largest weighted share over the smallest: 1 is fair. `None` when a job got nothing
/// (the ratio is unbounded) or there are no shares.
pub fn share_ratio(shares: &[f64]) -> Option<f64> {
    let max = shares.iter().copied().fold(f64::NAN, f64::max);
    let min = shares.iter().copied().fold(f64::NAN, f64::min);
    if shares.is_empty() || min <= 0.0 {
        return None;
    }
    Some(max / min)
}

/// Every pair where a job of lower priority transferred more than a job of higher
/// priority (class order rt, be, idle, then level; or the larger cgroup weight when the
/// table is by weight), by higher job then lower job; by more than `tolerance_pct`
/// percent of the higher job's bytes, so that noise is not a violation.
pub fn violations(table: &Table, tolerance_pct: f64) -> Vec<Violation> {
    let rows = &table.rows;
    let outranks = |a: &Row, b: &Row| {
        if table.by_weight {
            a.weight > b.weight
        } else {
            a.prio.outranks(b.prio)
        }
    };
    let mut out = Vec::new();
    for (h, hi) in rows.iter().enumerate() {
        for (l, lo) in rows.iter().enumerate() {
            let limit = hi.xferred as f64 * (1.0 + tolerance_pct / 100.0);
            if outranks(hi, lo) && lo.xferred as f64 > limit {
                out.push(Violation {
                    higher: h,
                    lower: l,
                });
            }
        }
    }
    out
}

impl Violation {
    /// "be 7 got more than be 3: 113140 > 86260 (prio7 > prio3)"; by weight: "weight
    /// 100 got more than weight 800: …".
    pub fn text(&self, table: &Table) -> String {
        let (h, l) = (&table.rows[self.higher], &table.rows[self.lower]);
        if table.by_weight {
            return format!(
                "weight {} got more than weight {}: {} > {} ({} > {})",
                l.weight, h.weight, l.xferred, h.xferred, l.name, h.name
            );
        }
        format!(
            "{} got more than {}: {} > {} ({} > {})",
            l.prio, h.prio, l.xferred, h.xferred, l.name, h.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Class;

    fn entries(levels: &[u8], xferred: &[u64]) -> Vec<Entry> {
        levels
            .iter()
            .zip(xferred)
            .enumerate()
            .map(|(i, (&l, &x))| Entry {
                name: format!("job{i}"),
                prio: Priority::new(Class::Be, l),
                xferred: x,
                cgroup_weight: None,
            })
            .collect()
    }

    #[test]
    fn cgroup_weights_order_the_violations() {
        let mut e = entries(&[4, 4, 4], &[500, 100, 300]);
        for (x, w) in e.iter_mut().zip([800, 400, 100]) {
            x.cgroup_weight = Some(w);
        }
        let t = fairness_table(&e, &Model::IoWeight).unwrap();
        assert_eq!(t.total_weight, 1300);
        let v: Vec<String> = violations(&t, 0.0).iter().map(|v| v.text(&t)).collect();
        // Same priority everywhere: only the weights order the jobs.
        assert_eq!(
            v,
            ["weight 100 got more than weight 400: 300 > 100 (job2 > job1)"]
        );
        assert_eq!(t.lines()[2], "class\tprio\tweight\tideal\txferred\t%diff");
        assert_eq!(t.lines()[3], "be\t4\t800\t553\t500\t-10");
        // Under a priority model the same jobs (all be 4) have no order at all.
        assert!(violations(&fairness_table(&e, &Model::Cfq).unwrap(), 0.0).is_empty());
    }

    /// The table's lines with tabs shown as single spaces, as the seed prints them.
    fn spaced(t: &Table) -> Vec<String> {
        t.lines().iter().map(|l| l.replace('\t', " ")).collect()
    }

    const LADDER: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
    const PATCHED_LADDER: [u64; 8] = [352500, 193012, 123380, 86260, 62964, 40180, 74484, 113140];
    const VANILLA_LADDER: [u64; 8] = [229108, 202740, 156660, 152052, 91636, 64244, 34292, 23540];

    #[test]
    fn reproduces_the_patched_ladder_table() {
        let t = fairness_table(&entries(&LADDER, &PATCHED_LADDER), &Model::Cfq).unwrap();
        assert_eq!(
            spaced(&t),
            [
                "total priority: 880",
                "total data transferred: 1045920",
                "class prio ideal xferred %diff",
                "be 0 213938 352500 64",
                "be 1 190167 193012 1",
                "be 2 166396 123380 -26",
                "be 3 142625 86260 -40",
                "be 4 118854 62964 -48",
                "be 5 95083 40180 -58",
                "be 6 71312 74484 4",
                "be 7 47541 113140 137",
            ]
        );
    }

    #[test]
    fn reproduces_the_vanilla_equal_table() {
        let x = [124404, 123380, 118004, 113396, 107252, 98356, 96244, 106228];
        let t = fairness_table(&entries(&[4; 8], &x), &Model::Cfq).unwrap();
        let lines = spaced(&t);
        assert_eq!(lines[0], "total priority: 800");
        assert_eq!(lines[1], "total data transferred: 887264");
        let diffs: Vec<Option<i64>> = t.rows.iter().map(|r| r.diff_pct).collect();
        let want = [12, 11, 6, 2, -4, -12, -14, -5].map(Some);
        assert_eq!(diffs, want);
        assert!(t.rows.iter().all(|r| r.ideal == 110908));
    }

    #[test]
    fn diff_is_integer_division_then_minus_100() {
        assert_eq!(diff_pct(352500, 213938), Some(64));
        assert_eq!(diff_pct(123380, 166396), Some(-26));
        assert_eq!(diff_pct(0, 10), Some(-100));
        assert_eq!(diff_pct(5, 0), None);
    }

    #[test]
    fn jain_and_ratio() {
        assert_eq!(jain_index(&[2.0, 2.0, 2.0]), Some(1.0));
        let j = jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap();
        assert!((j - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        assert_eq!(share_ratio(&[1.0, 4.0, 2.0]), Some(4.0));
        assert_eq!(share_ratio(&[1.0, 0.0]), None);
        // The same bytes per weight everywhere is perfectly fair under that model.
        let t = fairness_table(&entries(&[0, 7], &[180, 40]), &Model::Cfq).unwrap();
        assert_eq!(jain_index(&t.shares()), Some(1.0));
    }

    #[test]
    fn violations_of_the_patched_ladder() {
        let t = fairness_table(&entries(&LADDER, &PATCHED_LADDER), &Model::Cfq).unwrap();
        let v: Vec<String> = violations(&t, 0.0).iter().map(|v| v.text(&t)).collect();
        assert_eq!(
            v,
            [
                "be 7 got more than be 3: 113140 > 86260 (job7 > job3)",
                "be 6 got more than be 4: 74484 > 62964 (job6 > job4)",
                "be 7 got more than be 4: 113140 > 62964 (job7 > job4)",
                "be 6 got more than be 5: 74484 > 40180 (job6 > job5)",
                "be 7 got more than be 5: 113140 > 40180 (job7 > job5)",
                "be 7 got more than be 6: 113140 > 74484 (job7 > job6)",
            ]
        );
        let t = fairness_table(&entries(&LADDER, &VANILLA_LADDER), &Model::Cfq).unwrap();
        assert!(violations(&t, 0.0).is_empty());
        // Equal priorities never violate anything.
        let t = fairness_table(&entries(&[4, 4], &[1, 100]), &Model::Cfq).unwrap();
        assert!(violations(&t, 0.0).is_empty());
    }

    #[test]
    fn custom_weights_and_zero_totals() {
        let t = fairness_table(&entries(&[4, 4], &[300, 100]), &Model::Custom(vec![3, 1])).unwrap();
        assert_eq!((t.rows[0].ideal, t.rows[1].ideal), (300, 100));
        assert_eq!(t.rows[0].diff_pct, Some(0));
        let t = fairness_table(&entries(&[0, 1], &[0, 0]), &Model::Cfq).unwrap();
        assert_eq!(t.total, 0);
        assert_eq!(t.rows[0].diff_pct, None);
        assert_eq!(t.lines()[3], "be\t0\t0\t0\t-");
    }
}
