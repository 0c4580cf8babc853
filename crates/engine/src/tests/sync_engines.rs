//! psync, sync, vsync, pvsync, pvsync2: data round trips (buffered and O_DIRECT),
//! trim, short reads, bad file indices and the pvsync2 RWF_* flags.

use super::*;
use crate::UNIT_HIPRI;

const SYNC_ENGINES: [&str; 5] = ["psync", "sync", "vsync", "pvsync", "pvsync2"];

#[test]
fn round_trip_buffered() {
    for name in SYNC_ENGINES {
        round_trip(&Job::new(8, vec![buffered()]), name, 8, 3000);
    }
}

#[test]
fn round_trip_direct() {
    for name in SYNC_ENGINES {
        round_trip(&Job::new(8, vec![direct()]), name, 8, BS);
    }
}

#[test]
fn trim_punches_a_hole() {
    for name in SYNC_ENGINES {
        trim_test(&Job::new(1, vec![ext4()]), name);
    }
}

#[test]
fn short_read_at_eof_is_returned_as_is() {
    for name in SYNC_ENGINES {
        let job = Job::new(1, vec![buffered()]);
        let out = job.run_ok(name, &[vec![Op::read(FILE_SIZE - 1000, BS)]]);
        assert_eq!(out[0][0].result, 1000, "{name}");
        let out = job.run_ok(name, &[vec![Op::read(FILE_SIZE, BS)]]);
        assert_eq!(out[0][0].result, 0, "{name}");
    }
}

#[test]
fn bad_file_index_is_ebadf() {
    let job = Job::new(1, vec![buffered()]);
    let op = Op {
        file: 3,
        ..Op::read(0, BS)
    };
    let out = job.run_ok("psync", &[vec![op]]);
    assert_eq!(out[0][0].result, -(libc::EBADF as i64));
}

#[test]
fn len_beyond_buffer_is_einval() {
    let job = Job::new(1, vec![buffered()]);
    let out = job.run_ok("pvsync", &[vec![Op::read(0, job.unit_len as u32 + 1)]]);
    assert_eq!(out[0][0].result, -(libc::EINVAL as i64));
}

#[test]
fn write_error_is_negative_errno() {
    let job = Job::new(1, vec![test_file("/dev/shm", 0, true)]);
    let out = job.run_ok("psync", &[vec![Op::write(0, BS, 1)]]);
    assert_eq!(out[0][0].result, -(libc::EBADF as i64));
}

#[test]
fn pvsync2_hipri_units_on_direct_file() {
    let mut job = Job::new(2, vec![direct()]);
    job.opts.hipri = true;
    let out = job.run_ok(
        "pvsync2",
        &[
            vec![
                Op::write(0, BS, 9).flags(UNIT_HIPRI),
                Op::write(BS as u64, BS, 10),
            ],
            vec![Op::read(0, BS).flags(UNIT_HIPRI), Op::read(BS as u64, BS)],
        ],
    );
    assert_eq!(out[0][0].result, BS as i64);
    assert_eq!(out[0][1].result, BS as i64);
    assert_eq!(out[1][0].data, pattern(9, 0, BS as usize));
    assert_eq!(out[1][1].data, pattern(10, BS as u64, BS as usize));
}

#[test]
fn pvsync2_uncached_round_trip_or_reported_unsupported() {
    let mut job = Job::new(1, vec![ext4()]);
    job.opts.uncached = 1;
    let out = job.run_ok(
        "pvsync2",
        &[vec![Op::write(8192, BS, 3)], vec![Op::read(8192, BS)]],
    );
    let unsupported = [-(libc::EOPNOTSUPP as i64), -(libc::EINVAL as i64)];
    let w = out[0][0].result;
    if unsupported.contains(&w) {
        // The kernel's refusal is passed through as the I/O's result, which is what
        // this checks; the page-cache effect itself cannot be observed here.
        super::skip(&format!(
            "RWF_DONTCACHE (pvsync2 uncached): the kernel answers {w}"
        ));
        return;
    }
    assert_eq!(w, BS as i64);
    assert_eq!(out[1][0].result, BS as i64);
    assert_eq!(out[1][0].data, pattern(3, 8192, BS as usize));
}

#[test]
fn pvsync2_nowait_result_is_data_or_reported_error() {
    let mut job = Job::new(1, vec![buffered()]);
    job.opts.nowait = true;
    let out = job.run_ok(
        "pvsync2",
        &[vec![Op::write(0, BS, 4)], vec![Op::read(0, BS)]],
    );
    // tmpfs has no non-blocking buffered writes: the kernel's EOPNOTSUPP is the result.
    let w = out[0][0].result;
    let ok = [
        BS as i64,
        -(libc::EAGAIN as i64),
        -(libc::EOPNOTSUPP as i64),
    ];
    assert!(ok.contains(&w), "write: {w}");
    if w == BS as i64 {
        assert_eq!(out[1][0].result, BS as i64);
        assert_eq!(out[1][0].data, pattern(4, 0, BS as usize));
    }
}

#[test]
fn splice_round_trip_buffered() {
    round_trip(&Job::new(8, vec![buffered()]), "splice", 8, 3000);
}

/// atomic=1 puts RWF_ATOMIC on writes and on nothing else. A buffered ext4 file takes
/// no atomic writes (the kernel sets no FMODE_CAN_ATOMIC_WRITE for it), so each
/// engine's write comes back EOPNOTSUPP, the flag having reached the kernel, while the
/// read of the same job, without it, succeeds.
#[test]
fn atomic_flag_reaches_the_kernel_on_writes_only() {
    for engine in ["pvsync2", "libaio", "io_uring"] {
        let mut job = Job::new(1, vec![ext4()]);
        let plain = job.run_ok(engine, &[vec![Op::write(0, BS, 4)]]);
        assert_eq!(plain[0][0].result, BS as i64, "{engine}: without atomic=1");
        job.opts.atomic = true;
        let out = job.run_ok(engine, &[vec![Op::write(0, BS, 5)], vec![Op::read(0, BS)]]);
        assert_eq!(
            out[0][0].result,
            -(libc::EOPNOTSUPP as i64),
            "{engine}: an atomic buffered write"
        );
        assert_eq!(out[1][0].result, BS as i64, "{engine}: the read");
        assert_eq!(out[1][0].data, pattern(4, 0, BS as usize), "{engine}");
    }
}
