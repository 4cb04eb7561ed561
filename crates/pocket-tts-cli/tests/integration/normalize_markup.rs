//! `generate` and `stream` with `--markup` and `--normalize` on the tiny model: a pause is
//! exactly its samples of silence between the chunks around it (the rest of the audio as
//! without the tag), malformed tags and unresolvable languages are refused naming the flag,
//! and off (the default) the text is read as the reference reads it.
//!
//! `normalized_digits_speak_like_their_words` expects the real English rules of
//! `pocket_tts_text::normalize` (it fails while `normalize` is the identity).

use crate::common;

use std::path::Path;

use common::*;

/// Two sentences that are two chunks at `--max-tokens 4` (as they are on each side of a
/// pause), so that the audio without the tag is the audio with it minus the silence.
const PLAIN: &str = "Hello there. Well done.";
/// 500 ms at 24 kHz.
const PAUSE: usize = 12_000;

/// The samples of a WAV `generate` wrote (any length: a pause need not be whole frames).
fn wav_samples(path: &Path) -> Vec<i16> {
    let reader = hound::WavReader::open(path).expect("a WAV");
    assert_eq!(reader.spec().sample_rate, SAMPLE_RATE);
    reader
        .into_samples::<i16>()
        .collect::<Result<_, _>>()
        .expect("samples")
}

fn generate(sb: &Sandbox, args: Args) -> Vec<i16> {
    let dir = tempfile::tempdir_in(sb.root()).unwrap();
    let path = dir.path().join(OUT_NAME);
    sb.run_ok(&args.set("--output-path", utf8(&path)), b"");
    wav_samples(&path)
}

/// Asserts that `with` is `plain` with `pause` zeros inserted at a frame boundary (the end
/// of the first chunk), nowhere else changed.
fn assert_pause_inserted<T: PartialEq + Default + Copy + std::fmt::Debug>(
    plain: &[T],
    with: &[T],
    pause: usize,
    what: &str,
) {
    assert_eq!(with.len(), plain.len() + pause, "{what}: length");
    let zero = T::default();
    let at = (FRAME_SAMPLES..plain.len())
        .step_by(FRAME_SAMPLES)
        .find(|&k| {
            with[..k] == plain[..k]
                && with[k..k + pause].iter().all(|&x| x == zero)
                && with[k + pause..] == plain[k..]
        });
    assert!(
        at.is_some(),
        "{what}: no frame boundary where the audio is the plain one with {pause} zeros inserted"
    );
}

#[test]
fn generate_and_stream_insert_exactly_the_pause() {
    let sb = Sandbox::new();
    let plain = generate(
        &sb,
        sb.generate().set("--text", PLAIN).set("--max-tokens", "4"),
    );
    for (tag, pause) in [
        ("[pause 500ms]", PAUSE),
        ("<break time='0.5s'/>", PAUSE),
        ("[PAUSE 1.25 s]", 30_000),
    ] {
        let text = format!("Hello there. {tag} Well done.");
        let with = generate(
            &sb,
            sb.generate()
                .set("--text", &text)
                .set("--max-tokens", "4")
                .switch("--markup"),
        );
        assert_pause_inserted(&plain, &with, pause, tag);
    }

    // stream: the model's floats, the zeros exact.
    let raw = |args: Args| -> Vec<f32> {
        let out = sb.run_ok(
            &args.set("--format", "pcm-f32le").set("--max-tokens", "4"),
            b"",
        );
        out.stdout
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let plain = raw(sb.stream().set("--text", PLAIN));
    let with = raw(sb
        .stream()
        .set("--text", "Hello there. [pause 500ms] Well done.")
        .switch("--markup")
        .set("--threads", "1"));
    assert_pause_inserted(&plain, &with, PAUSE, "stream");
}

#[test]
fn without_markup_tags_are_text_and_with_it_bad_tags_are_refused() {
    let sb = Sandbox::new();
    // Off (the default): brackets are read as text, as the reference reads them; no error.
    let spoken = generate(&sb, sb.generate().set("--text", "Hello [pause 5x] there."));
    check_speech_layout(&spoken, "tags as text");
    assert_refused(
        &sb,
        "a malformed tag",
        sb.generate()
            .set("--text", "Hello [pause 5x] there.")
            .switch("--markup"),
        b"",
        &["--text", "`[pause 5x]`", "character 7", "unknown unit"],
    );
    assert_refused(
        &sb,
        "an unclosed break",
        sb.generate()
            .set("--text", "Hello <break time=\"1s\" there.")
            .switch("--markup"),
        b"",
        &["--text", "<break", "not closed"],
    );
}

#[test]
fn normalize_needs_a_language_and_off_changes_nothing() {
    let sb = Sandbox::new();
    // The tiny config names no language.
    assert_refused(
        &sb,
        "--normalize without a language",
        sb.generate().switch("--normalize"),
        b"",
        &["--normalize", "--text-language", "`language: english`"],
    );
    assert_refused(
        &sb,
        "an unknown --text-language",
        sb.generate()
            .switch("--normalize")
            .set("--text-language", "klingon"),
        b"",
        &["--text-language klingon", "unknown text language"],
    );
    assert_refused(
        &sb,
        "--text-language alone",
        sb.generate().set("--text-language", "english"),
        b"",
        &["--text-language only applies with --normalize"],
    );
    let out = sb.run(
        &sb.stream()
            .switch("--normalize")
            .set("--format", "pcm-s16le"),
        b"",
    );
    check_refusal("stream --normalize", &out, &["--text-language"], true);

    // Words stay words: normalization leaves this text alone, so the audio is the plain one.
    let text = "I have three cats.";
    let plain = generate(&sb, sb.generate().set("--text", text));
    let normalized = generate(
        &sb,
        sb.generate()
            .set("--text", text)
            .switch("--normalize")
            .set("--text-language", "en"),
    );
    assert!(plain == normalized, "plain and normalized differ");
    // The language from the config's `language` field.
    let config = sb.config_with(
        "english.yaml",
        &tiny("model.safetensors"),
        "language: english\n",
    );
    let from_config = generate(
        &sb,
        sb.generate()
            .set("--config", utf8(&config))
            .set("--text", text)
            .switch("--normalize"),
    );
    assert!(plain == from_config, "plain and from_config differ");
}

/// Expects the English rules of `pocket_tts_text::normalize` (fails while `normalize` is
/// the identity): "3" is read as "three".
#[test]
fn normalized_digits_speak_like_their_words() {
    let sb = Sandbox::new();
    let words = generate(&sb, sb.generate().set("--text", "I have three cats."));
    let digits = generate(
        &sb,
        sb.generate()
            .set("--text", "I have 3 cats.")
            .switch("--normalize")
            .set("--text-language", "english"),
    );
    // (Not assert_eq: the samples would fill the log.)
    assert!(
        digits == words,
        "generate --normalize did not read 3 as three ({} and {} samples)",
        digits.len(),
        words.len()
    );
}
