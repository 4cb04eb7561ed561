//! Shared helpers for the integration tests: where test assets and fixtures live.
//!
//! Each test crate includes this module with `mod common;` and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository root (two levels above this crate's manifest).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `<repo>/tests/fixtures/<name>`; panics if the fixture is missing (a missing fixture
/// is a failure, never a skip).
pub fn fixture(name: &str) -> PathBuf {
    let path = repo_root().join("tests/fixtures").join(name);
    assert!(
        path.is_file(),
        "fixture {} is missing; regenerate it with scripts/reference/",
        path.display()
    );
    path
}

/// Reads and parses a JSON fixture from `<repo>/tests/fixtures/<name>`.
pub fn json_fixture(name: &str) -> serde_json::Value {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fixture {} is not valid JSON: {e}", path.display()))
}

/// A committed test asset (`tokenizer.model` or `speech/jfk_16k.wav`, copies of
/// `../shared/assets` with their provenance in `tests/fixtures/assets/README.md`), so that
/// the tests run offline on a fresh clone. A missing asset is a failure, never a skip.
pub fn asset(rel: &str) -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(rel);
    assert!(
        path.is_file(),
        "test asset {} is missing (it is committed; restore it from ../shared/assets)",
        path.display()
    );
    path
}

/// `<repo>/tests/fixtures/tiny`: the tiny random-weight model made by the reference.
pub fn tiny_dir() -> PathBuf {
    repo_root().join("tests/fixtures/tiny")
}

/// The tiny fixture model (`tiny/config.yaml`, `tiny/model.safetensors`, the committed
/// tokenizer).
pub fn tiny_model() -> pocket_tts_core::TtsModel {
    let config = pocket_tts_core::config::Config::from_yaml_file(&fixture("tiny/config.yaml"))
        .expect("tiny config");
    pocket_tts_core::TtsModel::builder()
        .config(config, None)
        .files(fixture("tiny/model.safetensors"), asset("tokenizer.model"))
        .load()
        .expect("tiny model loads")
}

/// Signal-to-noise ratio of `b` against `a`, in dB (`a` is the signal, `b − a` the noise).
///
/// # Panics
/// If the lengths differ (e.g. EOS on another frame).
pub fn snr_db<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ (EOS on another frame?)");
    let signal: f64 = a.iter().map(|&x| x.into().powi(2)).sum();
    let noise: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x.into() - y.into()).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-30)).log10()
}

/// Generation parameters for comparing two ways of running the tiny model: temperature 0
/// and an EOS that never fires, so every run has the same length; 40 tokens per chunk.
pub fn same_length_params() -> pocket_tts_core::GenerationParams {
    let mut p =
        pocket_tts_core::GenerationParams::for_config(&pocket_tts_core::config::Config::english());
    p.temperature = 0.0;
    p.eos_threshold = 100.0;
    p.max_tokens = 40;
    p
}

/// A FlowLM of `config`'s architecture with seeded random weights
/// (`weights::random_var_builder`).
pub fn random_flow_lm(
    config: &pocket_tts_core::config::Config,
    seed: u64,
) -> pocket_tts_core::internals::models::flow_lm::FlowLm {
    let vb =
        pocket_tts_core::internals::weights::random_var_builder(seed, &candle_core::Device::Cpu);
    pocket_tts_core::internals::models::flow_lm::FlowLm::new(
        &config.flow_lm,
        config.latent_dim(),
        config.speaker_dim(),
        None,
        vb.pp("flow_lm"),
    )
    .unwrap()
}

/// Mimi latents `[1, F, C]` (a fixture tensor) as the [`pocket_tts_core::Latents`] the
/// model takes.
pub fn latents_of(t: &candle_core::Tensor) -> pocket_tts_core::Latents {
    pocket_tts_core::Latents {
        values: t.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        dim: t.dims().last().copied().unwrap_or(0),
    }
}
