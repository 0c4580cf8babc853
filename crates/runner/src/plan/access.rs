//! Which kinds of I/O a job does to its files.

use ioscope_options::JobOptions;

/// What the job will do to its files.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub reads: bool,
    pub writes: bool,
    pub trims: bool,
}

/// Which kinds of I/O a job does.
pub fn access(o: &JobOptions) -> Access {
    Access {
        reads: o.rw.mode.reads(),
        // falloc changes the file's allocation whatever the direction (a read is a
        // fallocate that keeps the size), so its files open for writing, as in fio.
        writes: o.rw.mode.writes() || o.ioengine == "falloc",
        trims: o.rw.mode.trims(),
    }
}
