//! Parity with the reference at temperature > 0: seeded generations of the tiny model
//! (`tests/fixtures/tiny/seeded.*`, made by `scripts/reference/make_seeded_fixtures.py`
//! as `torch.manual_seed(seed)` then `generate_audio_stream`), with and without
//! `noise_clamp` (both branches of torch's `trunc_normal_`) and over several text chunks.
//! Our noise is torch's draw for draw, so the latents agree like at temperature 0.
//!
//! Tolerances: latents and EOS logits within 1e-4 max absolute error, audio within 1e-3.

use crate::common;

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::tts_model::{GenerationParams, TtsModel};
use pocket_tts_core::Backend;

const TENSOR_TOL: f32 = 1e-4;
const AUDIO_TOL: f32 = 1e-3;

fn max_abs_diff(name: &str, ours: &[f32], theirs: &Tensor) -> f32 {
    let theirs = theirs.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(ours.len(), theirs.len(), "{name}: lengths differ");
    ours.iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

fn check(name: &str, ours: &[f32], theirs: &Tensor, tol: f32) {
    let err = max_abs_diff(name, ours, theirs);
    assert!(err <= tol, "{name}: max abs error {err:e} exceeds {tol:e}");
}

fn params(case: &serde_json::Value, eos_threshold: f32) -> GenerationParams {
    let mut p = GenerationParams::for_config(&pocket_tts_core::config::Config::english());
    p.temperature = case["temperature"].as_f64().unwrap() as f32;
    p.noise_clamp = case["noise_clamp"].as_f64().map(|c| c as f32);
    p.seed = Some(case["seed"].as_u64().unwrap());
    p.eos_threshold = eos_threshold;
    p.max_tokens = case["max_tokens"].as_u64().unwrap() as usize;
    p
}

fn run_case(
    model: &TtsModel,
    tag: &str,
    case: &serde_json::Value,
    eos_threshold: f32,
    s: &HashMap<String, Tensor>,
) {
    let name = case["name"].as_str().unwrap();
    let tag = format!("{tag}{name}");
    let voice = model
        .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
        .unwrap();
    let frames: Vec<_> = model
        .generate_stream(
            &voice,
            case["text"].as_str().unwrap(),
            &params(case, eos_threshold),
        )
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected: u64 = case["frames_per_chunk"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        frames.len() as u64,
        expected,
        "{tag}: frame count (EOS rule) differs"
    );
    let get = |k: &str| {
        s.get(&format!("{name}.{k}"))
            .unwrap_or_else(|| panic!("fixture tensor {name}.{k} missing"))
    };
    let latents: Vec<f32> = frames.iter().flat_map(|f| f.latent.clone()).collect();
    check(
        &format!("{tag} latents"),
        &latents,
        get("latents"),
        TENSOR_TOL,
    );
    let eos: Vec<f32> = frames.iter().map(|f| f.eos_logit).collect();
    check(
        &format!("{tag} eos_logits"),
        &eos,
        get("eos_logits"),
        TENSOR_TOL,
    );
    let audio: Vec<f32> = frames.iter().flat_map(|f| f.samples.clone()).collect();
    check(&format!("{tag} audio"), &audio, get("audio"), AUDIO_TOL);
}

#[test]
fn seeded_generation_at_temperature_above_zero_matches_reference() {
    let meta = common::json_fixture("tiny/seeded.json");
    let s =
        candle_core::safetensors::load(common::fixture("tiny/seeded.safetensors"), &Device::Cpu)
            .expect("seeded.safetensors");
    let eos_threshold = meta["eos_threshold"].as_f64().unwrap() as f32;
    let cases = meta["cases"].as_array().unwrap();
    assert!(cases.len() >= 4, "{} cases", cases.len());
    assert!(cases.iter().any(|c| c["noise_clamp"].is_null()));
    assert!(cases.iter().any(|c| !c["noise_clamp"].is_null()));
    for &backend in Backend::ALL {
        let model = common::tiny_model().with_backend(backend).unwrap();
        for case in cases {
            run_case(&model, &format!("[{backend}] "), case, eos_threshold, &s);
        }
    }
}
