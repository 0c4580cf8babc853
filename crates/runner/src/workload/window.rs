//! `openfiles` below the number of files: as in fio, at most that many files take
//! I/O at once. The first `openfiles` files start; when one has no more I/O in the
//! pass it leaves the window and the next file not yet used takes its place; a new
//! pass starts again with the first files. file_service_type chooses within the
//! window. (ioscope keeps every file's descriptor open for the whole job: the
//! engines register them at setup.) Where offsets never run out (norandommap, a
//! random distribution), no file leaves, and the first files keep the window: fio
//! 3.42 does the same (3 files, openfiles=2, norandommap: 6, 6 and 0 writes).

#[derive(Clone, Debug)]
pub(super) struct OpenWindow {
    size: usize,
    files: usize,
    /// The files taking I/O, in the order they came in.
    active: Vec<usize>,
    /// The next file to come in.
    next: usize,
    /// round robin's place in `active`.
    turn: usize,
}

impl OpenWindow {
    /// None when every file fits at once.
    pub(super) fn new(openfiles: u32, files: usize) -> Option<OpenWindow> {
        let size = openfiles as usize;
        (size > 0 && size < files).then(|| {
            let mut w = OpenWindow {
                size,
                files,
                active: Vec::with_capacity(size),
                next: 0,
                turn: 0,
            };
            w.reset();
            w
        })
    }

    /// A new pass: the first files again.
    pub(super) fn reset(&mut self) {
        self.active.clear();
        self.active.extend(0..self.size);
        self.next = self.size;
        self.turn = 0;
    }

    /// The files in the window now.
    pub(super) fn len(&self) -> usize {
        self.active.len()
    }

    /// Round robin: the next file in the window.
    pub(super) fn round_robin(&mut self) -> usize {
        let f = self.active[self.turn % self.active.len()];
        self.turn = (self.turn + 1) % self.active.len();
        f
    }

    /// The `i`-th file in the window (random and sequential service).
    pub(super) fn at(&self, i: usize) -> usize {
        self.active[i % self.active.len()]
    }

    /// File `f` has no more I/O in this pass: it leaves, the next unused file comes
    /// in. False when the window is now empty (the pass is over).
    pub(super) fn done(&mut self, f: usize) -> bool {
        if let Some(i) = self.active.iter().position(|&x| x == f) {
            self.active.remove(i);
            if i < self.turn {
                self.turn -= 1;
            }
            if self.next < self.files {
                self.active.push(self.next);
                self.next += 1;
            }
        }
        if !self.active.is_empty() {
            self.turn %= self.active.len();
        }
        !self.active.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_open_of_three_round_robin_then_the_third_comes_in() {
        let mut w = OpenWindow::new(2, 3).unwrap();
        assert_eq!(
            [w.round_robin(), w.round_robin(), w.round_robin()],
            [0, 1, 0]
        );
        assert!(w.done(0));
        assert_eq!(w.len(), 2);
        let next: Vec<usize> = (0..4).map(|_| w.round_robin()).collect();
        assert!(next.contains(&2) && next.contains(&1) && !next.contains(&0));
        assert!(w.done(1));
        assert!(!w.done(2));
        w.reset();
        assert_eq!(w.at(0), 0);
        assert!(OpenWindow::new(3, 3).is_none() && OpenWindow::new(0, 3).is_none());
    }
}
