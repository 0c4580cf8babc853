//! `--history[=DB]` and `--label=NAME`: defined once here, listed in the flag table of
//! every command that records runs (the fio face, `sweep run`, `compare --run`), their
//! values kept in a [`HistoryArgs`] in each command's arguments.

use ioscope_options::flags::{flag, FlagDef, FlagValue};
use std::path::PathBuf;

pub const HISTORY: FlagDef = flag("history", FlagValue::Optional, "DB", "Record the run in the history database DB (default: $IOSCOPE_HISTORY, else ~/.local/share/ioscope/history.sqlite); see ioscope history (ioscope)");
pub const LABEL: FlagDef = flag("label", FlagValue::Required, "NAME", "The run's label in the history, e.g. a kernel or firmware version; a sweep's points and a comparison's arms are LABEL/NAME (ioscope)");

/// The values of those flags.
#[derive(Clone, Debug, Default)]
pub struct HistoryArgs {
    /// Some(None): the default database.
    pub db: Option<Option<PathBuf>>,
    pub label: Option<String>,
}

/// A command's arguments that hold a [`HistoryArgs`].
pub trait HasHistory {
    fn history_args(&mut self) -> &mut HistoryArgs;
}

pub fn set_history<A: HasHistory>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    a.history_args().db = Some(v.filter(|p| !p.is_empty()).map(PathBuf::from));
    Ok(())
}

pub fn set_label<A: HasHistory>(a: &mut A, v: Option<&str>) -> Result<(), String> {
    let l = v.unwrap_or("").trim();
    if l.is_empty() {
        return Err("--label: give a name".into());
    }
    a.history_args().label = Some(l.to_string());
    Ok(())
}
