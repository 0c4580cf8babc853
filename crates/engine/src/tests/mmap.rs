//! mmap: round trip through the mapping, trim, and errors for writes it cannot do.

use super::*;

#[test]
fn round_trip_and_trim() {
    round_trip(&Job::new(8, vec![buffered()]), "mmap", 8, 3000);
    round_trip(&Job::new(8, vec![direct()]), "mmap", 8, BS);
    trim_test(&Job::new(1, vec![ext4()]), "mmap");
}

#[test]
fn data_is_shared_with_psync() {
    let job = Job::new(1, vec![buffered()]);
    job.run_ok("psync", &[vec![Op::write(4096, BS, 8)]]);
    let out = job.run_ok("mmap", &[vec![Op::read(4096, BS)]]);
    assert_eq!(out[0][0].data, pattern(8, 4096, BS as usize));
    job.run_ok("mmap", &[vec![Op::write(65536, BS, 9)]]);
    let out = job.run_ok("psync", &[vec![Op::read(65536, BS)]]);
    assert_eq!(out[0][0].data, pattern(9, 65536, BS as usize));
}

#[test]
fn write_past_end_is_einval_and_read_is_short() {
    let job = Job::new(1, vec![buffered()]);
    let out = job.run_ok(
        "mmap",
        &[
            vec![Op::write(FILE_SIZE - 100, BS, 1)],
            vec![Op::read(FILE_SIZE - 100, BS)],
        ],
    );
    assert_eq!(out[0][0].result, -(libc::EINVAL as i64));
    assert_eq!(out[1][0].result, 100);
}

#[test]
fn read_only_file_maps_read_only() {
    let job = Job::new(1, vec![test_file("/dev/shm", 0, true)]);
    let out = job.run_ok("mmap", &[vec![Op::write(0, BS, 1)], vec![Op::read(0, BS)]]);
    assert_eq!(out[0][0].result, -(libc::EBADF as i64));
    assert_eq!(out[1][0].result, BS as i64);
    assert!(out[1][0].data.iter().all(|&b| b == 0));
}
