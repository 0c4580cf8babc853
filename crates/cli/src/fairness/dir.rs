//! Which bytes count as transferred (`--dir`).

/// Which bytes count as "transferred".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    #[default]
    All,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::All => "all",
        }
    }
}
