//! Parity with the reference at temperature > 0: seeded generations of the tiny model
//! (`tests/fixtures/tiny/seeded.*`, made by `scripts/reference/make_seeded_fixtures.py`
//! as `torch.manual_seed(seed)` then `generate_audio_stream`), with and without
//! `noise_clamp` (both branches of torch's `trunc_normal_`) and over several text chunks.
//! Our noise is torch's draw for draw, so the latents agree like at temperature 0.
//!
//! Cases with a "prelude" start from the torch generator state the fixture recorded
//! (`GenerationParams::torch_rng_state`), mid-way through the Mersenne Twister's words.
//! Every case also checks the generator state handed back after the generation against
//! `torch.get_rng_state()` after the reference's, byte for byte, from `generate_stream` and
//! from the batched engine.
//!
//! Tolerances: latents and EOS logits within 1e-4 max absolute error, audio within 1e-3;
//! generator states exact.

use crate::common;

use std::collections::HashMap;

use candle_core::{Device, Tensor};
use pocket_tts_core::tts_model::{GenerationParams, TtsModel};
use pocket_tts_core::{Backend, Engine, EngineOptions, TorchRngState};

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

/// The bytes of a `torch.get_rng_state()` the fixture recorded.
fn rng_bytes(s: &HashMap<String, Tensor>, name: &str, which: &str) -> Vec<u8> {
    s.get(&format!("{name}.{which}"))
        .unwrap_or_else(|| panic!("fixture tensor {name}.{which} missing"))
        .to_vec1::<u8>()
        .unwrap()
}

fn params(
    case: &serde_json::Value,
    eos_threshold: f32,
    s: &HashMap<String, Tensor>,
) -> GenerationParams {
    let mut p = GenerationParams::for_config(&pocket_tts_core::config::Config::english());
    p.temperature = case["temperature"].as_f64().unwrap() as f32;
    p.noise_clamp = case["noise_clamp"].as_f64().map(|c| c as f32);
    if case["prelude"].is_null() {
        p.seed = Some(case["seed"].as_u64().unwrap());
    } else {
        let name = case["name"].as_str().unwrap();
        p.torch_rng_state =
            Some(TorchRngState::from_bytes(&rng_bytes(s, name, "rng_before")).unwrap());
    }
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
    let mut stream = model
        .generate_stream(
            &voice,
            case["text"].as_str().unwrap(),
            &params(case, eos_threshold, s),
        )
        .unwrap();
    let frames: Vec<_> = stream.by_ref().collect::<Result<_, _>>().unwrap();
    assert!(
        stream.torch_rng_state().to_bytes() == rng_bytes(s, name, "rng_after"),
        "{tag}: the generator state after the generation is not torch's"
    );
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
    assert!(cases.len() >= 6, "{} cases", cases.len());
    assert!(cases.iter().any(|c| !c["prelude"].is_null()));
    assert!(cases.iter().any(|c| c["noise_clamp"].is_null()));
    assert!(cases.iter().any(|c| !c["noise_clamp"].is_null()));
    for &backend in Backend::ALL {
        let model = common::tiny_model().with_backend(backend).unwrap();
        for case in cases {
            run_case(&model, &format!("[{backend}] "), case, eos_threshold, &s);
        }
    }
}

#[test]
fn engine_streams_hand_back_the_reference_generator_state() {
    let meta = common::json_fixture("tiny/seeded.json");
    let s =
        candle_core::safetensors::load(common::fixture("tiny/seeded.safetensors"), &Device::Cpu)
            .expect("seeded.safetensors");
    let eos_threshold = meta["eos_threshold"].as_f64().unwrap() as f32;
    let model = std::sync::Arc::new(common::tiny_model());
    let voice = std::sync::Arc::new(
        model
            .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
            .unwrap(),
    );
    let engine = Engine::new(std::sync::Arc::clone(&model), EngineOptions::default()).unwrap();
    let cases = meta["cases"].as_array().unwrap();
    // All cases at once: batched in the same passes, each with its own generator.
    let mut handles: Vec<_> = cases
        .iter()
        .map(|case| {
            let text = case["text"].as_str().unwrap();
            engine
                .submit(&voice, text, &params(case, eos_threshold, &s))
                .unwrap()
        })
        .collect();
    for (case, handle) in cases.iter().zip(&mut handles) {
        let name = case["name"].as_str().unwrap();
        assert!(
            handle.torch_rng_state().is_none(),
            "{name}: state before the end"
        );
        let audio: Vec<f32> = handle
            .by_ref()
            .map(|f| f.unwrap().samples)
            .collect::<Vec<_>>()
            .concat();
        let expected = s.get(&format!("{name}.audio")).unwrap();
        check(
            &format!("[engine] {name} audio"),
            &audio,
            expected,
            AUDIO_TOL,
        );
        let state = handle
            .torch_rng_state()
            .expect("a state once the stream ended");
        assert!(
            state.to_bytes() == rng_bytes(&s, name, "rng_after"),
            "[engine] {name}: the generator state after the generation is not torch's"
        );
    }
}

#[test]
fn torch_rng_states_of_the_fixtures_read_back_to_the_same_bytes() {
    let meta = common::json_fixture("tiny/seeded.json");
    let s =
        candle_core::safetensors::load(common::fixture("tiny/seeded.safetensors"), &Device::Cpu)
            .expect("seeded.safetensors");
    let mut with_cached_normal = 0;
    for case in meta["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        for which in ["rng_before", "rng_after"] {
            let bytes = rng_bytes(&s, name, which);
            let state = TorchRngState::from_bytes(&bytes).unwrap();
            assert!(state.to_bytes() == bytes, "{name}.{which}: bytes differ");
            with_cached_normal += usize::from(bytes[5040] == 1);
            if case["prelude"].is_null() && which == "rng_before" {
                let seed = case["seed"].as_u64().unwrap();
                assert_eq!(
                    state,
                    TorchRngState::manual_seed(seed),
                    "{name}: manual_seed"
                );
            }
        }
    }
    assert!(
        with_cached_normal >= 2,
        "no state with a cached double normal"
    );
}
