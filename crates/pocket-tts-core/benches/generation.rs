//! End-to-end generation benchmark on a FULL-size model (the released english
//! architecture: FlowLM d_model 1024 × 6 layers, flow head 512 × 6, Mimi as released) with
//! seeded random weights: no download, no Python.
//!
//! ```sh
//! cargo bench -p pocket-tts-core --bench generation              # everything (~6 min on 2 cores before the fast runtimes)
//! cargo bench -p pocket-tts-core --bench generation -- first_chunk   # criterion's name filter
//! ```
//!
//! Inputs: the official `tokenizer.model` from `$POCKET_TTS_ASSETS` (default
//! `<repo>/../shared/assets`) and the voice prompt `<repo>/ref.wav` (24 kHz), encoded once.
//!
//! Every generation is deterministic and of fixed length: temperature 0, seed 0 and an EOS
//! threshold of 1e9 that random weights never reach, so each text chunk runs to the
//! reference's length limit `ceil((tokens / 3 + 2) * 12.5)` frames. The frame count of each
//! text is computed up front, printed, and checked after every measured generation.
//!
//! Benches (criterion group `generation`, 10 samples, flat sampling, one generation per
//! sample; throughput in frames/s):
//! * `generation/full/{short,medium,long}`: `generate_stream` to the last frame, all chunks;
//!   after each one its median real-time factor (generation time / audio time) and spread
//!   are printed;
//! * `generation/first_chunk/{short,medium,long}`: from the `generate_stream` call (text
//!   chunking, voice-state fork, text prefill, first FlowLM step, first Mimi frame) to the
//!   first `AudioFrame`.
//!
//! Under `cargo test --benches` / `--all-targets` (criterion's test mode: no `--bench`
//! argument) every bench runs once on a 1 s voice prompt and stops after 2 frames, so the
//! test build stays quick; plain `cargo test` does not build or run benches.

use std::cell::RefCell;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use pocket_tts_core::audio::read_audio;
use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::{GenerationParams, TtsModel};
use pocket_tts_core::VoiceState;
use pocket_tts_text::chunking::prepare_text_prompt;

/// One sentence, 8 words (11 tokens, 1 chunk, 71 frames).
const SHORT: &str = "Hello world, this is a short test sentence.";
/// Three sentences from the reference's default English text (26 tokens, 1 chunk, 134 frames).
const MEDIUM: &str = "Hello world. I am Kyutai's Pocket TTS. I hope you'll like me.";
/// A paragraph of four sentences that splits into two chunks at 50 tokens (39 + 25 tokens,
/// 188 + 130 = 318 frames).
const LONG: &str = "Pocket TTS is a small text to speech model that runs on a laptop. \
It clones a voice from a few seconds of audio. Long texts are split into groups of sentences. \
Each group starts from the same voice state.";

const TEXTS: [(&str, &str); 3] = [("short", SHORT), ("medium", MEDIUM), ("long", LONG)];

