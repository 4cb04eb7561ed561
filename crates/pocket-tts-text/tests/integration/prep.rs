//! The opt-in text steps (`prep`: pause markup, normalization) around the reference's
//! chunking: off, the chunks are the reference's (the `text_cases.json` fixtures); on, the
//! pieces and their order, and what the model reads of each. Through the model (the
//! language of a model, pauses in generation): the core crate's
//! `tests/integration/model_text.rs`.

use crate::common;

use pocket_tts_text::chunking::{prepare_text_prompt, TextOptions};
use pocket_tts_text::prep::{model_inputs, split_text, ModelInput, TextPiece, TextPrep};
use pocket_tts_text::tokenizer::Tokenizer;
use pocket_tts_text::Error;

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
        let want = pocket_tts_text::chunking::split_into_best_sentences(&tok, text, 50, &opts);
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
