//! The native side of the browser test and measurement (scripts/wasm/browser_test.py):
//! the same model, voice and text through the core on this machine, one thread, with the
//! time to first audio and the real-time factor.
//!
//! ```text
//! cargo run -p pocket-tts-wasm --example native_reference -- \
//!     CONFIG.yaml WEIGHTS.safetensors TOKENIZER VOICE TEXT TEMPERATURE QUANTIZE(0|1) OUT.f32 \
//!     [VOICE_OUT.safetensors]
//! ```
//!
//! `VOICE` is a `.safetensors` voice state or an audio file. Writes the samples (24 kHz,
//! little-endian `f32`) to `OUT.f32` (and the voice state to `VOICE_OUT.safetensors` when
//! given) and prints one JSON line: `load_ms`, `voice_ms`, `first_audio_ms`,
//! `generate_ms`, `samples`, `rtf`, and the first audio's parts: `prefill_ms` (the first
//! chunk's text prefill), `first_step_ms` (its first FlowLM step), `first_decode_ms` (its
//! first Mimi frame).

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use pocket_tts_core::config::Config;
use pocket_tts_core::{GenerationParams, TtsModel};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (voice_out, args) = match args.len() {
        9 => (Some(&args[8]), &args[..8]),
        _ => (None, &args[..]),
    };
    let [config, weights, tokenizer, voice, text, temperature, quantize, out] = args else {
        bail!("usage: native_reference CONFIG WEIGHTS TOKENIZER VOICE TEXT TEMPERATURE QUANTIZE(0|1) OUT.f32 [VOICE_OUT.safetensors]");
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
    if let Some(path) = voice_out {
        std::fs::write(path, voice.to_safetensors_bytes()?)
            .with_context(|| format!("writing {path}"))?;
    }
    let mut params = GenerationParams::for_config(model.config());
    params.temperature = temperature.parse().context("TEMPERATURE")?;
    params.seed = Some(0);
    let t2 = Instant::now();
    let mut first = None;
    let mut samples = Vec::new();
    let mut stream = model.generate_stream(&voice, text, &params)?;
    let mut parts = [0.0; 3];
    while let Some(frame) = stream.next() {
        samples.extend_from_slice(&frame?.samples);
        if first.is_none() {
            first = Some(t2.elapsed().as_secs_f64() * 1e3);
            let s = stream.stats();
            let ms =
                |d: Option<&std::time::Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
            parts = [
                s.prefill.as_secs_f64() * 1e3,
                ms(s.lm_step_times.first()),
                ms(s.decode_times.first()),
            ];
        }
    }
    let generate_ms = t2.elapsed().as_secs_f64() * 1e3;
    let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(out, bytes).with_context(|| format!("writing {out}"))?;
    let seconds = samples.len() as f64 / model.sample_rate() as f64;
    println!(
        "{{\"load_ms\": {load_ms:.1}, \"voice_ms\": {voice_ms:.1}, \"first_audio_ms\": {:.1}, \"generate_ms\": {generate_ms:.1}, \"samples\": {}, \"rtf\": {:.4}, \"prefill_ms\": {:.1}, \"first_step_ms\": {:.1}, \"first_decode_ms\": {:.1}}}",
        first.unwrap_or(f64::NAN),
        samples.len(),
        generate_ms / 1e3 / seconds,
        parts[0],
        parts[1],
        parts[2]
    );
    Ok(())
}
