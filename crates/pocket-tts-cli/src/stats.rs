//! `--stats-json`: a run's timings as one JSON object, written atomically.
//!
//! Keys (times in milliseconds):
//!
//! - `load_ms`, `voice_ms`: model load, voice state (audio prompt encoded or file read);
//! - `prefill_ms`: text prefill of every chunk (voice-state copy, text embedding, FlowLM);
//! - `first_chunk_ms`: from the text handed to the model to the first decoded samples; with
//!   `stream --measure-first-chunk`, `{min, p50, max}` over the runs;
//! - `frames`, `audio_ms` (`frames * 80`), `generation_ms` (text handed to the model to the
//!   last frame written), `rtf` (`generation_ms / audio_ms`);
//! - `lm_step_ms`, `decode_frame_ms`: `{mean, p50, p95}` of every FlowLM step and every Mimi
//!   frame decode;
//! - `peak_rss_mb`: the process's peak resident memory (`VmHWM`, Linux; `null` elsewhere);
//!   `load_peak_rss_mb`: the same, read right after the model load (before the voice);
//! - `runs`, `threads`: generations measured, generation threads;
//! - `backend`: the runtime that ran the model (`cpu` or `candle`, `--backend`);
//! - `quantize`: whether the FlowLM transformer ran on int8 weights (`--quantize`);
//! - `dtype`: how the FlowLM's float weights were stored, `f32`, `f16` or `bf16` (`--dtype`,
//!   or the config's `flow_lm.dtype`);
//! - `mimi_dtype`: how the Mimi decoder's weights were stored, `f32`, `f16` or `bf16`
//!   (`--mimi-dtype`).
//!
//! With several runs (`--measure-first-chunk --runs N`) the whole-generation figures
//! (`prefill_ms`, `frames`, `audio_ms`, `generation_ms`, `rtf`) are totals over the runs and
//! the per-step statistics pool all of them.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use pocket_tts_core::output::OutputFile;
use serde_json::{json, Value};

use crate::speech::{RunResult, Session};

/// Opens the `--stats-json` file, if asked: before any work (see
/// `pocket_tts_core::output`), so that a bad path fails at once; [`write()`] fills it at
/// the end.
pub fn open_if_asked(path: Option<&Path>) -> Result<Option<OutputFile>> {
    path.map(open).transpose()
}

/// Opens the `--stats-json` output at `path` (see [`open_if_asked`]).
fn open(path: &Path) -> Result<OutputFile> {
    OutputFile::create(path).with_context(|| format!("--stats-json {}", path.display()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `q`-quantile (0..=1) of sorted values, linearly interpolated between the closest
/// ranks (numpy's default); `None` when empty.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Durations in milliseconds, sorted.
pub fn sorted_ms<'a>(durations: impl IntoIterator<Item = &'a Duration>) -> Vec<f64> {
    let mut v: Vec<f64> = durations.into_iter().map(|d| ms(*d)).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// `{mean, p50, p95}` of durations (`null`s when there are none).
fn distribution<'a>(durations: impl IntoIterator<Item = &'a Duration>) -> Value {
    let v = sorted_ms(durations);
    let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    json!({ "mean": mean, "p50": quantile(&v, 0.5), "p95": quantile(&v, 0.95) })
}

/// The JSON object for `runs` (one, or the runs of `--measure-first-chunk`).
pub fn report(session: &Session, runs: &[RunResult], measured_first_chunk: bool) -> Value {
    let rate = session.model.sample_rate() as f64;
    let frames: usize = runs.iter().map(|r| r.stats.frames).sum();
    let samples: usize = runs.iter().map(|r| r.samples).sum();
    let audio_ms = samples as f64 * 1000.0 / rate;
    let generation_ms: f64 = runs.iter().map(|r| ms(r.generation)).sum();
    let prefill_ms: f64 = runs.iter().map(|r| ms(r.stats.prefill)).sum();
    let rtf = (audio_ms > 0.0).then(|| generation_ms / audio_ms);
    let first_chunk = if measured_first_chunk {
        let v = sorted_ms(runs.iter().filter_map(|r| r.first_chunk.as_ref()));
        json!({
            "min": v.first(),
            "p50": quantile(&v, 0.5),
            "max": v.last(),
        })
    } else {
        json!(runs.first().and_then(|r| r.first_chunk).map(ms))
    };
    json!({
        "load_ms": ms(session.load),
        "voice_ms": ms(session.voice_time),
        "prefill_ms": prefill_ms,
        "first_chunk_ms": first_chunk,
        "frames": frames,
        "audio_ms": audio_ms,
        "generation_ms": generation_ms,
        "rtf": rtf,
        "lm_step_ms": distribution(runs.iter().flat_map(|r| r.stats.lm_step_times.iter())),
        "decode_frame_ms": distribution(runs.iter().flat_map(|r| r.stats.decode_times.iter())),
        "peak_rss_mb": crate::memory::peak_rss_mb(),
        "load_peak_rss_mb": session.load_peak_rss_mb,
        "runs": runs.len(),
        "threads": session.threads,
        "backend": session.model.backend().name(),
        "quantize": session.model.load_options().quantize.is_some(),
        "quantization": session.model.load_options().quantize.map(|q| q.name()),
        "dtype": crate::model::dtype_name(session.model.config().flow_lm.dtype),
            "mimi_dtype": crate::model::dtype_name(session.model.load_options().effective_mimi_dtype()),
    })
}

/// Writes `value` as pretty JSON to the output [`open`] returned, and completes it (a
/// regular file is replaced atomically).
pub fn write(mut out: OutputFile, value: &Value) -> Result<()> {
    let shown = out.path().display().to_string();
    let mut text = serde_json::to_string_pretty(value).context("--stats-json: encoding")?;
    text.push('\n');
    out.write_all(text.as_bytes())
        .with_context(|| format!("--stats-json {shown}: cannot write"))?;
    out.finish()
        .with_context(|| format!("--stats-json {shown}: cannot write"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[3.0], 0.95), Some(3.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(quantile(&[1.0, 2.0, 3.0], 0.5), Some(2.0));
        // numpy.percentile(range(1, 21), 95) == 19.05
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert!((quantile(&v, 0.95).unwrap() - 19.05).abs() < 1e-12);
    }
}
