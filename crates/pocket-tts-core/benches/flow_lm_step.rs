//! One FlowLM step, Candle (`FlowLm::step`) vs `FlowLmFast::step` (1 and 2 threads), on a
//! FULL-size FlowLM (the released english architecture: d_model 1024 × 6 layers, FFN
//! 4096, flow head 512 × 6; ~85 M weights, 340 MB read per step) with seeded random
//! weights (`weights::random_var_builder`): no download, no Python.
//!
//! ```sh
//! # criterion: flow_lm_step/{candle,fast_t1,fast_t2}, flow_head/{candle,fast}, team_sync/2
//! cargo bench -p pocket-tts-core --bench flow_lm_step
//! # interleaved A/B rounds (candle, fast t1, fast t2 and a plain 1-core stream read of the
//! # same number of bytes alternate; median and spread per step), then prefill A/B
//! # (FLOW_LM_VARIANTS=fast_t1 etc. restricts the step table, e.g. for perf)
//! FLOW_LM_AB=15 cargo bench -p pocket-tts-core --bench flow_lm_step
//! # the same with the int8 transformer of --quantize (Candle dequantizes per call: skip it)
//! FLOW_LM_QUANTIZE=1 FLOW_LM_VARIANTS=fast_t1,fast_t2,read FLOW_LM_AB=15 cargo bench ...
//! # 16-bit weights (--dtype): FLOW_LM_DTYPE=bfloat16 or float16 (the config's spelling)
//! FLOW_LM_DTYPE=bfloat16 FLOW_LM_VARIANTS=fast_t1,fast_t2,read FLOW_LM_AB=15 cargo bench ...
//! # fast vs Candle accuracy on a real checkpoint dir (config.yaml, model.safetensors,
//! # tokenizer.model), e.g. the random full-size one made by scripts/reference/
//! FLOW_LM_CHECK=/tmp/pocket-tts-parity/checkpoint cargo bench -p pocket-tts-core --bench flow_lm_step
//! ```
//!
//! Steps are measured at a context of 150–200 positions (a 10 s voice prompt of 125
//! frames + BOS + 24 text tokens, then up to 50 frames; the state is reset to the prefilled
//! prompt every 50 steps, outside the timing). Temperature-0.3 noise, 1 LSD decode step.
//!
//! Without `--bench` (`cargo test --benches` / `--all-targets`) a smoke test runs a few
//! steps of the small `english_7m_2026-10` architecture instead, so test builds stay quick.

mod common;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};
use criterion::{Criterion, Throughput};
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::flow_lm::{FlowLmFast, FlowLmFastState};
use pocket_tts_core::internals::models::flow_lm::FlowLm;
use pocket_tts_core::internals::modules::transformer::TransformerState;
use pocket_tts_core::tts_model::TtsModel;

use common::{data, random_flow_lm};

const VOICE_FRAMES: usize = 125;
const TEXT_TOKENS: usize = 24;
/// Steps before the state is reset to the prefilled prompt.
const WINDOW: usize = 50;

/// The prompt: voice conditioning of random latents, then random text-like embeddings.
struct Prompt {
    speaker_dim: usize,
    voice_latents: Vec<f32>,
    text: Vec<f32>,
    noise: Vec<Vec<f32>>,
}

impl Prompt {
    fn new(fast: &FlowLmFast, voice_frames: usize) -> Self {
        let sd = fast.speaker_dim();
        let (d, ldim) = (fast.dim(), fast.ldim());
        Self {
            speaker_dim: sd,
            voice_latents: data(voice_frames * sd, 1.0, 1),
            text: data(TEXT_TOKENS * d, 1.0, 2),
            noise: (0..WINDOW)
                .map(|i| data(ldim, 0.3f32.sqrt() * 1.7, 10 + i as u64))
                .collect(),
        }
    }
}

struct CandleRun<'a> {
    flow: &'a FlowLm,
    base: TransformerState,
    state: TransformerState,
    prev: Option<Tensor>,
    noise: Vec<Tensor>,
    i: usize,
}

