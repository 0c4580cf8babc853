//! `ioscope peak --nop FILE` on the guests' kernels (6.12 and 6.1), older than the NOP
//! flags that make NOPs name a file (IORING_NOP_FILE, Linux 6.13): refused at setup,
//! saying why. 6.12 refuses the flags (EINVAL); a kernel before 6.10 ignores them and
//! would issue plain NOPs, which the second probe (a NOP naming no file must fail with
//! EBADF) catches. Plain `peak --nop` runs on both. The host's own kernel runs
//! `peak --nop FILE` in `peak::nops_that_name_a_file_leave_it_untouched`.

use crate::common::*;

/// The running kernel's (major, minor).
fn kernel() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease");
    let mut parts = release.trim().split(['.', '-', '+']);
    let mut num = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (num(), num())
}

#[test]
#[ignore = "runs in the rig's guest (rig::device_group_in_the_rig)"]
fn nops_naming_a_file_need_a_kernel_that_looks_it_up() {
    super::in_guest();
    let d = tmpdir();
    let f = d.path().join("nopfile");
    std::fs::write(&f, vec![0u8; 1 << 20]).expect("write the file");
    let path = f.to_str().expect("utf-8 path");
    let args = [
        "peak",
        "--nop",
        "--runtime=1",
        "--registerfiles",
        "--fixedbufs",
        "--json",
        path,
    ];
    let r = run_in(d.path(), &args);
    let k = kernel();
    if k >= (6, 13) {
        assert_eq!(r.code, 0, "kernel {k:?}: {}", r.stderr);
    } else {
        assert_ne!(r.code, 0, "kernel {k:?}: {}", r.stdout);
        assert!(
            r.stderr.contains("IORING_NOP_FILE") && r.stderr.contains("not taken by this kernel"),
            "kernel {k:?}: {}",
            r.stderr
        );
    }
    let (r, v) = run_json(d.path(), &["peak", "--nop", "--runtime=1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(v["ios"].as_u64().is_some_and(|n| n > 1000), "{v}");
    assert_eq!(v["clat_ns"]["N"], v["ios"], "every NOP timed: {v}");
}
