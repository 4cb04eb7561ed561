//! `bench-streams`: throughput of the batched engine ([`pocket_tts_core::Engine`]) with
//! 1, 4, 8, … concurrent streams on one model (ours; the reference has no equivalent).
//!
//! For each count N of `--streams`, an engine with N slots gets N requests at once (texts
//! from `--text` or `--texts`, given to streams in turn) and every stream is consumed on
//! its own thread. Reported per count: aggregate throughput (audio seconds per wall
//! second, from the first submission to the last frame), each stream's real-time factor
//! (its time from submission to last frame / its audio) and time to first audio (p50,
//! p95), and the peak resident memory of that measurement.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::audio::WavFile;
use pocket_tts_core::output::OutputFile;
use pocket_tts_core::{Engine, EngineOptions, StreamStats};
use serde_json::{json, Value};

use crate::outputs::{self, Named};
use crate::speech::SpeechArgs;
use crate::stats;

/// Most streams one measurement may ask for.
const MAX_STREAMS: usize = 256;

/// Flags of `bench-streams`: `generate`'s model, voice and generation flags, and the
/// stream counts.
#[derive(Args, Debug)]
pub struct BenchStreamsArgs {
    #[command(flatten)]
    pub speech: SpeechArgs,
    /// A file of texts, one per non-empty line, given to the streams in turn (instead of
    /// --text).
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub texts: Option<PathBuf>,
    /// Stream counts to measure, comma-separated: one measurement per count, all its
    /// streams submitted together.
    #[arg(
        long,
        value_name = "N,N,…",
        default_value = "1,4,8",
        value_delimiter = ','
    )]
    pub streams: Vec<usize>,
    /// Write each stream's audio as DIR/stream_N.wav (N: its index in submission order, from 0);
    /// each count's measurement replaces the previous one's files.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// One stream's outcome.
struct StreamRun {
    /// The stream's audio (empty without `--output-dir`).
    samples: Vec<f32>,
    /// Samples generated.
    count: usize,
    stats: StreamStats,
}

fn read_texts(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--texts {}: cannot read", path.display()))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if lines.is_empty() {
        bail!(
            "--texts {}: has no text (one text per non-empty line)",
            path.display()
        );
    }
    Ok(lines)
}

/// Checks `--streams`.
fn check_counts(counts: &[usize]) -> Result<()> {
    if counts.is_empty() {
        bail!("--streams: give at least one stream count, e.g. --streams 1,4,8");
    }
    if let Some(bad) = counts.iter().find(|&&n| n == 0 || n > MAX_STREAMS) {
        bail!("--streams {bad}: each count must be between 1 and {MAX_STREAMS}");
    }
    Ok(())
}

/// Runs `bench-streams`.
pub fn run(args: BenchStreamsArgs) -> Result<()> {
    check_counts(&args.streams)?;
    let plan = args.speech.plan()?;
    let texts = match &args.texts {
        Some(path) => read_texts(path)?,
        None => vec![plan.text.clone()],
    };
    let max_count = args.streams.iter().copied().max().unwrap_or(1);
    let mut outs = Vec::new();
    // Created before the report, which may go into it; a run that fails before writing
    // there removes it again.
    let mut new_dirs = NewDirs::default();
    if let Some(dir) = &args.output_dir {
        new_dirs = NewDirs::create(dir)?;
        for i in 0..max_count {
            outs.push(Named::new("--output-dir", wav_path(dir, i)));
        }
    }
    outs.extend(args.speech.stats_output());
    let mut inputs = plan.inputs();
    if let Some(t) = &args.texts {
        inputs.push(Named::new("--texts", t));
    }
    outputs::check_distinct(&outs, &inputs)?;
    let stats_out = crate::stats::open_if_asked(args.speech.stats_json.as_deref())?;
    let session = args.speech.load(plan)?;
    let rate = session.model.sample_rate() as f64;
    let params = session.params.clone();
    let model = Arc::new(session.model);
    let voice = Arc::new(
        session
            .voice
            .context("internal error: the voice state was already used")?,
    );
    let mut results = Vec::new();
    for &n in &args.streams {
        reset_peak_rss();
        let engine = Engine::new(
            Arc::clone(&model),
            EngineOptions {
                max_streams: n,
                max_queued: 0,
                ..EngineOptions::default()
            },
        )?;
        let t0 = Instant::now();
        let handles = (0..n)
            .map(|i| engine.submit(&voice, &texts[i % texts.len()], &params))
            .collect::<pocket_tts_core::Result<Vec<_>>>()
            .context("submitting the streams")?;
        let keep = args.output_dir.is_some();
        let consumers: Vec<_> = handles
            .into_iter()
            .map(|mut h| {
                std::thread::spawn(move || -> pocket_tts_core::Result<StreamRun> {
                    // The audio is kept only to be written: the peak RSS measures the engine.
                    let (mut samples, mut count) = (Vec::new(), 0);
                    for frame in h.by_ref() {
                        let frame = frame?;
                        count += frame.samples.len();
                        if keep {
                            samples.extend_from_slice(&frame.samples);
                        }
                    }
                    Ok(StreamRun {
                        samples,
                        count,
                        stats: h.stats().clone(),
                    })
                })
            })
            .collect();
        let mut runs = Vec::with_capacity(n);
        for (i, c) in consumers.into_iter().enumerate() {
            let run = c
                .join()
                .map_err(|_| anyhow::anyhow!("stream {i}: its consumer thread panicked"))?
                .with_context(|| format!("stream {i}"))?;
            runs.push(run);
        }
        let wall = t0.elapsed().as_secs_f64();
        let peak = crate::memory::peak_rss_mb();
        drop(engine);
        let result = summarize(n, &runs, wall, rate, peak);
        tracing::info!(
            "{n} stream{}: {:.2} audio s per s, RTF per stream p50 {:.3}, time to first audio p50 {:.0} ms p95 {:.0} ms, peak RSS {:.0} MiB",
            if n == 1 { "" } else { "s" },
            result["audio_s_per_s"].as_f64().unwrap_or(f64::NAN),
            result["rtf_per_stream"]["p50"].as_f64().unwrap_or(f64::NAN),
            result["ttfa_ms"]["p50"].as_f64().unwrap_or(f64::NAN),
            result["ttfa_ms"]["p95"].as_f64().unwrap_or(f64::NAN),
            peak.unwrap_or(f64::NAN),
        );
        println!("{}", serde_json::to_string(&result)?);
        if let Some(dir) = &args.output_dir {
            for (i, r) in runs.iter().enumerate() {
                write_wav(&wav_path(dir, i), &r.samples)?;
            }
        }
        results.push(result);
    }
    if let Some(out) = stats_out {
        let value = json!({
            "results": results,
            "threads": session.threads,
            "backend": model.backend().name(),
            "quantize": model.load_options().quantize.is_some(),
            "quantization": model.load_options().quantize.map(|q| q.name()),
            "dtype": crate::model::dtype_name(model.config().flow_lm.dtype),
            "mimi_dtype": crate::model::dtype_name(model.load_options().effective_mimi_dtype()),
            "texts": texts.len(),
        });
        stats::write(out, &value)?;
    }
    new_dirs.keep();
    Ok(())
}

