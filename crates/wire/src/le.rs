//! Little-endian fields of a payload, read at an offset: a field the payload is too
//! short for reads as zero (a peer's short message is refused by its length first).

pub(crate) fn u32_at(p: &[u8], off: usize) -> u32 {
    p.get(off..off + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

pub(crate) fn u64_at(p: &[u8], off: usize) -> u64 {
    p.get(off..off + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// A NUL-padded text field of `n` bytes.
pub(crate) fn str_at(p: &[u8], off: usize, n: usize) -> String {
    let b = p.get(off..off + n).unwrap_or_default();
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}
