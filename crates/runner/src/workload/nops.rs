//! NOPs (`ioscope peak --nop`): a NOP reads and writes nothing, so none draws an
//! offset; counts and sizes are kept as for any I/O, so the job's limits hold.

use super::{Io, Workload};

impl Workload {
    /// [`Self::next_plain_io`] for NOPs (`peak --nop`): a NOP reads and writes
    /// nothing, so no offset is drawn (each is the region's start); counts and sizes
    /// are kept as for any I/O, so the job's limits hold.
    #[inline(always)]
    pub fn next_nop_io(&mut self) -> Option<Io> {
        let p = self.plain?;
        self.next_plain(p, false)
    }

    /// The one I/O every NOP of this workload is (see [`Self::next_nop_io`]).
    pub fn nop_io(&self) -> Option<Io> {
        let p = self.plain?;
        Some(Io {
            ddir: p.ddir,
            file: 0,
            offset: p.start,
            len: p.len,
            verify: false,
        })
    }

    /// Up to `k` NOPs at once: the workload is left as `k` calls of
    /// [`Self::next_nop_io`] would leave it. How many there were (fewer than `k`: the
    /// workload is at its end).
    #[inline(always)]
    pub fn take_nops(&mut self, k: u64) -> u64 {
        // Far from every limit (nearly always), once the first NOP set `last`: all of
        // them, without dividing or looping.
        if let Some(p) = self.plain.filter(|_| self.last.len != 0) {
            let want = k * u64::from(p.len);
            let room = self.pass_bytes.saturating_sub(self.pass_done);
            if self.ios_left >= k && room >= want && (self.time_based || self.total_left >= want) {
                self.ios_left -= k;
                self.pass_done += want;
                self.total_left = self.total_left.saturating_sub(want);
                return k;
            }
        }
        self.take_nops_slow(k)
    }

    /// [`Self::take_nops`] near a limit: the pass's end, the size's or number_ios'.
    #[inline(never)]
    fn take_nops_slow(&mut self, k: u64) -> u64 {
        let Some(p) = self.plain else {
            return 0;
        };
        let len = u64::from(p.len.max(1));
        let mut got = 0;
        while got < k {
            if self.ios_left == 0 || (!self.time_based && self.total_left == 0) {
                break;
            }
            if self.pass_done >= self.pass_bytes {
                self.start_pass();
            }
            // I/Os until the pass ends (the next one then starts a pass) or the size
            // runs out, each checked before an I/O as next_nop_io does.
            let in_pass = (self.pass_bytes.saturating_sub(self.pass_done))
                .div_ceil(len)
                .max(1);
            let by_size = match self.time_based {
                true => u64::MAX,
                false => self.total_left.div_ceil(len),
            };
            let n = (k - got).min(self.ios_left).min(in_pass).min(by_size);
            self.ios_left -= n;
            self.pass_done += n * len;
            self.total_left = self.total_left.saturating_sub(n * len);
            got += n;
        }
        if let (true, Some(io)) = (got > 0, self.nop_io()) {
            self.last = io;
        }
        got
    }
}
