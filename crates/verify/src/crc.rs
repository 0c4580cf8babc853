//! fio's CRC-32C, which the headers, the checksums and the state file all use.

/// fio's CRC-32C: the Castagnoli CRC without the final inversion (the bitwise NOT of
/// the standard value; check 0x1CF96D7C). Hardware-accelerated by the crc32c crate.
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}
