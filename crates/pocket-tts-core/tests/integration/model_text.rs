//! The opt-in text steps through the model (the text crate's `prep` on its own is tested in
//! `crates/pocket-tts-text/tests/integration/prep.rs`): normalization needs the model's
//! language, and pauses in generation, alone and through the engine, on the tiny model:
//! the audio of the same chunks with exactly the pause's zeros in between.

use crate::common;

use std::sync::Arc;

use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::{AudioFrame, GenerationParams};
use pocket_tts_core::{Engine, EngineOptions, Error};
use pocket_tts_text::normalize::Language;
use pocket_tts_text::prep::ModelInput;

#[test]
fn normalization_needs_a_language() {
    let model = common::tiny_model();
    let mut p = GenerationParams::for_config(&Config::english());
    p.normalize = true;
    // The tiny config is a custom one without `language`, and no built-in name.
    assert_eq!(model.text_language(None).unwrap(), None);
    match model.model_inputs("Hello.", &p) {
        Err(Error::InvalidArgument { message: m, .. }) => {
            assert!(
                m.contains("text_language") && m.contains("`language"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
    p.text_language = Some(Language::English);
    let inputs = model.model_inputs("Hello there.", &p).unwrap();
    assert!(
        matches!(&inputs[..], [ModelInput::Chunk { prepared, .. }] if prepared == "Hello there.")
    );
}

/// The samples of `frames`, in order.
fn samples(frames: &[AudioFrame]) -> Vec<f32> {
    frames
        .iter()
        .flat_map(|f| f.samples.iter().copied())
        .collect()
}

/// Deterministic (temperature 0), with the fixture's EOS threshold and 4 tokens per chunk,
/// so that "Hello there. Well done." is the same two chunks with or without a tag between.
fn params(markup: bool) -> GenerationParams {
    let mut p = GenerationParams::for_config(&Config::english());
    p.temperature = 0.0;
    p.seed = Some(1);
    p.eos_threshold = -12.56;
    p.max_tokens = 4;
    p.markup = markup;
    p
}

const PLAIN: &str = "Hello there. Well done.";
const WITH_PAUSE: &str = "Hello there. [pause 500ms] Well done.";
/// 500 ms at 24 kHz.
const PAUSE: usize = 12_000;

#[test]
fn a_pause_is_its_zeros_between_the_chunks_alone_threaded_and_batched() {
    let mut model = common::tiny_model();
    let voice = model
        .load_voice_state(&common::fixture("tiny/voice_state.safetensors"))
        .unwrap();
    assert_eq!(
        model.text_chunks(PLAIN, 4).unwrap(),
        ["Hello there.", "Well done."],
        "the plain text must be the same two chunks"
    );
    model.set_threads(1).unwrap();
    let plain: Vec<AudioFrame> = model
        .generate_stream(&voice, PLAIN, &params(false))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let first_chunk = plain.iter().filter(|f| f.chunk == 0).count() * 1920;
    let plain = samples(&plain);
    let mut expected = plain[..first_chunk].to_vec();
    expected.extend(std::iter::repeat_n(0.0, PAUSE));
    expected.extend_from_slice(&plain[first_chunk..]);

    let check = |frames: &[AudioFrame], what: &str| {
        assert_eq!(samples(frames), expected, "{what}");
        let pauses: Vec<&AudioFrame> = frames.iter().filter(|f| f.pause).collect();
        // 12000 samples: six frames of 1920 and one of 480.
        assert_eq!(pauses.len(), 7, "{what}");
        assert!(
            pauses.iter().all(|f| f.chunk == 1 && f.latent.is_empty()),
            "{what}"
        );
        assert_eq!(pauses.last().map(|f| f.samples.len()), Some(480), "{what}");
    };
    for threads in [1, 2] {
        model.set_threads(threads).unwrap();
        let mut stream = model
            .generate_stream(&voice, WITH_PAUSE, &params(true))
            .unwrap();
        assert_eq!(stream.chunk_count(), 2);
        let frames: Vec<AudioFrame> = stream.by_ref().collect::<Result<_, _>>().unwrap();
        check(&frames, &format!("{threads} threads"));
        let stats = stream.stats();
        assert_eq!(stats.pause_samples, PAUSE);
        assert_eq!(stats.frames, frames.iter().filter(|f| !f.pause).count());
        assert_eq!(
            model.generate(&voice, WITH_PAUSE, &params(true)).unwrap(),
            expected
        );
    }

    let model = Arc::new(model);
    let engine = Engine::new(Arc::clone(&model), EngineOptions::default()).unwrap();
    let voice = Arc::new(voice);
    let mut handles = vec![
        engine.submit(&voice, WITH_PAUSE, &params(true)).unwrap(),
        engine.submit(&voice, PLAIN, &params(false)).unwrap(),
    ];
    let mut plain_handle = handles.pop().unwrap();
    let mut handle = handles.pop().unwrap();
    let frames: Vec<AudioFrame> = handle.by_ref().collect::<Result<_, _>>().unwrap();
    check(&frames, "engine");
    assert_eq!(handle.stats().pause_samples, PAUSE);
    let others: Vec<AudioFrame> = plain_handle.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(samples(&others), plain, "a stream beside it is unchanged");

    // Pauses only, at the start and the end.
    let frames: Vec<AudioFrame> = engine
        .submit(&voice, "[pause 100ms]", &params(true))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(samples(&frames), vec![0.0; 2400]);
    let edges = model
        .generate(
            &voice,
            "[pause 10ms]Hello there. Well done.[pause 10ms]",
            &params(true),
        )
        .unwrap();
    assert_eq!(edges.len(), plain.len() + 480);
    assert_eq!(&edges[240..edges.len() - 240], &plain[..]);
    assert!(edges[..240]
        .iter()
        .chain(&edges[edges.len() - 240..])
        .all(|&x| x == 0.0));
}
