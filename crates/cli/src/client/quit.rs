//! Ctrl-C (SIGINT) or SIGTERM on the client: QUIT to every server, which stops its jobs
//! and still sends their results (as ioscope's servers do), so that the report is
//! printed in full, marked interrupted. (fio 3.42's client exits at once, printing
//! nothing.)

use ioscope_wire::conn::Conn;
use ioscope_wire::frame;
use ioscope_wire::msg::op;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// The servers' connections, to send them QUIT on a signal.
#[derive(Default)]
pub struct Quit {
    /// Each running host's connection (its writing half, by the host's place), and
    /// whether QUIT was sent to all.
    streams: Mutex<(Vec<(usize, Conn)>, bool)>,
    /// Hosts whose sessions have ended.
    done: AtomicUsize,
}

impl Quit {
    /// Host `i`'s connection: it gets QUIT on a signal (at once when one came already).
    pub fn add(&self, i: usize, s: &Conn) {
        let Ok(mut c) = s.try_clone() else {
            return;
        };
        let Ok(mut g) = self.streams.lock() else {
            return;
        };
        if g.1 {
            let _ = frame::send(&mut c, op::QUIT, 0, &[]);
        }
        g.0.push((i, c));
    }

    /// Host `i`'s session has ended: nothing more is sent to it, and its connection
    /// closes here too (its server waits for that before closing its end).
    pub fn finished(&self, i: usize) {
        if let Ok(mut g) = self.streams.lock() {
            g.0.retain(|(h, _)| *h != i);
        }
        self.done.fetch_add(1, Relaxed);
    }

    /// Whether all `hosts` sessions have ended.
    pub fn all_done(&self, hosts: usize) -> bool {
        self.done.load(Relaxed) >= hosts
    }

    /// Sessions of `hosts` still going.
    pub fn running(&self, hosts: usize) -> usize {
        hosts.saturating_sub(self.done.load(Relaxed))
    }

    /// A message to every server still connected.
    pub fn send_all(&self, op: u16, payload: &[u8]) {
        if let Ok(mut g) = self.streams.lock() {
            for (_, s) in &mut g.0 {
                let _ = frame::send(s, op, 0, payload);
            }
        }
    }

    /// Until `hosts` sessions have ended: on a signal, QUIT to every server.
    pub fn watch(&self, hosts: usize) {
        while self.done.load(Relaxed) < hosts {
            if ioscope_runner::STOP.load(Relaxed) {
                if let Ok(mut g) = self.streams.lock() {
                    g.1 = true;
                    for (_, s) in &mut g.0 {
                        let _ = frame::send(s, op::QUIT, 0, &[]);
                    }
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
