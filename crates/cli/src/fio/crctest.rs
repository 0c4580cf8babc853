//! `--crctest[=TYPE,...]`: how fast each checksum runs on this CPU, as fio measures it:
//! 2048 passes over one 128 KiB buffer of random bytes, printed in fio's layout
//! (`crc32c:\t\t 7639.97 MiB/sec`). `--crctest=list` names the types.

use ioscope_verify::hashes;
use ioscope_verify::Method;
use std::process::ExitCode;
use std::time::Instant;

const CHUNK: usize = 128 << 10;
const PASSES: usize = 2048;

/// A type fio times: its name and one pass over the buffer (returning something the
/// compiler must compute).
struct Test {
    name: &'static str,
    pass: fn(&[u8]) -> u64,
}

fn digest(m: Method, data: &[u8]) -> u64 {
    let mut out = [0u8; 128];
    m.trailer(data, &mut out);
    u64::from(out[0])
}

/// fio's types, in its order.
const TESTS: &[Test] = &[
    Test {
        name: "md5",
        pass: |d| digest(Method::Md5, d),
    },
    Test {
        name: "crc64",
        pass: |d| digest(Method::Crc64, d),
    },
    Test {
        name: "crc32",
        pass: |d| digest(Method::Crc32, d),
    },
    Test {
        name: "crc32c",
        pass: |d| u64::from(ioscope_verify::fio_crc32c(d)),
    },
    Test {
        name: "crc16",
        pass: |d| digest(Method::Crc16, d),
    },
    Test {
        name: "crc7",
        pass: |d| digest(Method::Crc7, d),
    },
    Test {
        name: "sha1",
        pass: |d| digest(Method::Sha1, d),
    },
    Test {
        name: "sha256",
        pass: |d| digest(Method::Sha256, d),
    },
    Test {
        name: "sha512",
        pass: |d| digest(Method::Sha512, d),
    },
    Test {
        name: "xxhash",
        pass: |d| digest(Method::Xxhash, d),
    },
    Test {
        name: "murmur3",
        pass: |d| u64::from(hashes::murmur3_32(d, 0x8989)),
    },
    Test {
        name: "jhash",
        pass: |d| u64::from(hashes::jhash(d, 0x8989)),
    },
    Test {
        name: "fnv",
        pass: |d| hashes::fnv1_64(d, 0x8989),
    },
    Test {
        name: "sha3-224",
        pass: |d| digest(Method::Sha3_224, d),
    },
    Test {
        name: "sha3-256",
        pass: |d| digest(Method::Sha3_256, d),
    },
    Test {
        name: "sha3-384",
        pass: |d| digest(Method::Sha3_384, d),
    },
    Test {
        name: "sha3-512",
        pass: |d| digest(Method::Sha3_512, d),
    },
];

/// Run `--crctest[=TYPES]`; as fio, `list`/`help` (or an unknown type) lists the
/// types and exits 1.
pub fn run(types: Option<&str>) -> ExitCode {
    let chosen: Vec<&Test> = match types {
        None | Some("") => TESTS.iter().collect(),
        Some("list" | "help") => return list(),
        Some(t) => {
            let names: Vec<&str> = t.split(',').collect();
            let v: Vec<&Test> = TESTS.iter().filter(|x| names.contains(&x.name)).collect();
            if v.is_empty() {
                eprintln!("ioscope: unknown hash `{t}`. Available:");
                return list();
            }
            v
        }
    };
    let buf = random_chunk();
    let mut sink = 0u64;
    for (i, t) in chosen.iter().enumerate() {
        if i == 0 {
            // Spin the CPU up and touch the data before the first timing.
            sink = sink.wrapping_add((t.pass)(&buf));
        }
        let start = Instant::now();
        for _ in 0..PASSES {
            sink = sink.wrapping_add((t.pass)(std::hint::black_box(&buf)));
        }
        let us = start.elapsed().as_micros();
        let tab = if t.name.len() >= 7 { "\t" } else { "\t\t" };
        match us {
            0 => println!("{}:inf MiB/sec", t.name),
            us => {
                let mib_s = (CHUNK * PASSES) as f64 / us as f64 / 1.048576;
                println!("{}:{tab}{mib_s:8.2} MiB/sec", t.name);
            }
        }
    }
    std::hint::black_box(sink);
    ExitCode::SUCCESS
}

fn list() -> ExitCode {
    for t in TESTS {
        println!("{}", t.name);
    }
    ExitCode::from(1)
}

fn random_chunk() -> Vec<u8> {
    let mut state = 0x8989u64;
    (0..CHUNK)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}
