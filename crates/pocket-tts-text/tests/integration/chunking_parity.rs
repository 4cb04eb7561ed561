//! Parity of `pocket_tts_text::chunking` with the reference's
//! models/text_chunking.py (`prepare_text_prompt`, `split_into_best_sentences`), on
//! fixtures written by `scripts/reference/make_text_fixtures.py`.

use crate::common;

use pocket_tts_text::chunking::{prepare_text_prompt, split_into_best_sentences, TextOptions};
use pocket_tts_text::tokenizer::Tokenizer;
use pocket_tts_text::Error;
use serde_json::Value;

fn options(v: &Value) -> TextOptions {
    let flag = |k: &str| {
        v[k].as_bool()
            .unwrap_or_else(|| panic!("option {k} missing in {v}"))
    };
    let replace_characters = v["replace_characters"]
        .as_object()
        .expect("replace_characters object")
        .iter()
        .map(|(k, rep)| {
            let mut chars = k.chars();
            let c = chars.next().expect("non-empty key");
            assert!(
                chars.next().is_none(),
                "replace_characters key {k:?} is one char"
            );
            (c, rep.as_str().expect("string value").to_string())
        })
        .collect();
    TextOptions {
        pad_with_spaces_for_short_inputs: flag("pad_with_spaces_for_short_inputs"),
        remove_semicolons: flag("remove_semicolons"),
        append_terminal_punctuation: flag("append_terminal_punctuation"),
        capitalize_first_letter: flag("capitalize_first_letter"),
        replace_characters,
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array of strings")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

#[test]
fn default_options_match_reference_config() {
    let o = TextOptions::default();
    assert!(!o.pad_with_spaces_for_short_inputs);
    assert!(!o.remove_semicolons);
    assert!(o.append_terminal_punctuation);
    assert!(o.capitalize_first_letter);
    assert!(o.replace_characters.is_empty());
}

#[test]
fn text_chunking_matches_reference() {
    let fx = common::json_fixture("text_cases.json");
    let tok = Tokenizer::from_file(&common::asset("tokenizer.model"), "sentencepiece", 4000)
        .expect("official tokenizer.model loads");
    let cases = fx["cases"].as_array().expect("cases");
    assert!(cases.len() >= 40, "expected at least 40 text cases");
    let mut failures = Vec::new();
    let mut checks = 0;
    let mut chunk_checks = 0;
    for case in cases {
        let text = case["text"].as_str().expect("text");
        let opts = options(&case["options"]);
        if case.get("error").is_some() {
            checks += 2;
            match prepare_text_prompt(text, &opts) {
                Err(Error::InvalidArgument(_)) => {}
                other => failures.push(format!("prepare({text:?}) should fail: {other:?}")),
            }
            match split_into_best_sentences(&tok, text, 50, &opts) {
                Err(Error::InvalidArgument(_)) => {}
                other => failures.push(format!("split({text:?}) should fail: {other:?}")),
            }
            continue;
        }
        let want_prepared = case["prepared"].as_str().expect("prepared");
        let want_frames = case["frames_after_eos_guess"].as_u64().expect("frames") as usize;
        checks += 1;
        match prepare_text_prompt(text, &opts) {
            Ok((p, f)) if p == want_prepared && f == want_frames => {}
            other => failures.push(format!(
                "prepare({text:?}, {opts:?}):\n  got  {other:?}\n  want {:?}",
                (want_prepared, want_frames)
            )),
        }
        let chunks = case["chunks"].as_object().expect("chunks object");
        assert!(!chunks.is_empty());
        for (max_tokens, want) in chunks {
            let max_tokens: usize = max_tokens.parse().expect("max_tokens key");
            let want = strings(want);
            checks += 1;
            chunk_checks += 1;
            match split_into_best_sentences(&tok, text, max_tokens, &opts) {
                Ok(got) if got == want => {}
                other => failures.push(format!(
                    "split({text:?}, max_tokens={max_tokens}):\n  got  {other:?}\n  want {want:?}"
                )),
            }
        }
    }
    assert!(
        chunk_checks >= 80,
        "too few chunking checks: {chunk_checks}"
    );
    assert!(
        failures.is_empty(),
        "{} of {checks} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Found by the `text` fuzz target: a text of only SentencePiece's space marker `▁`
/// (U+2581) tokenizes to two `▁` pieces, which decode to one blank chunk. The reference
/// (pocket-tts 4.0.1, `split_into_best_sentences(tok, "▁", 22, True, True, False, False,
/// {...})`, run on 2026-11-23) returns `['']` too, so this is parity, not a bug.
#[test]
fn a_text_of_space_markers_gives_one_blank_chunk_like_the_reference() {
    let tok = Tokenizer::from_file(&common::asset("tokenizer.model"), "sentencepiece", 4000)
        .expect("official tokenizer.model loads");
    let opts = TextOptions {
        pad_with_spaces_for_short_inputs: true,
        remove_semicolons: true,
        append_terminal_punctuation: false,
        capitalize_first_letter: false,
        replace_characters: vec![('’', "'".into()), ('«', String::new()), ('\t', " ".into())],
    };
    let chunks = split_into_best_sentences(&tok, "▁", 22, &opts).unwrap();
    assert_eq!(chunks, vec![String::new()]);
}
