//! `pocket-tts-cli prepare-text`: the chunks as the model reads them, one per line or as
//! JSON with their token ids (the official tokenizer's), pauses with `--markup`, from the
//! config and tokenizer alone (no weights), and its refusals naming the flag.
//!
//! `english_normalization_rewrites_digits` expects the real English rules of
//! `pocket_tts_text::normalize` (it fails while `normalize` is the identity).

use crate::common;

use common::*;
use pocket_tts_text::chunking::prepare_text_prompt;
use pocket_tts_text::tokenizer::Tokenizer;
use serde_json::Value;

fn prepare(sb: &Sandbox) -> Args {
    Args::new("prepare-text").set("--config", utf8(&sb.config))
}

fn stdout(sb: &Sandbox, args: &Args, stdin: &[u8]) -> String {
    let out = sb.run_ok(args, stdin);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 on stdout")
}

fn official_tokenizer() -> Tokenizer {
    Tokenizer::from_file(&tokenizer(), "sentencepiece", 4000).expect("tokenizer.model")
}

#[test]
fn chunks_one_per_line_and_as_json_with_their_token_ids() {
    let sb = Sandbox::new();
    let text = "hello there. well done, my friend";
    let lines = stdout(
        &sb,
        &prepare(&sb).set("--text", text).set("--max-tokens", "4"),
        b"",
    );
    // The reference's chunking (the long sentence cut after its comma), then each chunk's
    // own preparation as the model reads it (capital, final period).
    assert_eq!(lines, "Hello there.\nWell done.\nMy friend.\n");
    let one = stdout(&sb, &prepare(&sb).set("--text", text), b"");
    assert_eq!(one, "Hello there. well done, my friend.\n");
    // stdin, as generate's --text -.
    assert_eq!(
        stdout(&sb, &prepare(&sb).set("--text", "-"), text.as_bytes()),
        one
    );

    let json = stdout(
        &sb,
        &prepare(&sb)
            .set("--text", text)
            .set("--max-tokens", "4")
            .switch("--json"),
        b"",
    );
    let json: Value = serde_json::from_str(&json).expect("JSON on stdout");
    let items = json.as_array().expect("an array");
    assert_eq!(items.len(), 3);
    let tok = official_tokenizer();
    for (item, want) in items
        .iter()
        .zip(["Hello there.", "Well done.", "My friend."])
    {
        assert_eq!(item["text"], want, "{item}");
        let ids: Vec<u32> = item["tokens"]
            .as_array()
            .expect("tokens")
            .iter()
            .map(|v| v.as_u64().expect("an id") as u32)
            .collect();
        assert_eq!(ids, tok.encode(want), "{want}");
        assert_eq!(
            prepare_text_prompt(want, &Default::default()).unwrap().0,
            want
        );
    }
}

#[test]
fn markup_lists_the_pauses_in_order() {
    let sb = Sandbox::new();
    let text = "[pause 1s]hi. [PAUSE 0.5s] [pause 250 ms]there <break time='2s'/>";
    let lines = stdout(
        &sb,
        &prepare(&sb).set("--text", text).switch("--markup"),
        b"",
    );
    assert_eq!(
        lines,
        "[pause 1000 ms]\nHi.\n[pause 500 ms]\n[pause 250 ms]\nThere.\n[pause 2000 ms]\n"
    );
    let json = stdout(
        &sb,
        &prepare(&sb)
            .set("--text", "A. <break time=\"500ms\"/> B.")
            .switch("--markup")
            .switch("--json"),
        b"",
    );
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[1], serde_json::json!({ "pause_ms": 500 }));
    assert_eq!(
        (json[0]["text"].as_str(), json[2]["text"].as_str()),
        (Some("A."), Some("B."))
    );
    // Without --markup, the tags are text, as the reference reads them.
    let plain = stdout(&sb, &prepare(&sb).set("--text", "hi [pause 1s] there"), b"");
    assert_eq!(plain, "Hi [pause 1s] there.\n");
}

#[test]
fn only_the_config_and_tokenizer_are_read() {
    let sb = Sandbox::new();
    // A checkpoint that does not exist: nothing reads it.
    let config = sb.config_with("no-weights.yaml", &sb.path("missing.safetensors"), "");
    let lines = stdout(
        &sb,
        &Args::new("prepare-text")
            .set("--config", utf8(&config))
            .set("--text", "Hi."),
        b"",
    );
    assert_eq!(lines, "Hi.\n");
}

