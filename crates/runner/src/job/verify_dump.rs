//! verify_dump: a failed block written out, as read and as it should be.

use ioscope_verify::Failure;

/// verify_dump: the block as read (`<file>.<offset>.received`) and as it should be
/// (`.expected`), or `.hdr_fail` for a bad header, in the working directory; the
/// messages to print.
pub(crate) fn dump(path: &str, f: &Failure, got: &[u8], expected: Option<&[u8]>) -> Vec<String> {
    let base = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| "file".to_string(), |n| n.to_string_lossy().into_owned());
    let mut files: Vec<(&str, &[u8])> = Vec::new();
    match expected {
        Some(want) => {
            files.push(("received", got));
            files.push(("expected", want));
        }
        None => files.push(("hdr_fail", got)),
    }
    files
        .into_iter()
        .map(|(kind, bytes)| {
            let name = format!("{base}.{}.{kind}", f.block_offset);
            match std::fs::write(&name, bytes) {
                Ok(()) => format!("       {kind} data dumped as {name}"),
                Err(e) => format!("       {kind} data not dumped: {name}: {e}"),
            }
        })
        .collect()
}
