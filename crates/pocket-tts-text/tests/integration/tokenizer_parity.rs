//! Parity of `pocket_tts_text::tokenizer` with Python `sentencepiece` (through the
//! reference's `SentencePieceTokenizer`), on fixtures written by
//! `scripts/reference/make_text_fixtures.py`.

use crate::common;

use std::path::{Path, PathBuf};

use pocket_tts_text::tokenizer::{Tokenizer, TokenizerKind};
use pocket_tts_text::Error;
use serde_json::Value;

const N_BINS: usize = 4000;

fn official() -> Tokenizer {
    Tokenizer::from_file(&common::asset("tokenizer.model"), "sentencepiece", N_BINS)
        .expect("official tokenizer.model loads")
}

fn ids_of(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids array")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("fixture field {key} missing in {v}"))
}

fn cases<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("fixture array {key} missing"))
}

/// Checks every encode case (`ids` and `decoded`), returning the failures.
fn check_encode(tok: &Tokenizer, cases: &[Value], label: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let text = str_of(case, "text");
        let want = ids_of(&case["ids"]);
        let got = tok.encode(text);
        if got != want {
            failures.push(format!(
                "[{label}] encode({text:?}):\n  got  {got:?}\n  want {want:?}"
            ));
        }
        let want_dec = str_of(case, "decoded");
        let got_dec = tok.decode(&want);
        if got_dec != want_dec {
            failures.push(format!(
                "[{label}] decode(encode({text:?})): got {got_dec:?}, want {want_dec:?}"
            ));
        }
    }
    failures
}

/// Checks every decode case, returning the failures.
fn check_decode(tok: &Tokenizer, cases: &[Value], label: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let ids = ids_of(&case["ids"]);
        let want = str_of(case, "decoded");
        match tok.try_decode(&ids) {
            Ok(got) if got == want => {}
            other => failures.push(format!(
                "[{label}] decode({ids:?}): got {other:?}, want {want:?}"
            )),
        }
    }
    failures
}

