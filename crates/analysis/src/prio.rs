//! I/O priorities (class and level, as ioprio_set takes them) and weight models.

use crate::AnalysisError;
use std::fmt;

/// The kernel's I/O priority classes. Their order is the order in which CFQ and BFQ
/// serve them: every real-time queue before any best-effort one, idle last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Rt,
    Be,
    Idle,
}

impl Class {
    /// The short name the seed's table uses (`be`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Rt => "rt",
            Class::Be => "be",
            Class::Idle => "idle",
        }
    }

    /// fio's `prioclass` value (a number; names are accepted too). 0 is "none",
    /// which the kernel serves as best effort.
    pub fn parse(s: &str) -> Result<Class, AnalysisError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "1" | "rt" | "realtime" | "real-time" => Ok(Class::Rt),
            "0" | "2" | "be" | "best-effort" | "none" => Ok(Class::Be),
            "3" | "idle" => Ok(Class::Idle),
            _ => Err(AnalysisError::BadClass(s.to_string())),
        }
    }
}

/// A class and a level (0 = highest … 7 = lowest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Priority {
    pub class: Class,
    pub level: u8,
}

/// The level a best-effort task has when nothing is set: the kernel derives it from the
/// nice value, (nice + 20) / 5, which is 4 at nice 0.
pub const DEFAULT_LEVEL: u8 = 4;

impl Priority {
    pub const fn new(class: Class, level: u8) -> Priority {
        Priority { class, level }
    }

    /// A job's priority from fio's `prioclass` and `prio` options, as fio and ioscope
    /// apply them: neither set → be 4 (the kernel's default); a level without a class →
    /// best effort; a class without a level → level 4.
    pub fn from_options(
        prioclass: Option<&str>,
        prio: Option<&str>,
    ) -> Result<Priority, AnalysisError> {
        let class = match prioclass {
            Some(c) => Class::parse(c)?,
            None => Class::Be,
        };
        let level = match prio {
            Some(p) => match p.trim().parse::<u8>() {
                Ok(l) if l <= 7 => l,
                _ => return Err(AnalysisError::BadLevel(p.to_string())),
            },
            None => DEFAULT_LEVEL,
        };
        Ok(Priority { class, level })
    }

    /// Whether `self` is served strictly before `other`: a higher class, or the same
    /// class and a lower level number.
    pub fn outranks(self, other: Priority) -> bool {
        (self.class, self.level) < (other.class, other.level)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.class.name(), self.level)
    }
}

/// How much of the disk each priority should get: the share of a job is its weight over
/// the sum of all weights.
///
/// Classes: CFQ and BFQ serve rt strictly before be, and idle only when nothing else
/// waits; no proportional model captures that. Both models give rt and idle jobs the
/// weight of their level as if they were best effort (CFQ and BFQ size rt slices and
/// weights by level the same way), so a table of one class is exact, and the strict
/// class order shows up in [`crate::violations`] (rt before be before idle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Model {
    /// CFQ's time slice per level: base slice + base/5 * (4 - level), i.e. 180 - 20 * level
    /// (be0 = 180 … be7 = 40) for a 100 ms base. CFQ gives idle queues level 7's slice.
    Cfq,
    /// BFQ's weight per level: (8 - level) * 10 (be0 = 80 … be7 = 10). Idle queues get
    /// the weight of their level too, but BFQ serves them only when nothing else waits.
    Bfq,
    /// Every job the same weight (1).
    Equal,
    /// Proportional cgroup weights (io.weight on v2, blkio.bfq.weight on v1): each job's
    /// `cgroup_weight` (100, the kernels' default, when unset); priorities play no part.
    IoWeight,
    /// One weight per job, in the order of the jobs.
    Custom(Vec<u64>),
}

impl Model {
    /// `cfq`, `bfq`, `equal`, `io.weight`, or a comma-separated list of weights.
    pub fn parse(s: &str) -> Result<Model, AnalysisError> {
        match s {
            "cfq" => Ok(Model::Cfq),
            "bfq" => Ok(Model::Bfq),
            "equal" => Ok(Model::Equal),
            "io.weight" | "cgroup" => Ok(Model::IoWeight),
            _ => s
                .split(',')
                .map(|w| w.trim().parse::<u64>())
                .collect::<Result<Vec<u64>, _>>()
                .ok()
                .filter(|w| !w.is_empty())
                .map(Model::Custom)
                .ok_or_else(|| AnalysisError::BadModel(s.to_string())),
        }
    }

