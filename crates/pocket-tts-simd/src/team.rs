//! [`Team`]: a fixed group of threads for splitting one small parallel job (a GEMV's rows,
//! attention heads) with sub-microsecond hand-off and no heap allocation per job.
//!
//! A FlowLM step issues ~50 GEMVs of 0.05–2 ms each. Waking a sleeping worker (futex) costs
//! tens of microseconds and rayon's `join` from outside its pool queues the job on a
//! shared injector (which allocates now and then), so a [`Team`] keeps its helper threads
//! spinning for [`Team::spin`] after each job (default 200 µs) and only then parks them;
//! a job published while they spin starts within ~0.5 µs. The price is that the helpers
//! burn their cores for up to `spin` after every job: use a team only when those cores
//! would otherwise idle (`threads = 1` spawns nothing and runs jobs inline).
//!
//! [`Team::run_chunks`] hands out chunks dynamically: when a helper is descheduled (the
//! machine is busy), the caller does all the chunks itself and withdraws the job from
//! helpers that have not started, so a busy machine costs little more than one thread.
//! [`Team::run`] (a fixed part per thread) must wait for every helper.
//!
//! Parts that write into one shared output take disjoint pieces of it from a
//! [`SplitMut`]; [`Team::for_each_split`] and [`Team::for_each_split_per_thread`] wrap the
//! common case of one buffer split by rows.

use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::SplitMut;

/// Default time helpers keep spinning after a job before they park.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// Helper slot states.
const IDLE: u32 = 0;
const OFFERED: u32 = 1;
const RUNNING: u32 = 2;

/// A job as seen by the helpers, living on the caller's stack during `run*`: helper `i`
/// calls `body(i)`.
struct Job<'a> {
    body: &'a (dyn Fn(usize) + Sync),
}

struct Slot {
    state: AtomicU32,
}

struct Shared {
    /// The current job (`*const Job`), valid while some slot is `OFFERED` or `RUNNING`.
    job: AtomicPtr<()>,
    /// One per helper (index `i - 1` for helper `i`).
    slots: Vec<Slot>,
    /// A helper's part panicked.
    panicked: AtomicBool,
    quit: AtomicBool,
    spin: Duration,
}

/// A group of `threads` threads (the caller plus `threads - 1` helpers); see the module
/// docs.
pub struct Team {
    threads: usize,
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    /// Serialises concurrent `run*` calls (one job at a time).
    lock: Mutex<()>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("threads", &self.threads)
            .field("spin", &self.shared.spin)
            .finish()
    }
}

impl Team {
    /// A team of `threads` threads (at least 1) with the default spin time. `threads - 1`
    /// helper threads are spawned now and live until the team is dropped; this returns
    /// once they have all started, so no thread start-up (which allocates) happens later.
    ///
    /// # Panics
    /// If a thread cannot be spawned.
    pub fn new(threads: usize) -> Self {
        Self::with_spin(threads, DEFAULT_SPIN)
    }