fn assert_no_failures(failures: Vec<String>, total: usize) {
    assert!(
        failures.is_empty(),
        "{} of {total} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn official_model_metadata() {
    let fx = common::json_fixture("tokenizer_cases.json");
    let tok = official();
    assert_eq!(tok.kind(), TokenizerKind::SentencePiece);
    assert_eq!(
        tok.vocab_size(),
        fx["vocab_size"].as_u64().unwrap() as usize
    );
    assert_eq!(tok.id_to_piece(0).as_deref(), Some("<unk>"));
    assert_eq!(tok.id_to_piece(4).as_deref(), Some("<0x00>"));
    assert_eq!(tok.id_to_piece(260).as_deref(), Some("\u{2581}"));
    assert_eq!(tok.id_to_piece(N_BINS as u32), None);
    assert!(tok.piece_score(260).unwrap() < 0.0);
}

#[test]
fn encode_matches_sentencepiece() {
    let fx = common::json_fixture("tokenizer_cases.json");
    let encode = cases(&fx, "encode");
    assert!(encode.len() >= 70, "expected at least 70 encode cases");
    let tok = official();
    assert_no_failures(check_encode(&tok, encode, "official"), encode.len() * 2);
}

#[test]
fn decode_matches_sentencepiece() {
    let fx = common::json_fixture("tokenizer_cases.json");
    let decode = cases(&fx, "decode");
    assert!(!decode.is_empty());
    let tok = official();
    assert_no_failures(check_decode(&tok, decode, "official"), decode.len());
}

/// Tiny models trained by the fixture script cover what the official model leaves
/// off: `remove_extra_whitespaces`, a precompiled character map, user-defined and
/// control symbols, no byte fallback (merged unknown runs), whitespace as suffix,
/// no dummy prefix, a custom unknown surface.
#[test]
fn extra_models_match_sentencepiece() {
    let fx = common::json_fixture("tokenizer_cases.json");
    let models = cases(&fx, "extra_models");
    assert!(models.len() >= 3);
    let mut failures = Vec::new();
    let mut total = 0;
    for m in models {
        let name = str_of(m, "name");
        let bytes = hex_decode(str_of(m, "model_hex"));
        let tok = Tokenizer::from_sentencepiece_bytes(&bytes)
            .unwrap_or_else(|e| panic!("extra model {name} fails to load: {e}"));
        assert_eq!(
            tok.vocab_size(),
            m["vocab_size"].as_u64().unwrap() as usize,
            "{name}"
        );
        let enc = cases(m, "encode");
        let dec = cases(m, "decode");
        total += enc.len() * 2 + dec.len();
        failures.extend(check_encode(&tok, enc, name));
        failures.extend(check_decode(&tok, dec, name));
    }
    assert_no_failures(failures, total);
}

fn hex_decode(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A scratch directory for files written by one test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "pocket-tts-tokenizer-test-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write temp file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How a `tokenizer.json` is converted from the SentencePiece model.
#[derive(Debug, Clone, Copy, PartialEq)]
enum JsonVariant {
    /// Metaspace pre-tokenizer (prepend `▁`, no split) and ByteFallback + Metaspace
    /// decoder: the classic conversion.
    Metaspace,
    /// Normalizer `Prepend("▁")` + `Replace(" ", "▁")`, no pre-tokenizer, decoder
    /// `Replace("▁", " ")` + ByteFallback + Fuse + `Strip(" ", 1, 0)`.
    Normalizer,
}

/// A `tokenizer.json` built from the official SentencePiece model with the
/// `tokenizers` crate: a Unigram model with byte fallback over the same pieces and
/// scores, plus the whitespace handling of `variant`.
fn json_from_sentencepiece(sp: &Tokenizer, variant: JsonVariant) -> String {
    use tokenizers::decoders::byte_fallback::ByteFallback;
    use tokenizers::decoders::fuse::Fuse;
    use tokenizers::decoders::sequence::Sequence as DecoderSequence;
    use tokenizers::decoders::strip::Strip;
    use tokenizers::models::unigram::Unigram;
    use tokenizers::normalizers::{Prepend, Replace, Sequence as NormalizerSequence};
    use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};

    let vocab: Vec<(String, f64)> = (0..sp.vocab_size() as u32)
        .map(|id| {
            (
                sp.id_to_piece(id).unwrap(),
                f64::from(sp.piece_score(id).unwrap()),
            )
        })
        .collect();
    let model = Unigram::from(vocab, Some(0), true).expect("unigram");
    let mut tk = tokenizers::Tokenizer::new(model);
    match variant {
        JsonVariant::Metaspace => {
            tk.with_pre_tokenizer(Some(Metaspace::new(
                '\u{2581}',
                PrependScheme::Always,
                false,
            )));
            tk.with_decoder(Some(DecoderSequence::new(vec![
                ByteFallback::new().into(),
                Metaspace::new('\u{2581}', PrependScheme::Always, false).into(),
            ])));
        }
        JsonVariant::Normalizer => {
            tk.with_normalizer(Some(NormalizerSequence::new(vec![
                Prepend::new("\u{2581}".to_string()).into(),
                Replace::new(" ", "\u{2581}").unwrap().into(),
            ])))
            .expect("a normalizer sequence of Prepend and Replace");
            tk.with_decoder(Some(DecoderSequence::new(vec![
                Replace::new("\u{2581}", " ").unwrap().into(),
                ByteFallback::new().into(),
                Fuse::new().into(),
                Strip::new(' ', 1, 0).into(),
            ])));
        }
    }
    tk.to_string(false).expect("serialize tokenizer.json")
}

/// Texts on which a converted `tokenizer.json` differs from SentencePiece by design:
/// its trie also holds the control and byte pieces (`<s>`, `<0x41>`), which
/// SentencePiece never matches in text; and the Metaspace pre-tokenizer does not
/// prepend `▁` to text that already starts with a space or `▁` (SentencePiece always
/// adds its dummy prefix).
fn json_differs_by_design(text: &str, variant: JsonVariant) -> bool {
    text.contains('<') || (variant == JsonVariant::Metaspace && text.starts_with([' ', '\u{2581}']))
}

#[test]
fn json_tokenizer_matches_sentencepiece_and_dispatches() {
    let fx = common::json_fixture("tokenizer_cases.json");
    let sp = official();
    let dir = TempDir::new("json");
    let mut failures = Vec::new();
    let mut checks = 0;
    for variant in [JsonVariant::Metaspace, JsonVariant::Normalizer] {
        let json = json_from_sentencepiece(&sp, variant);

        // `.json` wins over a config that says "sentencepiece".
        let json_path = dir.write(&format!("{variant:?}.json"), json.as_bytes());
        let tk = Tokenizer::from_file(&json_path, "sentencepiece", N_BINS).expect("json loads");
        assert_eq!(tk.kind(), TokenizerKind::HfJson);
        assert_eq!(tk.vocab_size(), N_BINS);

        // No suffix: the config's kind decides, an empty kind sniffs the content.
        let bare = dir.write(&format!("{variant:?}_no_suffix"), json.as_bytes());
        for kind in ["tokenizers", "json", ""] {
            let t = Tokenizer::from_file(&bare, kind, N_BINS).unwrap();
            assert_eq!(t.kind(), TokenizerKind::HfJson, "kind {kind:?}");
        }
        assert_eq!(
            Tokenizer::from_json_bytes(json.as_bytes()).unwrap().kind(),
            TokenizerKind::HfJson
        );
        let err = Tokenizer::from_file(&json_path, "tokenizers", 3999).unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");

        let mut compared = 0;
        for case in cases(&fx, "encode") {
            let text = str_of(case, "text");
            if json_differs_by_design(text, variant) {
                continue;
            }
            compared += 1;
            let want = ids_of(&case["ids"]);
            let got = tk.encode(text);
            if got != want {
                failures.push(format!(
                    "{variant:?} encode({text:?}): got {got:?}, want {want:?}"
                ));
            }
            let dec = tk.decode(&want);
            let want_dec = str_of(case, "decoded");
            if dec != want_dec {
                failures.push(format!(
                    "{variant:?} decode({want:?}): got {dec:?}, want {want_dec:?}"
                ));
            }
        }
        assert!(compared >= 60, "too few cases compared: {compared}");
        checks += compared * 2;
    }
    assert_no_failures(failures, checks);
}

#[test]
fn model_suffix_wins_over_config_kind() {
    let model = common::asset("tokenizer.model");
    let bytes = std::fs::read(&model).unwrap();
    let dir = TempDir::new("kinds");
    // The released configs say "tokenizers"; a `.model` file is still SentencePiece.
    let tk = Tokenizer::from_file(&model, "tokenizers", N_BINS).unwrap();
    assert_eq!(tk.kind(), TokenizerKind::SentencePiece);
    // No suffix: kind decides; an empty kind sniffs (not JSON → SentencePiece).
    let bare = dir.write("spm_no_suffix.bin", &bytes);
    for kind in ["sentencepiece", ""] {
        let tk = Tokenizer::from_file(&bare, kind, N_BINS).unwrap();
        assert_eq!(tk.kind(), TokenizerKind::SentencePiece, "kind {kind:?}");
        assert_eq!(tk.encode("Hello world"), vec![2994, 578]);
    }
    let from_bytes = Tokenizer::from_sentencepiece_bytes(&bytes).unwrap();
    assert_eq!(from_bytes.encode("Hello world"), vec![2994, 578]);
}

fn assert_names(err: &Error, path: &Path) {
    let msg = err.to_string();
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(msg.contains(&*name), "error {msg:?} does not name {name}");
}

#[test]
fn corrupt_model_is_invalid_data() {
    let model = std::fs::read(common::asset("tokenizer.model")).unwrap();
    let dir = TempDir::new("corrupt");
    let garbage = dir.write("garbage.model", b"\xff\xff\xff\xff this is not a protobuf");
    let truncated = dir.write("truncated.model", &model[..model.len() / 3]);
    let text = dir.write("text.model", b"hello");
    let empty = dir.write("empty.model", b"");
    for path in [&garbage, &truncated, &text, &empty] {
        let err = Tokenizer::from_file(path, "sentencepiece", N_BINS).unwrap_err();
        assert!(
            matches!(err, Error::InvalidData(_)),
            "{}: {err}",
            path.display()
        );
        assert_names(&err, path);
    }
    let bad_json = dir.write("broken.json", b"{\"model\": ");
    let err = Tokenizer::from_file(&bad_json, "tokenizers", N_BINS).unwrap_err();
    assert!(matches!(err, Error::InvalidData(_)), "{err}");
    assert_names(&err, &bad_json);
}

#[test]
fn missing_file_is_not_found() {
    let path = std::env::temp_dir().join("pocket-tts-definitely-missing/tokenizer.model");
    let err = Tokenizer::from_file(&path, "sentencepiece", N_BINS).unwrap_err();
    assert!(
        matches!(err, Error::NotFound(_) | Error::Io { .. }),
        "unexpected {err:?}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn vocab_mismatch_is_invalid_data() {
    let path = common::asset("tokenizer.model");
    let err = Tokenizer::from_file(&path, "sentencepiece", 4001).unwrap_err();
    assert!(matches!(err, Error::InvalidData(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("4000") && msg.contains("4001"), "{msg}");
    assert_names(&err, &path);
}

#[test]
fn unknown_kind_without_suffix_is_invalid_argument() {
    let bytes = std::fs::read(common::asset("tokenizer.model")).unwrap();
    let dir = TempDir::new("unknown-kind");
    let bare = dir.write("tok.bin", &bytes);
    let err = Tokenizer::from_file(&bare, "wordpiece", N_BINS).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn out_of_range_ids() {
    let tok = official();
    let err = tok.try_decode(&[2994, 4000]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // `decode` skips the bad id instead of failing.
    assert_eq!(tok.decode(&[2994, 4000, 578]), "Hello world");
}