#[test]
fn normalize_takes_the_language_from_the_flag_or_the_config() {
    let sb = Sandbox::new();
    // The tiny config names no language: --normalize needs one.
    let out = sb.run(
        &prepare(&sb).set("--text", "Hi.").switch("--normalize"),
        b"",
    );
    check_refusal(
        "--normalize without a language",
        &out,
        &["--normalize", "--text-language", "`language: english`"],
        false,
    );
    for lang in ["english", "EN", "de", "dutch"] {
        let args = prepare(&sb)
            .set("--text", "Hi there.")
            .switch("--normalize")
            .set("--text-language", lang);
        assert_eq!(stdout(&sb, &args, b""), "Hi there.\n", "{lang}");
    }
    // `language` in a custom config (accepted by the strict schema).
    let german = sb.config_with(
        "german.yaml",
        &tiny("model.safetensors"),
        "language: german\n",
    );
    let args = Args::new("prepare-text")
        .set("--config", utf8(&german))
        .set("--text", "Hallo.")
        .switch("--normalize");
    assert_eq!(stdout(&sb, &args, b""), "Hallo.\n");
}

#[test]
fn bad_flags_are_refused_naming_them() {
    let sb = Sandbox::new();
    let klingon = sb.config_with(
        "klingon.yaml",
        &tiny("model.safetensors"),
        "language: klingon\n",
    );
    let cases: Vec<(&str, Args, &[&str])> = vec![
        (
            "unknown text language",
            prepare(&sb)
                .set("--text", "Hi.")
                .switch("--normalize")
                .set("--text-language", "klingon"),
            &[
                "--text-language klingon",
                "unknown text language",
                "english",
            ],
        ),
        (
            "--text-language without --normalize",
            prepare(&sb)
                .set("--text", "Hi.")
                .set("--text-language", "fr"),
            &["--text-language only applies with --normalize"],
        ),
        (
            "a malformed tag",
            prepare(&sb)
                .set("--text", "Hi [pause 5x] there.")
                .switch("--markup"),
            &["--text", "[pause 5x]", "character 4", "unit"],
        ),
        (
            "a pause over 10 s",
            prepare(&sb)
                .set("--text", "Hi <break time=\"11s\"/>")
                .switch("--markup"),
            &["--text", "`<break time=\"11s\"/>`", "10 s"],
        ),
        (
            "pauses of nothing",
            prepare(&sb).set("--text", " ").switch("--markup"),
            &["--text is empty"],
        ),
        (
            "both --language and --config",
            prepare(&sb)
                .set("--language", "english")
                .set("--text", "Hi."),
            &["--config and --language are incompatible"],
        ),
        (
            "an unknown built-in language",
            Args::new("prepare-text")
                .set("--language", "klingon")
                .set("--text", "Hi."),
            &["--language klingon"],
        ),
        (
            "--max-tokens 0",
            prepare(&sb).set("--text", "Hi.").set("--max-tokens", "0"),
            &["--max-tokens"],
        ),
        (
            "a config language that is no language",
            Args::new("prepare-text")
                .set("--config", utf8(&klingon))
                .set("--text", "Hi."),
            &["--config", "language", "klingon"],
        ),
    ];
    for (case, args, needles) in cases {
        check_refusal(case, &sb.run(&args, b""), needles, false);
    }
}

/// Expects the English rules of `pocket_tts_text::normalize` (fails while `normalize` is
/// the identity).
#[test]
fn english_normalization_rewrites_digits() {
    let sb = Sandbox::new();
    let args = prepare(&sb)
        .set("--text", "I have 3 cats.")
        .switch("--normalize")
        .set("--text-language", "english");
    assert_eq!(stdout(&sb, &args, b""), "I have three cats.\n");
    // Only the text between tags is normalized.
    let args = args
        .set("--text", "I have 3 cats. [pause 500ms] And 2 dogs.")
        .switch("--markup");
    assert_eq!(
        stdout(&sb, &args, b""),
        "I have three cats.\n[pause 500 ms]\nAnd two dogs.\n"
    );
}
