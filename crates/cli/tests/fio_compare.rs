//! Side-by-side comparison with fio.

mod common;

#[test]
fn stub() {
    let _ = common::bin();
}