/// Seed of the random weights and of the (unused at temperature 0) sampling noise.
const SEED: u64 = 0;
/// Far above any EOS logit of the random model: every chunk runs to its length limit.
const EOS_THRESHOLD: f32 = 1e9;
/// Frames generated per stream in test mode.
const TEST_MODE_FRAMES: usize = 2;

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn tokenizer_path() -> PathBuf {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os("POCKET_TTS_ASSETS") {
        let p = PathBuf::from(dir).join("tokenizer.model");
        if p.is_file() {
            return p;
        }
        tried.push(p);
    }
    let p = repo_root().join("../shared/assets/tokenizer.model");
    if p.is_file() {
        return p;
    }
    tried.push(p);
    panic!(
        "generation bench: the official tokenizer.model was not found; looked at: {}. \
         Set POCKET_TTS_ASSETS to the folder that holds it (see ../shared/assets/README.md).",
        tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Criterion's test mode (`cargo test --benches`): cargo passes `--bench` only to `cargo bench`.
fn test_mode() -> bool {
    !std::env::args().any(|a| a == "--bench")
}

struct Setup {
    model: TtsModel,
    voice: VoiceState,
    params: GenerationParams,
    test_mode: bool,
}

impl Setup {
    fn new() -> Self {
        let test_mode = test_mode();
        let tokenizer = tokenizer_path();
        let mut config = Config::english();
        config.flow_lm.lookup_table.tokenizer = "sentencepiece".into();
        config.flow_lm.lookup_table.tokenizer_path = tokenizer.display().to_string();
        let t0 = Instant::now();
        let model = TtsModel::builder()
            .config(config, None)
            .random_weights(SEED, &tokenizer)
            .load()
            .unwrap_or_else(|e| panic!("generation bench: cannot build the random model: {e}"));
        let build = t0.elapsed();

        let wav = repo_root().join("ref.wav");
        let (mut samples, rate) = read_audio(&wav)
            .unwrap_or_else(|e| panic!("generation bench: voice prompt {}: {e}", wav.display()));
        assert_eq!(
            rate as usize,
            model.sample_rate(),
            "generation bench: {} must be at the model rate (scripts/reference/make_ref_wav.sh makes it)",
            wav.display()
        );
        if test_mode {
            samples.truncate(model.sample_rate());
        }
        let t1 = Instant::now();
        let voice = model
            .voice_state_from_samples(&samples)
            .unwrap_or_else(|e| panic!("generation bench: voice encoding failed: {e}"));
        let voice_time = t1.elapsed();
        eprintln!(
            "generation bench: full-size random model (seed {SEED}) built in {:.0} ms; voice \
             {} ({:.2} s) encoded in {:.0} ms ({} prompt positions){}",
            build.as_secs_f64() * 1e3,
            wav.display(),
            samples.len() as f64 / model.sample_rate() as f64,
            voice_time.as_secs_f64() * 1e3,
            voice.len(),
            if test_mode {
                "; test mode: 2 frames per generation"
            } else {
                ""
            }
        );

        let mut params = GenerationParams::for_config(model.config());
        params.temperature = 0.0;
        params.eos_threshold = EOS_THRESHOLD;
        params.seed = Some(SEED);
        Self {
            model,
            voice,
            params,
            test_mode,
        }
    }

    /// Frames of a generation that never meets EOS: each chunk's length limit.
    fn expected_frames(&self, text: &str) -> (usize, usize) {
        let m = &self.model;
        let chunks = m
            .text_chunks(text, self.params.max_tokens)
            .expect("bench texts are valid");
        let frames = chunks
            .iter()
            .map(|c| {
                let (prepared, _) = prepare_text_prompt(c, m.text_options()).expect("valid chunk");
                m.max_gen_len(m.tokenizer().encode(&prepared).len())
            })
            .sum();
        (frames, chunks.len())
    }

    /// Generates `text` to the end (test mode: `TEST_MODE_FRAMES` frames); returns the frame count.
    fn generate(&self, text: &str) -> usize {
        let limit = if self.test_mode {
            TEST_MODE_FRAMES
        } else {
            usize::MAX
        };
        let stream = self
            .model
            .generate_stream(&self.voice, text, &self.params)
            .expect("generate_stream");
        let mut frames = 0;
        for frame in stream.take(limit) {
            black_box(frame.expect("generation step").samples);
            frames += 1;
        }
        frames
    }

    /// Time from the `generate_stream` call to the first frame.
    fn first_chunk(&self, text: &str) -> Duration {
        let t0 = Instant::now();
        let mut stream = self
            .model
            .generate_stream(&self.voice, text, &self.params)
            .expect("generate_stream");
        let frame = stream
            .next()
            .expect("at least one frame")
            .expect("first generation step");
        let dt = t0.elapsed();
        black_box(frame.samples);
        drop(stream);
        dt
    }
}

fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let med = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (med, s[0], s[n - 1])
}

fn bench_generation(c: &mut Criterion) {
    let setup = Setup::new();
    let frame_s = 1.0 / setup.model.config().mimi.frame_rate;

    // Per-frame time, from one short generation (also a warm-up), sizes the measurement
    // windows so that each of the 10 samples is one generation.
    let per_frame = if setup.test_mode {
        Duration::from_millis(1)
    } else {
        let (frames, _) = setup.expected_frames(SHORT);
        let t0 = Instant::now();
        let got = setup.generate(SHORT);
        assert_eq!(got, frames, "generation bench: EOS fired (short text)");
        let dt = t0.elapsed();
        eprintln!(
            "generation bench: warm-up, short text: {frames} frames in {:.0} ms ({:.1} ms/frame)",
            dt.as_secs_f64() * 1e3,
            dt.as_secs_f64() * 1e3 / frames as f64
        );
        dt / frames as u32
    };

    let mut group = c.benchmark_group("generation");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(1));

    for (name, text) in TEXTS {
        let (frames, chunks) = setup.expected_frames(text);
        let audio_s = frames as f64 * frame_s;
        eprintln!(
            "generation bench: {name}: {} words, {chunks} chunk(s), {frames} frames = {audio_s:.2} s of audio",
            text.split_whitespace().count()
        );
        let times: RefCell<Vec<f64>> = RefCell::new(Vec::new());
        group.throughput(Throughput::Elements(frames as u64));
        group.measurement_time((per_frame * frames as u32 * 10).max(Duration::from_millis(100)));
        group.bench_function(BenchmarkId::new("full", name), |b| {
            b.iter_custom(|iters| {
                let t0 = Instant::now();
                for _ in 0..iters {
                    let t = Instant::now();
                    let got = setup.generate(text);
                    times.borrow_mut().push(t.elapsed().as_secs_f64());
                    if !setup.test_mode {
                        assert_eq!(got, frames, "generation bench: EOS fired ({name} text)");
                    }
                }
                t0.elapsed()
            })
        });
        let times = times.into_inner();
        if !setup.test_mode && !times.is_empty() {
            let rtf: Vec<f64> = times.iter().map(|t| t / audio_s).collect();
            let (med, lo, hi) = median_min_max(&rtf);
            let ms_per_frame: Vec<f64> = times.iter().map(|t| t * 1e3 / frames as f64).collect();
            let (fmed, flo, fhi) = median_min_max(&ms_per_frame);
            eprintln!(
                "generation bench: {name}: real-time factor median {med:.3} ({lo:.3}–{hi:.3}), \
                 {fmed:.1} ms/frame ({flo:.1}–{fhi:.1}) over {} generations of {frames} frames \
                 (warm-up included)",
                times.len()
            );
        }
    }

    group.throughput(Throughput::Elements(1));
    group.measurement_time(if setup.test_mode {
        Duration::from_millis(100)
    } else {
        Duration::from_secs(3)
    });
    for (name, text) in TEXTS {
        let times: RefCell<Vec<f64>> = RefCell::new(Vec::new());
        group.bench_function(BenchmarkId::new("first_chunk", name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dt = setup.first_chunk(text);
                    times.borrow_mut().push(dt.as_secs_f64() * 1e3);
                    total += dt;
                }
                total
            })
        });
        let times = times.into_inner();
        if !setup.test_mode && !times.is_empty() {
            let (med, lo, hi) = median_min_max(&times);
            eprintln!(
                "generation bench: first_chunk/{name}: median {med:.1} ms ({lo:.1}–{hi:.1}) over {} runs",
                times.len()
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_generation);
criterion_main!(benches);
