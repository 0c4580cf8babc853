//! Built-in profiles: fio-tests' six workloads and the R/W mixes of SNIA's IOPS test.
//! A profile of the same name in the sweep file replaces the built-in one.

use crate::opt::Opt;
use indexmap::IndexMap;

const FIO_TESTS: &[(&str, &[(&str, &str)])] = &[
    ("seqread", &[("rw", "read")]),
    ("seqwrite", &[("rw", "write")]),
    ("randread", &[("rw", "randread")]),
    ("randwrite", &[("rw", "randwrite")]),
    ("randrw-70-30", &[("rw", "randrw"), ("rwmixread", "70")]),
    ("randrw-97-3", &[("rw", "randrw"), ("rwmixread", "97")]),
];

/// SNIA PTS IOPS test: random I/O at these read percentages.
const SNIA_MIXES: &[u32] = &[100, 95, 65, 50, 35, 5, 0];

pub fn builtin() -> IndexMap<String, Vec<Opt>> {
    let opt = |k: &str, v: &str| Opt {
        key: k.into(),
        value: v.into(),
        line: 0,
    };
    let mut m: IndexMap<String, Vec<Opt>> = FIO_TESTS
        .iter()
        .map(|(name, opts)| {
            (
                name.to_string(),
                opts.iter().map(|(k, v)| opt(k, v)).collect(),
            )
        })
        .collect();
    for &r in SNIA_MIXES {
        m.insert(
            format!("snia-{r}-{}", 100 - r),
            vec![opt("rw", "randrw"), opt("rwmixread", &r.to_string())],
        );
    }
    m
}
