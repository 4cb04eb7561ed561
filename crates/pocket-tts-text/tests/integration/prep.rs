//! The opt-in text steps (`text_prep`: pause markup, normalization) around the reference's
//! chunking: off, the chunks are the reference's (the `text_cases.json` fixtures); on, the
//! pieces and their order; and pauses in generation, alone and through the engine, on the
//! tiny model: the audio of the same chunks with exactly the pause's zeros in between.

use crate::common;

use std::sync::Arc;

use pocket_tts_core::config::Config;
use pocket_tts_core::text_chunking::{prepare_text_prompt, TextOptions};
use pocket_tts_core::text_normalize::Language;
use pocket_tts_core::text_prep::{model_inputs, split_text, ModelInput, TextPiece, TextPrep};
use pocket_tts_core::tokenizer::Tokenizer;
use pocket_tts_core::tts_model::{AudioFrame, GenerationParams};
use pocket_tts_core::{Engine, EngineOptions, Error};

fn tokenizer() -> Tokenizer {
    Tokenizer::from_file(&common::asset("tokenizer.model"), "sentencepiece", 4000)
        .expect("official tokenizer.model loads")
}

const MARKUP: TextPrep = TextPrep {
    normalize: None,
    markup: true,
};

fn chunk(s: &str) -> TextPiece {
    TextPiece::Chunk(s.to_string())
}

#[test]
fn off_gives_the_reference_chunks() {
    let tok = tokenizer();
    let fx = common::json_fixture("text_cases.json");
    let mut checked = 0;
    for case in fx["cases"].as_array().expect("cases") {
        let text = case["text"].as_str().expect("text");
        // The fixture's options are per case; the default ones cover the off path.
        let opts = TextOptions::default();
        let want = pocket_tts_core::text_chunking::split_into_best_sentences(&tok, text, 50, &opts);
        let got = split_text(&tok, text, 50, &opts, &TextPrep::default());
        match (want, got) {
            (Ok(want), Ok(got)) => {
                assert_eq!(
                    got,
                    want.into_iter().map(TextPiece::Chunk).collect::<Vec<_>>()
                );
                checked += 1;
            }
            (Err(_), Err(Error::InvalidArgument(_))) => {}
            (want, got) => {
                // A blank text is refused before chunking (as `TtsModel::text_chunks`).
                assert!(text.trim().is_empty(), "{text:?}: {want:?} vs {got:?}");
            }
        }
    }
    assert!(checked >= 30, "only {checked} cases compared");
    // Tags are text when markup is off, as in the reference.
    let got = split_text(
        &tok,
        "Wait [pause 1s] here.",
        50,
        &TextOptions::default(),
        &TextPrep::default(),
    )
    .unwrap();
    assert_eq!(got, [chunk("Wait [pause 1s] here.")]);
}

#[test]
fn markup_splits_text_around_pauses_in_order() {
    let tok = tokenizer();
    let opts = TextOptions::default();
    let got = split_text(
        &tok,
        "hello there [pause 500ms] how are you? <break time='1.5s'/>",
        50,
        &opts,
        &MARKUP,
    )
    .unwrap();
    // Each side is a prompt of its own (prepared by the reference's chunking); the
    // whitespace after the last tag is dropped.
    assert_eq!(
        got,
        [
            chunk("Hello there."),
            TextPiece::Pause(500),
            chunk("How are you?"),
            TextPiece::Pause(1500)
        ]
    );
    // Adjacent tags, a tag first, blank text between tags.
    let got = split_text(
        &tok,
        "[pause 1s] [pause 2s]Go. One. Two.",
        3,
        &opts,
        &MARKUP,
    )
    .unwrap();
    assert_eq!(
        got,
        [
            TextPiece::Pause(1000),
            TextPiece::Pause(2000),
            chunk("Go."),
            chunk("One."),
            chunk("Two.")
        ]
    );
    // Only pauses: silence. Nothing at all: refused.
    assert_eq!(
        split_text(&tok, " [pause 1s] ", 50, &opts, &MARKUP).unwrap(),
        [TextPiece::Pause(1000)]
    );
    for blank in ["", "  \n "] {
        assert!(matches!(
            split_text(&tok, blank, 50, &opts, &MARKUP),
            Err(Error::InvalidArgument(m)) if m.contains("empty")
        ));
    }
    match split_text(&tok, "Hi. [pause 11s] there.", 50, &opts, &MARKUP) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("[pause 11s]"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn model_inputs_are_the_prepared_chunks_and_their_tokens() {
    let tok = tokenizer();
    let opts = TextOptions::default();
    let inputs = model_inputs(&tok, "hi [pause 20ms] there", 50, &opts, &MARKUP).unwrap();
    assert_eq!(inputs.len(), 3);
    for (input, want_chunk) in [(&inputs[0], "Hi."), (&inputs[2], "There.")] {
        let ModelInput::Chunk {
            chunk,
            prepared,
            tokens,
            frames_after_eos_guess,
        } = input
        else {
            panic!("{input:?}")
        };
        // The chunk (already prepared once by the chunking) prepared again, as the model
        // reads it (reference: `_generate_audio_stream_short_text`).
        let (want, guess) = prepare_text_prompt(want_chunk, &opts).unwrap();
        assert_eq!(
            (chunk.as_str(), prepared, *frames_after_eos_guess),
            (want_chunk, &want, guess)
        );
        assert_eq!(tokens, &tok.encode(&want));
    }
    assert_eq!(inputs[1], ModelInput::Pause(20));
}

#[test]
fn normalization_needs_a_language() {
    let model = common::tiny_model();
    let mut p = GenerationParams::for_config(&Config::english());
    p.normalize = true;
    // The tiny config is a custom one without `language`, and no built-in name.
    assert_eq!(model.text_language(None).unwrap(), None);
    match model.model_inputs("Hello.", &p) {
        Err(Error::InvalidArgument(m)) => {
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