impl<'a> CandleRun<'a> {
    fn new(flow: &'a FlowLm, p: &Prompt) -> Self {
        let sd = p.speaker_dim;
        let frames = p.voice_latents.len() / sd;
        let lat = Tensor::from_slice(&p.voice_latents, (1, frames, sd), &Device::Cpu).unwrap();
        let cond = flow.voice_conditioning(&lat).unwrap();
        let mut base = flow.init_state(cond.dim(1).unwrap(), &Device::Cpu).unwrap();
        flow.prefill(&cond, &mut base).unwrap();
        let mut base = base.deep_clone(cond.dim(1).unwrap() + TEXT_TOKENS).unwrap();
        let text = Tensor::from_slice(&p.text, (1, TEXT_TOKENS, flow.dim()), &Device::Cpu).unwrap();
        flow.prefill(&text, &mut base).unwrap();
        let noise = p
            .noise
            .iter()
            .map(|n| Tensor::from_slice(n, (1, flow.ldim()), &Device::Cpu).unwrap())
            .collect();
        let state = base.deep_clone(base.offset() + WINDOW).unwrap();
        Self {
            flow,
            base,
            state,
            prev: None,
            noise,
            i: 0,
        }
    }

    /// One timed step (the periodic reset is not timed).
    fn step(&mut self) -> Duration {
        if self.i == WINDOW {
            self.state = self.base.deep_clone(self.base.offset() + WINDOW).unwrap();
            self.prev = None;
            self.i = 0;
        }
        let t = Instant::now();
        let out = self
            .flow
            .step(self.prev.as_ref(), &self.noise[self.i], 1, &mut self.state)
            .unwrap();
        let e = t.elapsed();
        black_box(out.eos_logit);
        self.prev = Some(out.latent);
        self.i += 1;
        e
    }
}

struct FastRun<'a> {
    fast: &'a FlowLmFast,
    base: FlowLmFastState,
    state: FlowLmFastState,
    prev: Vec<f32>,
    out: Vec<f32>,
    noise: &'a [Vec<f32>],
    i: usize,
}

impl<'a> FastRun<'a> {
    fn new(fast: &'a FlowLmFast, p: &'a Prompt) -> Self {
        let mut cond = Vec::new();
        fast.voice_conditioning(&p.voice_latents, &mut cond)
            .unwrap();
        let t = cond.len() / fast.dim();
        let mut base = fast.new_state(t + TEXT_TOKENS + WINDOW);
        fast.prefill(&cond, t, &mut base).unwrap();
        fast.prefill(&p.text, TEXT_TOKENS, &mut base).unwrap();
        let mut state = fast.new_state(base.len() + WINDOW);
        fast.copy_state(&base, &mut state, WINDOW).unwrap();
        Self {
            fast,
            base,
            state,
            prev: vec![0.0; fast.ldim()],
            out: vec![0.0; fast.ldim()],
            noise: &p.noise,
            i: 0,
        }
    }

    fn step(&mut self) -> Duration {
        if self.i == WINDOW {
            self.fast
                .copy_state(&self.base, &mut self.state, WINDOW)
                .unwrap();
            self.i = 0;
        }
        let prev = (self.i > 0).then_some(&self.prev[..]);
        let t = Instant::now();
        let eos = self
            .fast
            .step(prev, &self.noise[self.i], 1, &mut self.state, &mut self.out)
            .unwrap();
        let e = t.elapsed();
        black_box(eos);
        self.prev.copy_from_slice(&self.out);
        self.i += 1;
        e
    }
}

/// Sum of `buf`, the fastest plain read this CPU does (AVX-512 with 4 accumulators when
/// available): the memory-bandwidth reference for the A/B table.
fn stream_read(buf: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f")]
        fn read512(buf: &[f32]) -> f32 {
            use std::arch::x86_64::*;
            let mut acc = [_mm512_setzero_ps(); 4];
            let mut chunks = buf.chunks_exact(64);
            for c in &mut chunks {
                for (k, a) in acc.iter_mut().enumerate() {
                    // SAFETY: `c` has 64 elements, so 16·k..16·k+16 is in bounds.
                    *a = _mm512_add_ps(*a, unsafe { _mm512_loadu_ps(c.as_ptr().add(16 * k)) });
                }
            }
            let s = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
            _mm512_reduce_add_ps(s) + chunks.remainder().iter().sum::<f32>()
        }
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: avx512f was detected.
            return unsafe { read512(buf) };
        }
    }
    let mut acc = [0f32; 16];
    let mut chunks = buf.chunks_exact(16);
    for c in &mut chunks {
        for (a, v) in acc.iter_mut().zip(c) {
            *a += v;
        }
    }
    acc.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

fn stats(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    (q(0.5), q(0.1), q(0.9))
}

