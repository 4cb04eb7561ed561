//! `FlowLmFast::step` allocates nothing after warm-up: a counting global allocator (this
//! test binary only) counts heap allocations during steps 5..20, with 1 and 2 threads.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use candle_core::Device;
use pocket_tts_core::config::Config;
use pocket_tts_core::fast::flow_lm::FlowLmFast;
use pocket_tts_core::models::flow_lm::FlowLm;
use pocket_tts_core::tts_model::TtsModel;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Prefills `fast`, runs 20 steps (decode_steps as given), returns the allocations
/// counted during steps 5..20.
fn allocations_in_steps(fast: &FlowLmFast, decode_steps: usize) -> usize {
    let (d, ldim) = (fast.dim(), fast.ldim());
    let mut state = fast.new_state(64);
    let text: Vec<f32> = (0..10 * d)
        .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    fast.prefill(&text, 10, &mut state).unwrap();
    let noise: Vec<f32> = (0..ldim).map(|i| (i as f32 * 0.37).sin() * 0.5).collect();
    let mut prev = vec![0f32; ldim];
    let mut out = vec![0f32; ldim];
    let mut counted = 0;
    for i in 0..20 {
        let first = i == 0;
        if i == 5 {
            ALLOCS.store(0, Ordering::SeqCst);
            COUNTING.store(true, Ordering::SeqCst);
        }
        let eos = fast
            .step(
                if first { None } else { Some(&prev) },
                &noise,
                decode_steps,
                &mut state,
                &mut out,
            )
            .unwrap();
        assert!(eos.is_finite());
        prev.copy_from_slice(&out);
        if i == 19 {
            COUNTING.store(false, Ordering::SeqCst);
            counted = ALLOCS.load(Ordering::SeqCst);
        }
    }
    counted
}

fn step_allocates_nothing_after_warm_up() {
    // The counter counts.
    ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let b = std::hint::black_box(Box::new(1u64));
    COUNTING.store(false, Ordering::SeqCst);
    drop(b);
    assert!(
        ALLOCS.load(Ordering::SeqCst) >= 1,
        "the counting allocator is not active"
    );

    // The tiny fixture model (LSD head), 1 and 4 decode steps.
    let config = Config::from_yaml_file(&common::fixture("tiny/config.yaml")).unwrap();
    let model = TtsModel::from_files(
        config,
        &common::repo_root().join("tests/fixtures/tiny/model.safetensors"),
        &common::asset("tokenizer.model"),
    )
    .unwrap();
    let fast = FlowLmFast::new(model.flow_lm()).unwrap();
    assert_eq!(allocations_in_steps(&fast, 1), 0, "tiny, 1 decode step");
    assert_eq!(allocations_in_steps(&fast, 4), 0, "tiny, 4 decode steps");

    // A model whose GEMVs and attention are large enough to use the thread team
    // (english_7m architecture, random weights), with 1 and 2 threads.
    let c7 = Config::builtin("english_7m_2026-10").unwrap();
    let vb = pocket_tts_core::weights::random_var_builder(1, &Device::Cpu);
    let flow = FlowLm::new(
        &c7.flow_lm,
        c7.latent_dim(),
        c7.speaker_dim(),
        vb.pp("flow_lm"),
    )
    .unwrap();
    let mut fast = FlowLmFast::new(&flow).unwrap();
    assert_eq!(allocations_in_steps(&fast, 1), 0, "english_7m, 1 thread");
    fast.set_threads(2);
    assert_eq!(allocations_in_steps(&fast, 1), 0, "english_7m, 2 threads");
}

/// This binary has no libtest harness (`harness = false` in Cargo.toml): the harness's own
/// thread allocates while a test runs (bookkeeping right after it spawns the test thread,
/// which a busy machine can delay into the counted window), and the counter is
/// process-wide. Here only the measured code and its team threads run. A failed check
/// panics, so the process exits non-zero and `cargo test` reports the failure.
fn main() {
    step_allocates_nothing_after_warm_up();
    println!("test step_allocates_nothing_after_warm_up ... ok (FlowLmFast::step: no allocation after warm-up)");
}
