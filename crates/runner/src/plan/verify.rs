//! The verify settings of a job, checked and settled before anything is touched.

use ioscope_options::JobOptions;
use ioscope_verify::{Method, Pattern, Spec};

/// The spec of a job's options, or why they cannot be verified.
pub fn spec_of(o: &JobOptions, thread: u16) -> Result<Option<Spec>, String> {
    if o.verify == "0" || o.verify == "none" {
        if o.trim_percentage > 0 {
            return Err(
                "trim_percentage trims written blocks to verify them: set verify= too".into(),
            );
        }
        return Ok(None);
    }
    let method = Method::from_name(&o.verify)
        .ok_or_else(|| format!("verify={}: unknown method", o.verify))?;
    let pattern = match &o.verify_pattern {
        Some(p) => {
            let (bytes, offset_at) = p.resolve().map_err(|e| format!("verify_pattern: {e}"))?;
            Some(Pattern {
                bytes,
                offset_at,
                interval: o.verify_pattern_interval.min(usize::MAX as u64) as usize,
            })
        }
        None => None,
    };
    if matches!(method, Method::Pattern | Method::PatternHdr) && pattern.is_none() {
        return Err(format!(
            "verify={} needs verify_pattern (the bytes every block must hold)",
            o.verify
        ));
    }
    if o.verify_interval > 0 && o.verify_interval < 80 {
        return Err(format!(
            "verify_interval={}: min value out of range (80 min)",
            o.verify_interval
        ));
    }
    let spec = Spec {
        method,
        interval: o.verify_interval.min(u32::MAX as u64) as u32,
        verify_offset: o.verify_offset.min(u32::MAX as u64) as u32,
        pattern,
        thread,
        layout: ioscope_verify::header::Layout::from_name(&o.verify_header_format)
            .unwrap_or_default(),
    };
    let min_bs = (0..3)
        .filter(|&d| o.bs.0[d] > 0)
        .map(|d| o.min_bs(d))
        .min()
        .unwrap_or(4096);
    let chunk = spec.chunk_len(min_bs as usize);
    if chunk < spec.min_block() {
        return Err(format!(
            "verify={}: blocks of {chunk} bytes cannot hold the {}-byte verify header",
            o.verify,
            spec.min_block()
        ));
    }
    if spec.verify_offset > 0 && spec.verify_offset as usize + spec.hdr_len() > chunk {
        return Err(format!(
            "verify_offset={}: the {}-byte header does not fit at that offset of a {chunk}-byte block",
            spec.verify_offset,
            spec.hdr_len()
        ));
    }
    Ok(Some(spec))
}

/// Writes of more than one block size (bssplit, bsrange, bs per direction).
pub(crate) fn mixed_sizes(o: &JobOptions) -> bool {
    let w = 1;
    o.bssplit.as_ref().is_some_and(|s| s.0[w].len() > 1)
        || o.bsrange
            .as_ref()
            .is_some_and(|r| r.0 .0[w].lo != r.0 .0[w].hi)
}
