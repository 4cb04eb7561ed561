//! The batched FlowLM step (`FlowLmFast::forward_batch`) at B = 1, 2, 4 and 8 streams on a
//! FULL-size FlowLM with seeded random weights (the released english architecture, ~85 M
//! weights, 340 MB in f32): each weight read once per pass, so the time per stream-step
//! falls as B grows until the pass is compute-bound.
//!
//! ```sh
//! # criterion: batch_step/{1,2,4,8} (time per batched pass; throughput in stream-steps)
//! cargo bench -p pocket-tts-core --bench batch_step
//! # int8 transformer (--quantize), 16-bit weights (--dtype), threads of the pass (default 2)
//! FLOW_LM_QUANTIZE=1 cargo bench -p pocket-tts-core --bench batch_step
//! FLOW_LM_DTYPE=bfloat16 BATCH_THREADS=1 cargo bench -p pocket-tts-core --bench batch_step
//! ```
//!
//! Every stream holds a prefilled prompt of 125 voice frames + 24 text tokens and steps at
//! a context of 150–200 positions (the states are reset to the prompt every 50 passes,
//! outside the timing); temperature-0.3 noise, 1 LSD decode step. Without `--bench` a
//! smoke test runs a few passes of the small `english_7m_2026-10` architecture.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::flow_lm::{
    BatchInput, BatchItem, BatchScratch, FlowLmFast, FlowLmFastState,
};

use common::{data, random_flow_lm};

const VOICE_FRAMES: usize = 125;
const TEXT_TOKENS: usize = 24;
/// Passes before the states are reset to the prefilled prompt.
const WINDOW: usize = 50;

/// `b` streams stepped together.
struct Batch<'a> {
    fast: &'a FlowLmFast,
    prompt: FlowLmFastState,
    states: Vec<FlowLmFastState>,
    previous: Vec<Vec<f32>>,
    noise: Vec<Vec<f32>>,
    scratch: BatchScratch,
    latents: Vec<f32>,
    eos: Vec<f32>,
    passes: usize,
}

impl<'a> Batch<'a> {
    fn new(fast: &'a FlowLmFast, b: usize, voice_frames: usize) -> Self {
        let (d, ldim) = (fast.dim(), fast.ldim());
        let mut cond = Vec::new();
        let latents = data(voice_frames * fast.speaker_dim(), 1.0, 1);
        fast.voice_conditioning(&latents, &mut cond).unwrap();
        let mut prompt = fast.new_state(cond.len() / d + TEXT_TOKENS + WINDOW + 1);
        fast.prefill(&cond, cond.len() / d, &mut prompt).unwrap();
        fast.prefill(&data(TEXT_TOKENS * d, 1.0, 2), TEXT_TOKENS, &mut prompt)
            .unwrap();
        let states = (0..b)
            .map(|_| {
                let mut s = fast.new_state(prompt.len() + WINDOW + 1);
                fast.copy_state(&prompt, &mut s, WINDOW + 1).unwrap();
                s
            })
            .collect();
        Self {
            fast,
            prompt,
            states,
            previous: (0..b).map(|i| data(ldim, 1.0, 10 + i as u64)).collect(),
            noise: (0..b).map(|i| data(ldim, 0.5, 100 + i as u64)).collect(),
            scratch: BatchScratch::default(),
            latents: vec![0.0; b * ldim],
            eos: vec![0.0; b],
            passes: 0,
        }
    }

    /// One batched pass; returns its time (resets outside it).
    fn pass(&mut self) -> Duration {
        if self.passes == WINDOW {
            for s in &mut self.states {
                self.fast.copy_state(&self.prompt, s, WINDOW + 1).unwrap();
            }
            self.passes = 0;
        }
        self.passes += 1;
        let mut items: Vec<BatchItem<'_>> = self
            .states
            .iter_mut()
            .zip(&self.previous)
            .zip(&self.noise)
            .map(|((state, p), n)| BatchItem {
                state,
                input: BatchInput::Step {
                    previous: Some(p),
                    noise: n,
                    decode_steps: 1,
                },
            })
            .collect();
        let t = Instant::now();
        self.fast
            .forward_batch(
                &mut items,
                &mut self.scratch,
                &mut self.latents,
                &mut self.eos,
            )
            .unwrap();
        let dt = t.elapsed();
        black_box(&self.latents);
        dt
    }
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if !bench_mode {
        let flow = random_flow_lm(&Config::builtin("english_7m_2026-10").unwrap(), false);
        let fast = FlowLmFast::new(&flow).unwrap();
        let mut b = Batch::new(&fast, 3, 4);
        for _ in 0..3 {
            b.pass();
        }
        println!("batch_step smoke test: ok");
        return;
    }
    let (config, quantize) = common::config_from_env();
    let threads = std::env::var("BATCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let flow = random_flow_lm(&config, quantize);
    let mut fast = FlowLmFast::new(&flow).unwrap();
    fast.set_prefill_threads(threads);
    eprintln!(
        "full-size random FlowLM{} ({}), {threads} thread(s)",
        if quantize { " (--quantize)" } else { "" },
        config.flow_lm.dtype
    );
    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("batch_step");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    for b in [1usize, 2, 4, 8] {
        let mut batch = Batch::new(&fast, b, VOICE_FRAMES);
        g.throughput(Throughput::Elements(b as u64));
        g.bench_function(b.to_string(), |bn| {
            bn.iter_custom(|iters| (0..iters).map(|_| batch.pass()).sum())
        });
    }
    g.finish();
    c.final_summary();
}
