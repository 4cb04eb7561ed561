//! The native side of the browser test and measurement (scripts/wasm/browser_test.py):
//! the same model, voice and text through the core on this machine, one thread, with the
//! time to first audio and the real-time factor.
//!
//! ```text
//! cargo run -p pocket-tts-wasm --example native_reference -- \
//!     CONFIG.yaml WEIGHTS.safetensors TOKENIZER VOICE TEXT TEMPERATURE QUANTIZE(0|1) OUT.f32
//! ```
//!
//! `VOICE` is a `.safetensors` voice state or an audio file. Writes the samples (24 kHz,
//! little-endian `f32`) to `OUT.f32` and prints one JSON line: `load_ms`, `voice_ms`,
//! `first_audio_ms`, `generate_ms`, `samples`, `rtf`.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use pocket_tts_core::config::Config;
use pocket_tts_core::{GenerationParams, TtsModel};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [config, weights, tokenizer, voice, text, temperature, quantize, out] = &args[..] else {
        bail!("usage: native_reference CONFIG WEIGHTS TOKENIZER VOICE TEXT TEMPERATURE QUANTIZE(0|1) OUT.f32");
    };
    let t0 = Instant::now();
    let config = Config::from_yaml_file(Path::new(config))?;
    let model = TtsModel::builder()
        .config(config, None)
        .files(weights, tokenizer)
        .quantize(quantize == "1")
        .threads(1)
        .load()?;
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t1 = Instant::now();
    let voice = if voice.ends_with(".safetensors") {
        model.load_voice_state(Path::new(voice))?
    } else {
        let bytes = std::fs::read(voice).with_context(|| format!("reading {voice}"))?;
        model.voice_state_from_audio_bytes(&bytes, voice, true)?
    };
    let voice_ms = t1.elapsed().as_secs_f64() * 1e3;
    let mut params = GenerationParams::for_config(model.config());
    params.temperature = temperature.parse().context("TEMPERATURE")?;
    params.seed = Some(0);
    let t2 = Instant::now();
    let mut first = None;
    let mut samples = Vec::new();
    for frame in model.generate_stream(&voice, text, &params)? {
        samples.extend_from_slice(&frame?.samples);
        first.get_or_insert_with(|| t2.elapsed().as_secs_f64() * 1e3);
    }
    let generate_ms = t2.elapsed().as_secs_f64() * 1e3;
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(out, bytes).with_context(|| format!("writing {out}"))?;
    let seconds = samples.len() as f64 / model.sample_rate() as f64;
    println!(
        "{{\"load_ms\": {load_ms:.1}, \"voice_ms\": {voice_ms:.1}, \"first_audio_ms\": {:.1}, \"generate_ms\": {generate_ms:.1}, \"samples\": {}, \"rtf\": {:.4}}}",
        first.unwrap_or(f64::NAN),
        samples.len(),
        generate_ms / 1e3 / seconds
    );
    Ok(())
}
