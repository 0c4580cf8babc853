//! Whether to colour what goes to a stream: `--color=auto|always|never` (every command
//! takes it) over `NO_COLOR` (<https://no-color.org>: set and not empty means no colour)
//! over "is it a terminal". Settled once per process, when the flags are read.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// What `--color` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Auto = 0,
    Always = 1,
    Never = 2,
}

static WHEN: AtomicU8 = AtomicU8::new(When::Auto as u8);

/// Read `--color=VALUE`; an unknown word is an error naming the choices.
pub fn parse(v: Option<&str>) -> Result<When, String> {
    match v.unwrap_or("") {
        "auto" => Ok(When::Auto),
        "always" => Ok(When::Always),
        "never" => Ok(When::Never),
        o => Err(format!("--color={o}: use auto, always or never")),
    }
}

/// Keep `--color`'s answer for the rest of the process.
pub fn set(when: When) {
    WHEN.store(when as u8, Relaxed);
}

fn when() -> When {
    match WHEN.load(Relaxed) {
        1 => When::Always,
        2 => When::Never,
        _ => When::Auto,
    }
}

/// Whether output to stdout is coloured.
pub fn stdout() -> bool {
    decide(when(), no_color(), std::io::stdout().is_terminal())
}

/// `NO_COLOR` is set to something.
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn decide(when: When, no_color: bool, terminal: bool) -> bool {
    match when {
        When::Always => true,
        When::Never => false,
        When::Auto => terminal && !no_color,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_no_color_which_wins_over_the_terminal() {
        assert!(decide(When::Always, true, false));
        assert!(!decide(When::Never, false, true));
        assert!(decide(When::Auto, false, true));
        assert!(!decide(When::Auto, true, true));
        assert!(!decide(When::Auto, false, false));
        assert!(parse(Some("sometimes"))
            .unwrap_err()
            .contains("auto, always or never"));
    }
}
