//! Metadata and protection information of io_uring_cmd's reads and writes: whether a
//! namespace's metadata travels in a separate buffer or inside each block (an
//! extended-LBA format), the blocks an I/O covers (in an extended-LBA format a block is
//! its data and its metadata), the job's block sizes checked against them, and the PI
//! the host writes when the controller does not insert it (`pi_act=0`), as fio 3.42
//! does.

//!
//! Refusals are messages; the engine names itself in the error.

use super::nvme::NsInfo;
use super::pi;
use crate::EngineConfig;

/// The blocks `len` bytes at `offset` cover, `block` bytes each on the host's side
/// (first block, count): None unless both are whole blocks and there is one at least.
pub(super) fn blocks_of(offset: u64, len: u64, block: u64) -> Option<(u64, u64)> {
    let (slba, nlb, rest) = if block.is_power_of_two() {
        let s = block.trailing_zeros();
        (offset >> s, len >> s, (offset | len) & (block - 1))
    } else {
        (
            offset / block,
            len / block,
            (offset % block) | (len % block),
        )
    };
    (rest == 0 && nlb > 0).then_some((slba, nlb))
}

/// Whether commands to namespace `n` need a separate metadata buffer: its metadata
/// reaches the host, and not inside each block.
pub(super) fn needs_md(n: &NsInfo, pi_act: bool) -> bool {
    n.carries_md(pi_act) && !n.extended
}

/// The metadata region: `units` buffers of `md_len` bytes, refused when absurd.
pub(super) fn md_bytes(units: usize, md_len: usize) -> Result<usize, String> {
    units
        .checked_mul(md_len)
        .filter(|&n| n <= 1 << 32)
        .ok_or_else(|| {
            format!(
                "md_per_io_size={md_len} for {units} I/O units is more memory than ioscope will take"
            )
        })
}

/// What fio 3.42 refuses before any I/O, for each namespace: protection information
/// larger than the metadata, block sizes that are not whole blocks of the host's (the
/// LBA data, and in an extended-LBA format its metadata too), and verify on an
/// extended-LBA format with PI inside each block's data.
pub(super) fn check_formats(ns: &[NsInfo], cfg: &EngineConfig<'_>) -> Result<(), String> {
    let c = cfg.opts.cmd;
    for (n, p) in ns.iter().zip(cfg.paths) {
        let p = p.display();
        if n.pi_type != 0 && usize::from(n.ms) < n.guard.pi_bytes() {
            let (pi, ms) = (n.guard.pi_bytes(), n.ms);
            return Err(format!(
                "{p}: {pi} bytes of protection information in {ms} bytes of metadata: not supported"
            ));
        }
        let block = n.host_block(c.pi_act);
        let extended = block != n.lba_size();
        if let Some(&(lo, hi)) =
            c.bs.iter()
                .find(|(lo, hi)| lo % block != 0 || hi % block != 0)
        {
            return Err(if extended {
                let hint = match lo == hi && lo % n.lba_size() == 0 {
                    true => format!(" (bs={}?)", lo / n.lba_size() * block),
                    false => String::new(),
                };
                format!(
                    "{p}: block size must be a multiple of {block} (LBA data size + metadata \
                     size), not {}{hint}",
                    if lo == hi {
                        lo.to_string()
                    } else {
                        format!("{lo}-{hi}")
                    }
                )
            } else {
                format!(
                    "{p}: block size must be a multiple of the LBA data size ({block}), not {}",
                    if lo % block != 0 { lo } else { hi }
                )
            });
        }
        if extended && n.pi_type != 0 && c.verify {
            return Err(format!(
                "{p}: verify cannot be used on an extended-LBA format with protection \
                 information (the PI is inside each block's data), as in fio"
            ));
        }
    }
    Ok(())
}

/// Bytes of separate metadata buffer each unit needs: none when no namespace needs one
/// ([`needs_md`]); else `md_per_io_size`, which must hold the metadata of the largest
/// I/O.
pub(super) fn metadata_len(ns: &[NsInfo], cfg: &EngineConfig<'_>) -> Result<usize, String> {
    let c = cfg.opts.cmd;
    let need = ns
        .iter()
        .filter(|n| needs_md(n, c.pi_act))
        .map(|n| (cfg.unit_buf_len >> n.lba_shift) * usize::from(n.ms))
        .max()
        .unwrap_or(0);
    if need > c.md_per_io_size as usize {
        return Err(format!(
            "{}: the namespace carries {} bytes of metadata per I/O of the largest block \
                 size; md_per_io_size={} is too small{}",
            cfg.paths
                .first()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            need,
            c.md_per_io_size,
            if c.pi_act {
                ""
            } else {
                " (pi_act=0: ioscope writes the protection information)"
            }
        ));
    }
    Ok(if need > 0 {
        c.md_per_io_size as usize
    } else {
        0
    })
}

/// The protection information of a write at `slba`, block by block: each block's data
/// and its metadata (in the separate buffer, or after the data in an extended-LBA
/// format). The PI is first or last in the metadata, its guard covering the metadata
/// before it; the reference tag is the block's LBA (all ones for type 3, which does not
/// check it).
pub(super) fn write_pi<'a>(
    ns: NsInfo,
    apptag: u16,
    slba: u64,
    blocks: impl Iterator<Item = (&'a [u8], &'a mut [u8])>,
) {
    let len = ns.guard.pi_bytes();
    let at = if ns.pi_first {
        0
    } else {
        usize::from(ns.ms) - len
    };
    for (i, (data, meta)) in blocks.enumerate() {
        let reftag = if ns.pi_type == 3 {
            u64::MAX
        } else {
            slba + i as u64
        };
        let (before, rest) = meta.split_at_mut(at);
        pi::put_pi(ns.guard, (data, before), apptag, reftag, &mut rest[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_whole_in_either_format() {
        assert_eq!(blocks_of(8192, 4096, 4096), Some((2, 1)));
        assert_eq!(blocks_of(8192, 2048, 4096), None);
        assert_eq!(blocks_of(100, 4096, 4096), None);
        assert_eq!(blocks_of(0, 0, 512), None);
        // 512-byte blocks with 8 bytes of metadata each.
        assert_eq!(blocks_of(520 * 9, 520 * 8, 520), Some((9, 8)));
        assert_eq!(blocks_of(4096, 4160, 520), None);
        assert_eq!(blocks_of(4160, 4096, 520), None);
    }
}
