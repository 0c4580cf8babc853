use super::*;

#[test]
fn buckets_match_fio() {
    assert_eq!(
        [0, 1, 2, 3, 4, 7, 8, 63, 64, 1000].map(depth_bucket),
        [0, 0, 1, 1, 2, 2, 3, 5, 6, 6]
    );
    assert_eq!(
        [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65].map(batch_bucket),
        [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    );
}