/// The folders `--output-dir` made (it and missing parents), deepest first: removed
/// again on drop while still empty, so that a refused or failed run leaves none behind.
#[derive(Default)]
struct NewDirs(Vec<PathBuf>);

impl NewDirs {
    fn create(dir: &Path) -> Result<Self> {
        let new = Self(
            dir.ancestors()
                .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
                .map(Path::to_path_buf)
                .collect(),
        );
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--output-dir {}: cannot create it", dir.display()))?;
        Ok(new)
    }

    fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for NewDirs {
    fn drop(&mut self) {
        for dir in &self.0 {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

fn wav_path(dir: &Path, i: usize) -> PathBuf {
    dir.join(format!("stream_{i}.wav"))
}

fn write_wav(path: &Path, samples: &[f32]) -> Result<()> {
    let shown = path.display();
    let out = OutputFile::create(path).with_context(|| format!("--output-dir: {shown}"))?;
    let mut wav = WavFile::from_output(out, 24000).with_context(|| format!("{shown}"))?;
    wav.write_samples(samples)
        .with_context(|| format!("{shown}: cannot write"))?;
    wav.finish()
        .with_context(|| format!("{shown}: cannot write"))?;
    Ok(())
}

/// One count's JSON result (see the module docs).
fn summarize(n: usize, runs: &[StreamRun], wall: f64, rate: f64, peak: Option<f64>) -> Value {
    let audio: Vec<f64> = runs.iter().map(|r| r.count as f64 / rate).collect();
    let total_audio: f64 = audio.iter().sum();
    let mut rtf: Vec<f64> = runs
        .iter()
        .zip(&audio)
        .filter(|(_, &a)| a > 0.0)
        .map(|(r, a)| r.stats.total.as_secs_f64() / a)
        .collect();
    rtf.sort_by(f64::total_cmp);
    let ttfa = stats::sorted_ms(
        runs.iter()
            .filter_map(|r| r.stats.time_to_first_audio.as_ref()),
    );
    json!({
        "streams": n,
        "audio_s": total_audio,
        "wall_s": wall,
        "audio_s_per_s": (wall > 0.0).then(|| total_audio / wall),
        "rtf_per_stream": {
            "p50": stats::quantile(&rtf, 0.5),
            "p95": stats::quantile(&rtf, 0.95),
        },
        "ttfa_ms": {
            "p50": stats::quantile(&ttfa, 0.5),
            "p95": stats::quantile(&ttfa, 0.95),
        },
        "peak_rss_mb": peak,
    })
}

/// Resets the process's peak resident memory (`VmHWM`) so that the next measurement
/// reports its own peak (Linux: writing 5 to /proc/self/clear_refs); elsewhere the peak
/// stays the process's.
fn reset_peak_rss() {
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        tracing::debug!("cannot reset the peak RSS ({e}): peaks are the process's so far");
    }
}
