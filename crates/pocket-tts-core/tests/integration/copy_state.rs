//! `GenerationParams::copy_state = false`, the reference's `copy_state=False`: each text
//! chunk continues from the FlowLM state the previous one left, and
//! `AudioStream::model_state` hands the final state to the next generation. Compared with
//! the reference's own two calls on one state (`tests/fixtures/tiny/continued.*`, made by
//! `scripts/reference/make_continued_fixtures.py`) at temperature 0, audio within 1e-3, and
//! the state's length (positions) exact.

use crate::common;

use std::sync::Arc;

use candle_core::{Device, Tensor};
use pocket_tts_core::{
    Backend, Engine, EngineOptions, Error, GenerationParams, TtsModel, VoiceState,
};

const AUDIO_TOL: f32 = 1e-3;

fn params(meta: &serde_json::Value, call: &str, copy_state: bool) -> GenerationParams {
    let mut p = GenerationParams::for_config(&pocket_tts_core::config::Config::english());
    p.temperature = 0.0;
    p.eos_threshold = meta["eos_threshold"].as_f64().unwrap() as f32;
    p.max_tokens = meta[call]["max_tokens"].as_u64().unwrap() as usize;
    p.copy_state = copy_state;
    p
}

/// Generates `call`'s text from `voice`; returns the audio and the state after it.
fn run(
    model: &TtsModel,
    voice: &VoiceState,
    meta: &serde_json::Value,
    call: &str,
    copy_state: bool,
) -> (Vec<f32>, VoiceState) {
    let text = meta[call]["text"].as_str().unwrap();
    let mut stream = model
        .generate_stream(voice, text, &params(meta, call, copy_state))
        .unwrap();
    let audio: Vec<f32> = stream
        .by_ref()
        .map(|f| f.unwrap().samples)
        .collect::<Vec<_>>()
        .concat();
    let state = stream.model_state().unwrap();
    (audio, state)
}

fn check(tag: &str, ours: &[f32], theirs: &Tensor) {
    let theirs = theirs.to_vec1::<f32>().unwrap();
    assert_eq!(ours.len(), theirs.len(), "{tag}: lengths differ");
    let err = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(err <= AUDIO_TOL, "{tag}: max abs error {err:e}");
}

#[test]
fn chained_chunks_and_calls_match_the_reference() {
    let meta = common::json_fixture("tiny/continued.json");
    let s =
        candle_core::safetensors::load(common::fixture("tiny/continued.safetensors"), &Device::Cpu)
            .expect("continued.safetensors");
    let get = |k: &str| {
        s.get(k)
            .unwrap_or_else(|| panic!("fixture tensor {k} missing"))
    };
    let positions = &meta["positions"];
    for &backend in Backend::ALL {
        let model = common::tiny_model().with_backend(backend).unwrap();
        let voice = model
            .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
            .unwrap();
        assert_eq!(voice.len() as u64, positions["voice"].as_u64().unwrap());

        let (copied, unchanged) = run(&model, &voice, &meta, "first", true);
        check(
            &format!("[{backend}] first, copy_state"),
            &copied,
            get("first.copied.audio"),
        );

        let (first, after_first) = run(&model, &voice, &meta, "first", false);
        check(&format!("[{backend}] first"), &first, get("first.audio"));
        assert_ne!(
            first.len(),
            copied.len(),
            "chaining the chunks changed nothing"
        );
        assert_eq!(
            after_first.len() as u64,
            positions["after_first"].as_u64().unwrap()
        );
        // With copy_state, the state still grows the same way within the last chunk, but
        // each chunk started from the voice: shorter.
        assert!(unchanged.len() < after_first.len());

        let (second, after_second) = run(&model, &after_first, &meta, "second", false);
        check(&format!("[{backend}] second"), &second, get("second.audio"));
        assert_eq!(
            after_second.len() as u64,
            positions["after_second"].as_u64().unwrap()
        );
    }
}

#[test]
fn the_engine_refuses_chained_states() {
    let model = Arc::new(common::tiny_model());
    let voice = Arc::new(
        model
            .load_voice_state(&common::tiny_dir().join("voice_state.safetensors"))
            .unwrap(),
    );
    let engine = Engine::new(Arc::clone(&model), EngineOptions::default()).unwrap();
    let meta = common::json_fixture("tiny/continued.json");
    match engine.submit(&voice, "Hello.", &params(&meta, "first", false)) {
        Err(Error::Unsupported(m)) => assert!(m.contains("copy_state"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
