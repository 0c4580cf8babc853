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

/// thp=1: the mapping is advised for transparent huge pages (VmFlags "hg" in smaps);
/// without it, it is not.
#[test]
fn thp_advises_huge_pages_for_the_mapping() {
    let f = buffered();
    let info = FileInfo {
        fd: f.file.as_raw_fd(),
        size: FILE_SIZE,
        is_block: false,
    };
    for thp in [false, true] {
        let m = crate::mmap::map_file(&info, thp).expect("map");
        let flags = vm_flags(m.addr as usize);
        crate::mmap::unmap_all(std::slice::from_ref(&m));
        assert!(flags.starts_with("VmFlags:"), "the mapping is in smaps");
        assert_eq!(flags.split_whitespace().any(|f| f == "hg"), thp, "{flags}");
    }
}

/// The VmFlags line of the mapping that starts at `addr`.
fn vm_flags(addr: usize) -> String {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
    let start = format!("{addr:x}-");
    smaps
        .lines()
        .skip_while(|l| !l.starts_with(&start))
        .find(|l| l.starts_with("VmFlags:"))
        .unwrap_or_default()
        .to_string()
}
