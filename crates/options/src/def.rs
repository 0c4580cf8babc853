//! What an option *is*: the declarative description every table entry carries.
//! Parsing, `--cmdhelp`, `--enghelp` and the generated docs all read these fields.

/// Default unit of a time option when the value has no suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Millis,
    Micros,
}

impl TimeUnit {
    /// Microseconds per unit.
    pub fn micros(self) -> u64 {
        match self {
            TimeUnit::Seconds => 1_000_000,
            TimeUnit::Millis => 1_000,
            TimeUnit::Micros => 1,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
        }
    }
}

/// The syntax an option accepts. Drives help text and the "flag without value" rule.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Free text.
    Str,
    /// Integer; size suffixes and arithmetic allowed (`iodepth=1k`, `($ncpus*2)`).
    Int,
    /// Floating point number.
    Float,
    /// 0 or 1, value required.
    Bool,
    /// Flag: `name` alone sets it; `name=0` clears it; `name=N` sets it.
    Set,
    /// Byte count with k/m/g/t/p suffixes honouring kb_base.
    Size,
    /// Byte count or percentage (`50%`).
    SizePct,
    /// Time with a default unit; suffixes us, ms, s, m (minutes), h, d.
    Time(TimeUnit),
    /// Time or `lo-hi` time range.
    TimeRange(TimeUnit),
    /// One of a fixed list of values: (value, meaning).
    Choice(&'static [(&'static str, &'static str)]),
    /// Per-direction list `read,write,trim` of the inner kind.
    PerDir(&'static Kind),
    /// Per-direction list of `lo-hi` size ranges.
    RangeList,
    /// One size, or a `lo-hi` size range.
    SizeRange,
    /// Special syntax, described in words.
    Special(&'static str),
}

impl Kind {
    /// Short type name as printed by `--cmdhelp`.
    pub fn type_name(&self) -> String {
        match self {
            Kind::Str => "string".into(),
            Kind::Int => "integer".into(),
            Kind::Float => "float".into(),
            Kind::Bool => "boolean (0|1)".into(),
            Kind::Set => "flag (no value, or 0|1)".into(),
            Kind::Size => "size (k/m/g/t/p suffixes)".into(),
            Kind::SizePct => "size or percentage".into(),
            Kind::Time(u) => format!("time (default unit {})", u.label()),
            Kind::TimeRange(u) => format!("time or time range (default unit {})", u.label()),
            Kind::Choice(_) => "choice".into(),
            Kind::PerDir(k) => format!("{} list (read,write,trim)", k.type_name()),
            Kind::RangeList => "size range list (lo-hi[,lo-hi,lo-hi])".into(),
            Kind::SizeRange => "size or size range lo-hi".into(),
            Kind::Special(s) => (*s).into(),
        }
    }
}

/// Where the option belongs in the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Job,
    Files,
    Io,
    BlockSize,
    Random,
    Engine,
    Depth,
    Time,
    Rate,
    Buffers,
    Priority,
    Verify,
    Logging,
    SteadyState,
    Errors,
    Reporting,
    Zones,
    Profile,
}

impl Category {
    pub fn title(self) -> &'static str {
        match self {
            Category::Job => "Job description, grouping and processes",
            Category::Files => "Files and sizes",
            Category::Io => "I/O type",
            Category::BlockSize => "Block size",
            Category::Random => "Randomness",
            Category::Engine => "I/O engine",
            Category::Depth => "I/O depth and batching",
            Category::Time => "Time",
            Category::Rate => "Rate limiting and think time",
            Category::Buffers => "Buffers and memory",
            Category::Priority => "I/O priority",
            Category::Verify => "Verification",
            Category::Logging => "Logs",
            Category::SteadyState => "Steady state",
            Category::Errors => "Error handling",
            Category::Reporting => "Measurement and reporting",
            Category::Zones => "Zoned block devices",
            Category::Profile => {
                "fio profile options (read by --profile=tiobench; no effect elsewhere)"
            }
        }
    }
}

/// How far ioscope honours the option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Implemented.
    Supported,
    /// Accepted and deliberately without effect; the text says why.
    NoOp(&'static str),
    /// Parsed and validated, but a run that sets it fails with "not supported yet".
    NotYet,
}

/// One option: the single source of truth for parsing, help and docs.
#[derive(Debug)]
pub struct OptionDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// Default as it would be written in a job file; "" means unset.
    pub default: &'static str,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub category: Category,
    pub help: &'static str,
    pub status: Status,
    /// Engines this option belongs to; empty = a general option.
    pub engines: &'static [&'static str],
    /// fio's own name for the option where it is not `name` (fio calls blockalign
    /// `ba`): what the JSON echo of the options shows, as fio's does.
    pub fio_name: &'static str,
}

impl OptionDef {
    /// Template the table entries start from.
    pub const BASE: OptionDef = OptionDef {
        name: "",
        aliases: &[],
        kind: Kind::Str,
        default: "",
        min: None,
        max: None,
        category: Category::Job,
        help: "",
        status: Status::Supported,
        engines: &[],
        fio_name: "",
    };

    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// The name fio gives the option (in its JSON's "job options").
    pub fn fio_name(&self) -> &'static str {
        if self.fio_name.is_empty() {
            self.name
        } else {
            self.fio_name
        }
    }

    pub fn is_flag(&self) -> bool {
        matches!(self.kind, Kind::Set)
    }
}
