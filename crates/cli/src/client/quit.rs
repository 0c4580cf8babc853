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
    /// Each connection's writing half, and whether QUIT was sent to all.
    streams: Mutex<(Vec<Conn>, bool)>,
    /// Hosts whose sessions have ended.
    done: AtomicUsize,
}

impl Quit {
    /// A server's connection: it gets QUIT on a signal (at once when one came already).
    pub fn add(&self, s: &Conn) {
        let Ok(mut c) = s.try_clone() else {
            return;
        };
        let Ok(mut g) = self.streams.lock() else {
            return;
        };
        if g.1 {
            let _ = frame::send(&mut c, op::QUIT, 0, &[]);
        }
        g.0.push(c);
    }

    /// A host's session has ended.
    pub fn finished(&self) {
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
            for s in &mut g.0 {
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
                    for s in &mut g.0 {
                        let _ = frame::send(s, op::QUIT, 0, &[]);
                    }
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
