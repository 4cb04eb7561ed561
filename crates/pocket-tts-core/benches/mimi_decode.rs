//! Mimi decoder (one frame) and voice encoder (10 s) on the FULL-size Mimi (the released
//! architecture) with seeded random weights: no download, no Python.
//!
//! ```sh
//! cargo bench -p pocket-tts-core --bench mimi_decode                  # everything
//! cargo bench -p pocket-tts-core --bench mimi_decode -- mimi_decode   # decoder only
//! cargo bench -p pocket-tts-core --bench mimi_decode -- fast          # fast paths only
//! ```
//!
//! * `mimi_decode/{fast_1t,fast_2t,candle}`: one `decode_frame` / `decode_from_latent`
//!   call (latent 32 → 1920 samples) in steady state (the streaming state is warmed past
//!   the 250-step attention context first);
//! * `voice_encode_10s/{fast_2t,fast_1t,candle}`: `MimiEncoderFast::encode` /
//!   `Mimi::encode_to_latent` on 10 s of 24 kHz audio (a deterministic chirp plus noise).
//!
//! Under `cargo test --benches` (criterion's test mode, no `--bench` argument) each bench
//! runs once and the encoder gets 1 s of audio, so the test build stays quick.

use std::hint::black_box;
use std::time::Duration;

use candle_core::{Device, Tensor};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use pocket_tts_core::config::Config;
use pocket_tts_core::fast::mimi::{MimiDecoderFast, MimiEncoderFast};
use pocket_tts_core::models::mimi::Mimi;

const SEED: u64 = 0;

fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn full_size_mimi() -> Mimi {
    let config = Config::english();
    let vb = pocket_tts_core::weights::random_var_builder(SEED, &Device::Cpu);
    Mimi::new(&config.mimi, vb.pp("mimi"))
        .unwrap_or_else(|e| panic!("mimi bench: cannot build the random full-size Mimi: {e}"))
}

/// Deterministic latents with the spread of real denormalised latents (≈ unit scale).
fn latent(frame: usize) -> Vec<f32> {
    (0..32)
        .map(|i| ((frame * 32 + i) as f32 * 0.618).sin() * 1.5)
        .collect()
}

/// `seconds` of 24 kHz audio: a 100 Hz → 2 kHz chirp plus a little LCG noise.
fn audio(seconds: f32) -> Vec<f32> {
    let n = (24000.0 * seconds) as usize;
    let mut s = 12345u64;
    (0..n)
        .map(|i| {
            let t = i as f32 / 24000.0;
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
            0.3 * (2.0 * std::f32::consts::PI * (100.0 + 95.0 * t) * t).sin() + 0.02 * noise
        })
        .collect()
}

/// Frames decoded before measuring: 20 × 16 = 320 steps, past the 250-step context.
const WARMUP_FRAMES: usize = 20;

fn mimi_decode(c: &mut Criterion) {
    let mimi = full_size_mimi();
    let mut group = c.benchmark_group("mimi_decode");
    group.sample_size(if bench_mode() { 100 } else { 10 });
    group.measurement_time(Duration::from_secs(5));
    for threads in [1usize, 2] {
        let dec = MimiDecoderFast::with_threads(&mimi, threads).unwrap();
        let mut state = dec.new_state();
        let mut out = vec![0f32; dec.frame_size()];
        for f in 0..WARMUP_FRAMES {
            dec.decode_frame(&latent(f), &mut state, &mut out).unwrap();
        }
        let l = latent(WARMUP_FRAMES);
        group.bench_function(format!("fast_{threads}t"), |b| {
            b.iter(|| {
                dec.decode_frame(black_box(&l), &mut state, &mut out)
                    .unwrap();
                black_box(out[0])
            })
        });
    }
    let mut state = mimi.init_decoder_state(1, &Device::Cpu).unwrap();
    for f in 0..WARMUP_FRAMES {
        let x = Tensor::from_vec(latent(f), (1, 1, 32), &Device::Cpu).unwrap();
        mimi.decode_from_latent(&x, &mut state).unwrap();
    }
    let x = Tensor::from_vec(latent(WARMUP_FRAMES), (1, 1, 32), &Device::Cpu).unwrap();
    group.sample_size(if bench_mode() { 30 } else { 10 });
    group.bench_function("candle", |b| {
        b.iter(|| black_box(mimi.decode_from_latent(black_box(&x), &mut state).unwrap()))
    });
    group.finish();
}

fn voice_encode_10s(c: &mut Criterion) {
    let mimi = full_size_mimi();
    let seconds = if bench_mode() { 10.0 } else { 1.0 };
    let samples = audio(seconds);
    let mut group = c.benchmark_group("voice_encode_10s");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for threads in [2usize, 1] {
        let enc = MimiEncoderFast::new(&mimi, threads).unwrap();
        group.bench_function(format!("fast_{threads}t"), |b| {
            b.iter(|| black_box(enc.encode(black_box(&samples)).unwrap()))
        });
    }
    let x = Tensor::from_slice(&samples, (1, 1, samples.len()), &Device::Cpu).unwrap();
    group.bench_function("candle", |b| {
        b.iter(|| black_box(mimi.encode_to_latent(black_box(&x)).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, mimi_decode, voice_encode_10s);
criterion_main!(benches);