    /// The name for reports (`cfq`, …; the list itself for custom weights).
    pub fn name(&self) -> String {
        match self {
            Model::Cfq => "cfq".into(),
            Model::Bfq => "bfq".into(),
            Model::Equal => "equal".into(),
            Model::IoWeight => "io.weight".into(),
            Model::Custom(w) => w.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
        }
    }

    /// The weights of jobs with these priorities, in order.
    pub fn weights(&self, prios: &[Priority]) -> Result<Vec<u64>, AnalysisError> {
        match self {
            Model::Custom(w) if w.len() != prios.len() => Err(AnalysisError::WeightCount {
                given: w.len(),
                jobs: prios.len(),
            }),
            Model::Custom(w) => Ok(w.clone()),
            _ => Ok(prios.iter().map(|p| self.weight(*p)).collect()),
        }
    }

    fn weight(&self, p: Priority) -> u64 {
        let level = match (self, p.class) {
            (Model::Cfq, Class::Idle) => 7,
            _ => u64::from(p.level.min(7)),
        };
        match self {
            Model::Cfq => 180 - 20 * level,
            Model::Bfq => (8 - level) * 10,
            // io.weight takes its weights from the jobs (fairness_table); 100 each here.
            Model::IoWeight => 100,
            Model::Equal | Model::Custom(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be(l: u8) -> Priority {
        Priority::new(Class::Be, l)
    }

    #[test]
    fn cfq_and_bfq_weights_per_level() {
        let ladder: Vec<Priority> = (0..8).map(be).collect();
        let cfq = Model::Cfq.weights(&ladder).unwrap();
        assert_eq!(cfq, [180, 160, 140, 120, 100, 80, 60, 40]);
        assert_eq!(cfq.iter().sum::<u64>(), 880);
        assert_eq!(
            Model::Cfq.weights(&[be(4); 8]).unwrap().iter().sum::<u64>(),
            800
        );
        assert_eq!(
            Model::Bfq.weights(&ladder).unwrap(),
            [80, 70, 60, 50, 40, 30, 20, 10]
        );
        assert_eq!(Model::Equal.weights(&ladder).unwrap(), [1; 8]);
        assert_eq!(
            Model::Cfq
                .weights(&[Priority::new(Class::Idle, 0)])
                .unwrap(),
            [40]
        );
        assert_eq!(
            Model::Cfq.weights(&[Priority::new(Class::Rt, 0)]).unwrap(),
            [180]
        );
    }

    #[test]
    fn models_parse() {
        assert_eq!(Model::parse("bfq"), Ok(Model::Bfq));
        assert_eq!(Model::parse("4, 2,1"), Ok(Model::Custom(vec![4, 2, 1])));
        assert!(Model::parse("cfq2").is_err());
        assert!(Model::parse("").is_err());
        assert!(Model::parse("1,,2").is_err());
        assert_eq!(
            Model::Custom(vec![1, 2]).weights(&[be(0)]),
            Err(AnalysisError::WeightCount { given: 2, jobs: 1 })
        );
        assert_eq!(Model::Custom(vec![4, 2]).name(), "4,2");
    }

    #[test]
    fn priorities_from_fio_options() {
        assert_eq!(Priority::from_options(None, None), Ok(be(4)));
        assert_eq!(Priority::from_options(Some("2"), Some("0")), Ok(be(0)));
        assert_eq!(Priority::from_options(None, Some("6")), Ok(be(6)));
        assert_eq!(
            Priority::from_options(Some("1"), None),
            Ok(Priority::new(Class::Rt, 4))
        );
        assert_eq!(
            Priority::from_options(Some("idle"), Some("7")),
            Ok(Priority::new(Class::Idle, 7))
        );
        assert!(Priority::from_options(Some("9"), None).is_err());
        assert!(Priority::from_options(None, Some("8")).is_err());
        assert!(Priority::from_options(None, Some("x")).is_err());
    }

    #[test]
    fn order_is_class_then_level() {
        assert!(be(3).outranks(be(7)));
        assert!(!be(7).outranks(be(3)));
        assert!(!be(4).outranks(be(4)));
        assert!(Priority::new(Class::Rt, 7).outranks(be(0)));
        assert!(be(7).outranks(Priority::new(Class::Idle, 0)));
        assert_eq!(be(3).to_string(), "be 3");
    }
}
