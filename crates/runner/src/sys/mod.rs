//! The machine: CPUs and their use, memory, NUMA, cgroups, I/O priorities, devices
//! (safety checks, disk statistics), hooks and facts for run metadata.

pub(crate) mod atomic;
pub(crate) mod cgroup;
pub(crate) mod cpu;
pub(crate) mod disk;
pub(crate) mod exec;
pub(crate) mod generic;
pub(crate) mod mem;
pub(crate) mod memlock;
pub(crate) mod meta;
pub(crate) mod numa;
pub(crate) mod prio;
pub(crate) mod safety;
pub(crate) mod signatures;
pub(crate) mod thread;
pub(crate) mod usage;
pub(crate) mod zoned;
