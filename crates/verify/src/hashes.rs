//! The non-cryptographic hashes fio's `--crctest` times beside its verify checksums
//! (fio uses them for its bloom filter and hash tables, not for verify): FNV-1 over
//! 64-bit words, MurmurHash3 (x86, 32-bit) and Bob Jenkins' lookup3 word hash (the
//! kernel's jhash). Written from the algorithms' published descriptions; `--crctest`
//! needs their speed, and here they give the published test values.

/// FNV-1 (64-bit offset basis and prime) over the data's 64-bit little-endian words;
/// a tail shorter than a word is zero-padded.
pub fn fnv1_64(data: &[u8], mut h: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut words = data.chunks_exact(8);
    for w in words.by_ref() {
        h = h.wrapping_mul(PRIME)
            ^ u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = h.wrapping_mul(PRIME) ^ u64::from_le_bytes(w);
    }
    h
}

/// MurmurHash3, x86 32-bit variant.
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for b in blocks.by_ref() {
        let k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k |= u32::from(b) << (8 * i);
        }
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// lookup3's mix of three words.
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's final mix.
fn last(a: u32, b: u32, mut c: u32) -> u32 {
    let mut a = a;
    let mut b = b;
    c = (c ^ b).wrapping_sub(b.rotate_left(14));
    a = (a ^ c).wrapping_sub(c.rotate_left(11));
    b = (b ^ a).wrapping_sub(a.rotate_left(25));
    c = (c ^ b).wrapping_sub(b.rotate_left(16));
    a = (a ^ c).wrapping_sub(c.rotate_left(4));
    b = (b ^ a).wrapping_sub(a.rotate_left(14));
    (c ^ b).wrapping_sub(b.rotate_left(24))
}

/// Bob Jenkins' lookup3 `hashlittle` over bytes (the kernel's jhash).
pub fn jhash(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |w: &[u8]| {
        let mut x = [0u8; 4];
        x[..w.len()].copy_from_slice(w);
        u32::from_le_bytes(x)
    };
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]));
    }
    last(a, b, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_values() {
        // MurmurHash3_x86_32 reference values.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
            0x2e4f_f723
        );
        // lookup3.c's driver: hashlittle("", 0) and "Four score and seven years ago".
        assert_eq!(jhash(b"", 0), 0xdead_beef);
        assert_eq!(jhash(b"Four score and seven years ago", 0), 0x1777_0551);
        assert_eq!(jhash(b"Four score and seven years ago", 1), 0xcd62_8161);
        // FNV-1 of nothing is the offset basis.
        assert_eq!(fnv1_64(b"", 0xcbf2_9ce4_8422_2325), 0xcbf2_9ce4_8422_2325);
    }
}
