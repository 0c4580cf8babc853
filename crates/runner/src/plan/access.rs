//! Which kinds of I/O a job does to its files.

/// What the job will do to its files.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub reads: bool,
    pub writes: bool,
    pub trims: bool,
}