/// Interleaved A/B: each round runs `per_round` steps of every variant in turn.
fn ab(flow: &FlowLm, rounds: usize) {
    let fast1 = FlowLmFast::new(flow).unwrap();
    let p = Prompt::new(&fast1, VOICE_FRAMES);
    let mut fast2 = FlowLmFast::new(flow).unwrap();
    fast2.set_threads(2);
    let mut c = CandleRun::new(flow, &p);
    let mut f1 = FastRun::new(&fast1, &p);
    let mut f2 = FastRun::new(&fast2, &p);
    let per_round = 10;
    let (mut tc, mut t1, mut t2, mut tr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let read_buf = data(fast1.weight_bytes_per_step(1) / 4, 1.0, 3);
    // Warm-up.
    for _ in 0..3 {
        c.step();
        f1.step();
        f2.step();
    }
    // FLOW_LM_VARIANTS=candle,fast_t1,fast_t2,read (default: all) selects what runs, e.g. to
    // profile one variant with perf.
    let variants =
        std::env::var("FLOW_LM_VARIANTS").unwrap_or_else(|_| "candle,fast_t1,fast_t2,read".into());
    let on = |name: &str| variants.split(',').any(|v| v.trim() == name);
    for _ in 0..rounds {
        for _ in 0..per_round {
            if on("candle") {
                tc.push(c.step().as_secs_f64() * 1e3);
            }
        }
        for _ in 0..per_round {
            if on("fast_t1") {
                t1.push(f1.step().as_secs_f64() * 1e3);
            }
        }
        for _ in 0..per_round {
            if on("fast_t2") {
                t2.push(f2.step().as_secs_f64() * 1e3);
            }
        }
        for _ in 0..per_round {
            if on("read") {
                let t = Instant::now();
                black_box(stream_read(&read_buf));
                tr.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    let bytes = fast1.weight_bytes_per_step(1) as f64;
    println!(
        "interleaved A/B, {rounds} rounds × {per_round} steps each, context {}..{} positions, \
         {:.1} MB of weights per step",
        c.base.offset(),
        c.base.offset() + WINDOW,
        bytes / 1e6
    );
    for (name, v) in [
        ("candle", &mut tc),
        ("fast, 1 thread", &mut t1),
        ("fast, 2 threads", &mut t2),
        ("stream read", &mut tr),
    ] {
        if v.is_empty() {
            continue;
        }
        let (med, p10, p90) = stats(v);
        println!(
            "  {name:16} median {med:7.2} ms  (p10 {p10:6.2}, p90 {p90:6.2})  weights at {:5.1} GB/s",
            bytes / (med * 1e-3) / 1e9
        );
    }
}

/// Prefill of the prompt (voice conditioning + 126 voice positions, then 24 text
/// positions), Candle vs fast with 1 and 2 threads, interleaved.
fn prefill_ab(flow: &FlowLm, rounds: usize) {
    let fast1 = FlowLmFast::new(flow).unwrap();
    let mut fast2 = FlowLmFast::new(flow).unwrap();
    fast2.set_threads(2);
    fast2.set_prefill_threads(2);
    let p = Prompt::new(&fast1, VOICE_FRAMES);
    let (mut tc, mut t1, mut t2) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rounds + 1 {
        let t = Instant::now();
        black_box(CandleRun::new(flow, &p).base.offset());
        let c = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        black_box(FastRun::new(&fast1, &p).base.len());
        let a = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        black_box(FastRun::new(&fast2, &p).base.len());
        let b = t.elapsed().as_secs_f64() * 1e3;
        if r > 0 {
            tc.push(c);
            t1.push(a);
            t2.push(b);
        }
    }
    println!(
        "prefill (voice conditioning + {} + {TEXT_TOKENS} positions), {rounds} interleaved rounds:",
        VOICE_FRAMES + 1
    );
    for (name, v) in [
        ("candle", &mut tc),
        ("fast, 1 thread", &mut t1),
        ("fast, 2 threads", &mut t2),
    ] {
        let (med, p10, p90) = stats(v);
        println!("  {name:16} median {med:7.1} ms  (p10 {p10:6.1}, p90 {p90:6.1})");
    }
}

/// Fast vs Candle on a checkpoint directory: max abs error of latents and EOS logits.
fn check(dir: &Path) {
    let config = Config::from_yaml_file(&dir.join("config.yaml")).expect("config.yaml");
    let weights = dir.join(config.weights_path.clone().expect("weights_path"));
    let model = TtsModel::builder()
        .config(config, None)
        .files(&weights, dir.join("tokenizer.model"))
        .load()
        .expect("model loads");
    let flow = model.flow_lm();
    let fast = FlowLmFast::new(flow).unwrap();
    let p = Prompt::new(&fast, VOICE_FRAMES);
    let mut c = CandleRun::new(flow, &p);
    let mut f = FastRun::new(&fast, &p);
    let (mut lat_err, mut eos_err, mut lat_mag) = (0f32, 0f32, 0f32);
    let steps = 30;
    let mut prev: Option<Tensor> = None;
    for i in 0..steps {
        let out = flow
            .step(prev.as_ref(), &c.noise[i], 1, &mut c.state)
            .unwrap();
        let pl = (i > 0).then_some(&f.prev[..]);
        let eos = fast
            .step(pl, &p.noise[i], 1, &mut f.state, &mut f.out)
            .unwrap();
        let cl = out.latent.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        for (a, b) in cl.iter().zip(&f.out) {
            lat_err = lat_err.max((a - b).abs());
            lat_mag = lat_mag.max(a.abs());
        }
        eos_err = eos_err.max((eos - out.eos_logit).abs());
        f.prev.copy_from_slice(&f.out);
        prev = Some(out.latent);
    }
    println!(
        "{}: prefill {} positions + {steps} steps (temperature 0.3, own feedback): \
         latents max abs error {lat_err:e} (max |latent| {lat_mag:.3}), EOS logits max abs error {eos_err:e}",
        dir.display(),
        c.base.offset()
    );
    assert!(
        lat_err <= 1e-3 && eos_err <= 1e-3,
        "fast and Candle differ by more than 1e-3"
    );
}

fn criterion_benches(c: &mut Criterion, flow: &FlowLm) {
    let fast1 = FlowLmFast::new(flow).unwrap();
    let p = Prompt::new(&fast1, VOICE_FRAMES);
    let mut fast2 = FlowLmFast::new(flow).unwrap();
    fast2.set_threads(2);
    let bytes = fast1.weight_bytes_per_step(1) as u64;

    let mut g = c.benchmark_group("flow_lm_step");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(20);
    let mut cr = CandleRun::new(flow, &p);
    g.bench_function("candle", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| cr.step()).sum())
    });
    let mut f1 = FastRun::new(&fast1, &p);
    g.bench_function("fast_t1", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| f1.step()).sum())
    });
    let mut f2 = FastRun::new(&fast2, &p);
    g.bench_function("fast_t2", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| f2.step()).sum())
    });
    g.finish();

    // The flow head alone (cond_embed + one LSD step: ~8 M weights).
    let mut g = c.benchmark_group("flow_head");
    let z = data(fast1.z_dim(), 1.0, 5);
    let noise = &p.noise[0];
    let zt = Tensor::from_slice(&z, (1, z.len()), &Device::Cpu).unwrap();
    let nt = Tensor::from_slice(noise, (1, noise.len()), &Device::Cpu).unwrap();
    g.bench_function("candle", |b| {
        b.iter(|| black_box(flow.decode_flow(&zt, &nt, 1).unwrap()))
    });
    let mut st = fast1.new_state(1);
    let mut out = vec![0f32; fast1.ldim()];
    g.bench_function("fast", |b| {
        b.iter(|| {
            fast1.decode_flow(&z, noise, 1, &mut st, &mut out).unwrap();
            black_box(out[0])
        })
    });
    g.finish();

    // Hand-off cost of the 2-thread team: an empty job.
    let team = pocket_tts_simd::Team::new(2);
    c.bench_function("team_sync/2", |b| {
        b.iter(|| {
            team.run(|i| {
                black_box(i);
            })
        })
    });
}

