//! CPU use of the calling thread (getrusage RUSAGE_THREAD).

use ioscope_stats::CpuUsage;

#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub usr_us: u64,
    pub sys_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

pub fn thread_usage() -> Usage {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    Usage {
        usr_us: us(ru.ru_utime),
        sys_us: us(ru.ru_stime),
        ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
        majf: ru.ru_majflt as u64,
        minf: ru.ru_minflt as u64,
    }
}

impl Usage {
    pub fn since(&self, a: &Usage) -> Usage {
        Usage {
            usr_us: self.usr_us.saturating_sub(a.usr_us),
            sys_us: self.sys_us.saturating_sub(a.sys_us),
            ctx: self.ctx.saturating_sub(a.ctx),
            majf: self.majf.saturating_sub(a.majf),
            minf: self.minf.saturating_sub(a.minf),
        }
    }
}

impl From<Usage> for CpuUsage {
    fn from(u: Usage) -> CpuUsage {
        CpuUsage {
            usr_s: u.usr_us as f64 / 1e6,
            sys_s: u.sys_us as f64 / 1e6,
            ctx: u.ctx,
            majf: u.majf,
            minf: u.minf,
        }
    }
}
