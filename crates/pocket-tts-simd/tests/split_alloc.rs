//! `SplitMut` and `Team::for_each_split*` allocate nothing once the team exists: a
//! counting global allocator (this test binary only) counts heap allocations during many
//! team jobs. The binary has no libtest harness (`harness = false` in Cargo.toml), so no
//! other thread of the test runner allocates while it counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pocket_tts_simd::{SplitMut, Team};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn count(&self) {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments, so
// the `GlobalAlloc` contract is the system allocator's; counting has no effect on it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.count();
        // SAFETY: forwarded unchanged (the caller upholds `GlobalAlloc::alloc`'s contract).
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.count();
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.count();
        // SAFETY: `ptr` came from this allocator, i.e. from `System` (as in `alloc`).
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    team_jobs_over_split_buffers_allocate_nothing();
    println!("split_alloc: team jobs over split buffers allocate nothing (threads 1, 2, 3): ok");
}

fn team_jobs_over_split_buffers_allocate_nothing() {
    let (heads, cap, dim) = (16, 64, 32);
    let (rows, cols) = (1024, 8);
    let mut scores = vec![0f32; heads * cap];
    let mut out = vec![0f32; heads * dim];
    let mut y = vec![0f32; rows * cols];
    for threads in [1, 2, 3] {
        let team = Team::new(threads);
        ALLOCS.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        for round in 0..500 {
            let v = round as f32;
            {
                let s = SplitMut::new(&mut scores, heads, cap, heads, 1);
                let o = SplitMut::new(&mut out, heads, dim, heads, 1);
                team.run_chunks(heads, |h| {
                    s.take(h).1.fill(v);
                    o.take(h).1.fill(v + 1.0);
                });
            }
            team.for_each_split(&mut y, rows, cols, 4 * threads, 8, |_, p| p.fill(v));
            team.for_each_split_per_thread(&mut y, rows, cols, 8, |_, p| {
                p.iter_mut().for_each(|x| *x += 1.0)
            });
        }
        COUNTING.store(false, Ordering::SeqCst);
        assert_eq!(ALLOCS.load(Ordering::SeqCst), 0, "threads {threads}");
        assert!(y.iter().all(|&x| x == 500.0));
        assert!(scores.iter().all(|&x| x == 499.0));
        assert!(out.iter().all(|&x| x == 500.0));
    }
}
