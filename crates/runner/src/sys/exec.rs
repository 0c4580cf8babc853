//! exec_prerun and exec_postrun hooks.

use crate::error::RunError;

/// exec_prerun / exec_postrun: run `sh -c CMD`, output in NAME.WHAT.txt.
pub(crate) fn exec_hook(name: &str, what: &str, cmd: &str) -> Result<(), RunError> {
    let out = std::fs::File::create(format!("{name}.{what}.txt"))
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what}: {e}")))?;
    let err = out
        .try_clone()
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what}: {e}")))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what} '{cmd}': {e}")))?;
    if !status.success() {
        return Err(RunError::Setup(format!(
            "job '{name}': exec_{what} '{cmd}' failed ({status}); see {name}.{what}.txt"
        )));
    }
    Ok(())
}
