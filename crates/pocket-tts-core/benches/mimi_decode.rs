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
//!   the 250-step attention context first); `fast_batch8_1t`: one `decode_frames` call
//!   with the frames of 8 streams (every layer one GEMM over their rows), one thread;
//! * `voice_encode_10s/{fast_2t,fast_1t,candle}`: `MimiEncoderFast::encode` /
//!   `Mimi::encode_to_latent` on 10 s of 24 kHz audio (a deterministic chirp plus noise).
//!
//! * `encoder_chunks` (printed, filter `-- encoder_chunks`): the voice encoder's chunk
//!   sizes alternated round by round (OPTIMIZATION_LOG §37).
//! * `interleaved` (printed, not a criterion bench): fast and Candle alternated round by
//!   round in the same process (decoder: 15 rounds of 20 fast + 4 Candle frames; encoder:
//!   5 rounds of one fast 2-thread and one Candle encode of 10 s), median and min–max of
//!   each and of the per-round speed-up. Use this for before/after claims on a shared,
//!   noisy machine: both sides see the same load. Filter: `-- interleaved`.
//!
//! Under `cargo test --benches` (criterion's test mode, no `--bench` argument) each bench
//! runs once and the encoder gets 1 s of audio, so the test build stays quick.

use std::hint::black_box;
use std::time::Duration;

use candle_core::{Device, Tensor};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use pocket_tts_core::config::Config;
use pocket_tts_core::internals::fast::mimi::{MimiDecoderFast, MimiEncoderFast, MimiFrame};
use pocket_tts_core::internals::models::mimi::Mimi;

const SEED: u64 = 0;

fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn full_size_mimi() -> Mimi {
    let config = Config::english();
    let vb = pocket_tts_core::internals::weights::random_var_builder(SEED, &Device::Cpu);
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

/// Streams of the batched bench (`fast_batch8_1t`: one `decode_frames` call; divide by 8
/// for a frame's share).
const BATCH: usize = 8;

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
    // 8 streams' frames in one `decode_frames` call (one thread): the time of the batch.
    let dec = MimiDecoderFast::with_threads(&mimi, 1).unwrap();
    let mut states: Vec<_> = (0..BATCH).map(|_| dec.new_state()).collect();
    let mut outs = vec![vec![0f32; dec.frame_size()]; BATCH];
    let mut scratch = dec.new_scratch(BATCH).unwrap();
    for f in 0..WARMUP_FRAMES {
        for (s, (st, out)) in states.iter_mut().zip(outs.iter_mut()).enumerate() {
            dec.decode_frame(&latent(f + s), st, out).unwrap();
        }
    }
    let ls: Vec<Vec<f32>> = (0..BATCH).map(|s| latent(WARMUP_FRAMES + s)).collect();
    group.bench_function(format!("fast_batch{BATCH}_1t"), |b| {
        b.iter(|| {
            let mut frames: Vec<MimiFrame<'_>> = states
                .iter_mut()
                .zip(outs.iter_mut())
                .zip(&ls)
                .map(|((state, out), latent)| MimiFrame { latent, state, out })
                .collect();
            dec.decode_frames(&mut frames, &mut scratch).unwrap();
        })
    });
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

fn stats(v: &mut [f64]) -> String {
    v.sort_by(|a, b| a.total_cmp(b));
    format!(
        "median {:.2} (min {:.2}, max {:.2})",
        v[v.len() / 2],
        v[0],
        v[v.len() - 1]
    )
}

/// Fast vs Candle alternated round by round (see the module docs).
fn interleaved(_: &mut Criterion) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !bench_mode()
        || !(args.is_empty()
            || args
                .iter()
                .any(|a| a.contains("interleaved") || "interleaved".contains(a.as_str())))
    {
        return;
    }
    let mimi = full_size_mimi();
    let dec = MimiDecoderFast::new(&mimi).unwrap();
    let mut fs = dec.new_state();
    let mut cs = mimi.init_decoder_state(1, &Device::Cpu).unwrap();
    let mut out = vec![0f32; dec.frame_size()];
    let mut frame = 0;
    for _ in 0..WARMUP_FRAMES {
        let l = latent(frame);
        dec.decode_frame(&l, &mut fs, &mut out).unwrap();
        let x = Tensor::from_vec(l, (1, 1, 32), &Device::Cpu).unwrap();
        mimi.decode_from_latent(&x, &mut cs).unwrap();
        frame += 1;
    }
    let (mut f_ms, mut c_ms, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        let t0 = std::time::Instant::now();
        for i in 0..20 {
            dec.decode_frame(&latent(frame + i), &mut fs, &mut out)
                .unwrap();
        }
        let f = t0.elapsed().as_secs_f64() * 1e3 / 20.0;
        let t0 = std::time::Instant::now();
        for i in 0..4 {
            let x = Tensor::from_vec(latent(frame + i), (1, 1, 32), &Device::Cpu).unwrap();
            black_box(mimi.decode_from_latent(&x, &mut cs).unwrap());
        }
        let c = t0.elapsed().as_secs_f64() * 1e3 / 4.0;
        frame += 20;
        f_ms.push(f);
        c_ms.push(c);
        ratio.push(c / f);
    }
    println!("interleaved mimi_decode, ms per frame, 15 rounds:");
    println!("  fast (1 thread): {}", stats(&mut f_ms));
    println!("  candle:          {}", stats(&mut c_ms));
    println!("  speed-up:        {}", stats(&mut ratio));
    let samples = audio(10.0);
    let enc = MimiEncoderFast::new(&mimi, 2).unwrap();
    let x = Tensor::from_slice(&samples, (1, 1, samples.len()), &Device::Cpu).unwrap();
    let (mut f_ms, mut c_ms, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        black_box(enc.encode(&samples).unwrap());
        let f = t0.elapsed().as_secs_f64() * 1e3;
        let t0 = std::time::Instant::now();
        black_box(mimi.encode_to_latent(&x).unwrap());
        let c = t0.elapsed().as_secs_f64() * 1e3;
        f_ms.push(f);
        c_ms.push(c);
        ratio.push(c / f);
    }
    println!("interleaved voice_encode_10s, ms, 5 rounds:");
    println!("  fast (2 threads): {}", stats(&mut f_ms));
    println!("  candle:           {}", stats(&mut c_ms));
    println!("  speed-up:         {}", stats(&mut ratio));
}