    /// Like [`Team::new`] with the time helpers spin after a job before parking.
    ///
    /// # Panics
    /// If a thread cannot be spawned.
    pub fn with_spin(threads: usize, spin: Duration) -> Self {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            job: AtomicPtr::new(std::ptr::null_mut()),
            slots: (1..threads)
                .map(|_| Slot {
                    state: AtomicU32::new(IDLE),
                })
                .collect(),
            panicked: AtomicBool::new(false),
            quit: AtomicBool::new(false),
            spin,
        });
        // Every helper reaches the barrier only after the thread runtime has set it up
        // (which allocates), so once `new` returns the team allocates nothing more.
        let started = Arc::new(std::sync::Barrier::new(threads));
        let helpers = (1..threads)
            .map(|i| {
                let s = shared.clone();
                let started = started.clone();
                std::thread::Builder::new()
                    .name(format!("pocket-tts-team-{i}"))
                    .spawn(move || {
                        started.wait();
                        helper(i, &s)
                    })
                    .expect("spawning a team thread")
            })
            .collect();
        started.wait();
        Self {
            threads,
            shared,
            helpers,
            lock: Mutex::new(()),
        }
    }

    /// Number of threads (caller included).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How long helpers spin after a job before parking.
    pub fn spin(&self) -> Duration {
        self.shared.spin
    }

    /// Runs `f(0)` on the calling thread and `f(1)`, …, `f(threads - 1)` on the helpers,
    /// returning when all are done. Allocates nothing. Concurrent calls from several
    /// threads are serialised. A panic in any part is re-raised here after all parts
    /// have finished.
    pub fn run<F: Fn(usize) + Sync>(&self, f: F) {
        if self.threads == 1 {
            f(0);
            return;
        }
        self.dispatch(&f, || f(0), false);
    }

    /// Runs `f(0)`, …, `f(chunks - 1)`, each exactly once, on whichever team threads are
    /// free: threads claim chunks in order from a shared counter. The caller works too,
    /// and once no chunk is left it withdraws the job from helpers that have not started,
    /// so it never waits for a descheduled helper. Allocates nothing; concurrent calls
    /// are serialised; panics are re-raised like [`Team::run`].
    pub fn run_chunks<F: Fn(usize) + Sync>(&self, chunks: usize, f: F) {
        if self.threads == 1 || chunks <= 1 {
            (0..chunks).for_each(f);
            return;
        }
        let next = AtomicUsize::new(0);
        let work = || loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                break;
            }
            f(c);
        };
        self.dispatch(&|_| work(), work, true);
    }

    /// Splits `data` into `chunks` pieces of whole rows as
    /// [`SplitMut::new`]`(data, rows, unit, chunks, align)` does (rows of `unit` elements,
    /// piece boundaries at multiples of `align` rows) and calls `f(rows, piece)` for every
    /// non-empty piece, the pieces handed out dynamically by [`Team::run_chunks`].
    /// `chunks == 0` is treated as 1. Allocates nothing.
    ///
    /// For several output buffers, or rows with a leading dimension, build the
    /// [`SplitMut`]s directly and take from them inside [`Team::run_chunks`].
    ///
    /// # Panics
    /// As [`SplitMut::new`] (`chunks >` [`SplitMut::MAX_PARTS`], `data` shorter than
    /// `rows·unit`); a panic in `f` is re-raised like [`Team::run`].
    ///
    /// # Example
    /// ```
    /// use pocket_tts_simd::Team;
    ///
    /// let (rows, cols) = (37, 5);
    /// let mut y = vec![0f32; rows * cols];
    /// Team::new(2).for_each_split(&mut y, rows, cols, 4, 8, |r, piece| {
    ///     for (k, row) in r.zip(piece.chunks_exact_mut(cols)) {
    ///         row.fill(k as f32);
    ///     }
    /// });
    /// assert_eq!(y[36 * cols], 36.0);
    /// ```
    pub fn for_each_split<T, F>(
        &self,
        data: &mut [T],
        rows: usize,
        unit: usize,
        chunks: usize,
        align: usize,
        f: F,
    ) where
        T: Send,
        F: Fn(Range<usize>, &mut [T]) + Sync,
    {
        let split = SplitMut::new(data, rows, unit, chunks.max(1), align);
        self.run_chunks(split.parts(), |i| {
            let (r, piece) = split.take(i);
            if !r.is_empty() {
                f(r, piece);
            }
        });
    }

    /// Like [`Team::for_each_split`] with one piece per team thread
    /// ([`Team::threads`] pieces), run by [`Team::run`]: thread `i` gets piece `i`.
    /// Prefer [`Team::for_each_split`] (dynamic chunks) unless the pieces must map to
    /// threads.
    ///
    /// # Panics
    /// As [`SplitMut::new`] (more than [`SplitMut::MAX_PARTS`] threads, `data` shorter than
    /// `rows·unit`); a panic in `f` is re-raised like [`Team::run`].
    pub fn for_each_split_per_thread<T, F>(
        &self,
        data: &mut [T],
        rows: usize,
        unit: usize,
        align: usize,
        f: F,
    ) where
        T: Send,
        F: Fn(Range<usize>, &mut [T]) + Sync,
    {
        let split = SplitMut::new(data, rows, unit, self.threads, align);
        self.run(|i| {
            let (r, piece) = split.take(i);
            if !r.is_empty() {
                f(r, piece);
            }
        });
    }

    fn dispatch(&self, body: &(dyn Fn(usize) + Sync), mine: impl FnOnce(), cancelable: bool) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let s = &*self.shared;
        let job = Job { body };
        s.panicked.store(false, Ordering::Relaxed);
        s.job
            .store(&job as *const Job<'_> as *mut (), Ordering::Relaxed);
        for (slot, h) in s.slots.iter().zip(&self.helpers) {
            // Release: the job pointer is visible to a helper that sees OFFERED.
            slot.state.store(OFFERED, Ordering::Release);
            h.thread().unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(mine));
        // `job` must outlive every helper that may read it.
        for slot in &s.slots {
            if cancelable
                && slot
                    .state
                    .compare_exchange(OFFERED, IDLE, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                continue;
            }
            let start = Instant::now();
            let mut spins = 0u32;
            while slot.state.load(Ordering::Acquire) != IDLE {
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(256) && start.elapsed() > Duration::from_micros(50) {
                    // The helper was descheduled: let it run.
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        s.job.store(std::ptr::null_mut(), Ordering::Relaxed);
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if s.panicked.load(Ordering::Relaxed) {
            panic!("a pocket-tts team thread panicked");
        }
    }
}

fn helper(index: usize, s: &Shared) {
    let slot = &s.slots[index - 1];
    loop {
        // Wait for an offer: spin for `s.spin`, then park (unpark tokens make the
        // check-then-park race free: an unpark between the check and `park` makes `park`
        // return at once).
        let mut since: Option<Instant> = None;
        let mut spins = 0u32;
        loop {
            if s.quit.load(Ordering::Acquire) {
                return;
            }
            if slot.state.load(Ordering::Relaxed) == OFFERED
                && slot
                    .state
                    .compare_exchange(OFFERED, RUNNING, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                break;
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) {
                std::hint::spin_loop();
                continue;
            }
            let t0 = *since.get_or_insert_with(Instant::now);
            if t0.elapsed() >= s.spin {
                std::thread::park();
                since = None;
            }
        }
        let job = s.job.load(Ordering::Relaxed) as *const Job<'static>;
        // SAFETY: the caller keeps the job alive until this slot is IDLE again, which only
        // this helper can make it now (the caller's withdrawal CAS expects OFFERED).
        let result = catch_unwind(AssertUnwindSafe(|| unsafe { ((*job).body)(index) }));
        if result.is_err() {
            s.panicked.store(true, Ordering::Relaxed);
        }
        // Release: this part's writes are visible to the caller once it sees IDLE.
        slot.state.store(IDLE, Ordering::Release);
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Splits `0..n` into `parts` contiguous ranges whose boundaries are multiples of `align`
/// (the last range takes the remainder); returns range `i`. Useful to give each team
/// thread a block of GEMV rows aligned to the kernel's row blocking; [`SplitMut`] hands
/// out the matching disjoint sub-slices of an output buffer.
///
/// `parts == 0` and `align == 0` are treated as 1. For `i < parts` the ranges are in
/// order and contiguous (range `i` ends where range `i + 1` starts, range 0 starts at 0,
/// the last ends at `n`; [`SplitMut`]'s soundness relies on this); for `i >= parts` the
/// range is empty.
pub fn split_range(n: usize, parts: usize, align: usize, i: usize) -> std::ops::Range<usize> {
    let parts = parts.max(1);
    let align = align.max(1);
    let blocks = n.div_ceil(align);
    let per = blocks / parts;
    let extra = blocks % parts;
    let start_block = i * per + i.min(extra);
    let end_block = start_block + per + usize::from(i < extra);
    (start_block * align).min(n)..(end_block * align).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_range_covers_everything_once() {
        for n in [0usize, 1, 7, 8, 9, 100, 1024, 3072, 4097] {
            for parts in 1..5 {
                for align in [1usize, 4, 8] {
                    let mut next = 0;
                    for i in 0..parts {
                        let r = split_range(n, parts, align, i);
                        assert_eq!(r.start, next, "n {n} parts {parts} align {align}");
                        assert!(r.start == n || r.start.is_multiple_of(align));
                        next = r.end;
                    }
                    assert_eq!(next, n);
                }
            }
        }
    }

    #[test]
    fn team_runs_every_part_once_many_times() {
        for threads in 1..4 {
            let team = Team::with_spin(threads, Duration::from_micros(20));
            let hits: Vec<AtomicUsize> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
            for round in 0..2000 {
                team.run(|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                if round % 500 == 0 {
                    // Let helpers park, then wake them again.
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            for h in &hits {
                assert_eq!(h.load(Ordering::Relaxed), 2000);
            }
        }
    }

    #[test]
    fn run_chunks_runs_every_chunk_once() {
        for threads in 1..4 {
            let team = Team::with_spin(threads, Duration::from_micros(20));
            for chunks in [0usize, 1, 2, 3, 7, 16] {
                for round in 0..300 {
                    let hits: Vec<AtomicUsize> = (0..chunks).map(|_| AtomicUsize::new(0)).collect();
                    team.run_chunks(chunks, |c| {
                        hits[c].fetch_add(1, Ordering::Relaxed);
                    });
                    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                    if round % 100 == 0 {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                }
            }
        }
    }

    #[test]
    fn team_propagates_panics_and_keeps_working() {
        let team = Team::new(2);
        let r = catch_unwind(AssertUnwindSafe(|| {
            team.run(|i| {
                if i == 1 {
                    panic!("boom");
                }
            })
        }));
        assert!(r.is_err());
        let n = AtomicUsize::new(0);
        team.run(|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 2);
    }
}