fn smoke() {
    let flow = random_flow_lm(
        &Config::builtin("english_7m_2026-10").expect("config"),
        false,
    );
    let fast = FlowLmFast::new(&flow).unwrap();
    let p = Prompt::new(&fast, 4);
    let mut c = CandleRun::new(&flow, &p);
    let mut f = FastRun::new(&fast, &p);
    for _ in 0..3 {
        c.step();
        f.step();
    }
    println!("flow_lm_step smoke test: ok");
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if !bench_mode {
        smoke();
        return;
    }
    if let Some(dir) = std::env::var_os("FLOW_LM_CHECK") {
        check(Path::new(&dir));
        return;
    }
    let t = Instant::now();
    let (config, quantize) = common::config_from_env();
    let flow = random_flow_lm(&config, quantize);
    eprintln!(
        "built the full-size random FlowLM{} ({}) in {:.1} s",
        if quantize { " (--quantize)" } else { "" },
        config.flow_lm.dtype,
        t.elapsed().as_secs_f64()
    );
    if let Some(r) = std::env::var_os("FLOW_LM_AB") {
        let rounds = r.to_str().and_then(|s| s.parse().ok()).unwrap_or(15);
        ab(&flow, rounds);
        // FLOW_LM_PREFILL=0 skips the prefill table (e.g. to profile steps alone).
        if std::env::var_os("FLOW_LM_PREFILL").is_none_or(|v| v != "0") {
            prefill_ab(&flow, rounds.div_ceil(3));
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c, &flow);
    c.final_summary();
}