/// The encoder's chunk sizes alternated round by round on 10 s of audio, 2 threads
/// (printed; filter `-- encoder_chunks`): `(SEANet frames, transformer positions)` per
/// chunk, `whole` being the transformer over the whole prompt at once (the encoder before
/// OPTIMIZATION_LOG §37). Every configuration's latents are checked to be the same bits.
fn encoder_chunks(_: &mut Criterion) {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !bench_mode() || !args.iter().any(|a| a.contains("encoder_chunks")) {
        return;
    }
    let mimi = full_size_mimi();
    let samples = audio(10.0);
    let enc = MimiEncoderFast::new(&mimi, 2).unwrap();
    let configs = [
        (4, usize::MAX),
        (4, 256),
        (4, 128),
        (3, 128),
        (2, 128),
        (2, 64),
    ];
    let reference = enc.encode_with_chunks(&samples, 4, usize::MAX).unwrap();
    let mut ms = vec![Vec::new(); configs.len()];
    for _ in 0..9 {
        for (&(frames, steps), ms) in configs.iter().zip(&mut ms) {
            let t0 = std::time::Instant::now();
            let z = black_box(enc.encode_with_chunks(&samples, frames, steps).unwrap());
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
            assert!(z
                .iter()
                .zip(&reference)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
    println!("interleaved encoder_chunks, 10 s of audio, 2 threads, ms, 9 rounds:");
    for (&(frames, steps), ms) in configs.iter().zip(&mut ms) {
        let steps = if steps == usize::MAX {
            "whole".to_string()
        } else {
            steps.to_string()
        };
        println!(
            "  SEANet {frames} frames, transformer {steps:>5}: {}",
            stats(ms)
        );
    }
}

criterion_group!(
    benches,
    interleaved,
    encoder_chunks,
    mimi_decode,
    voice_encode_10s
);
criterion_main!(benches);
