//! The fuzz targets' bodies: each takes arbitrary bytes and drives one parser this project
//! owns, asserting the invariants that must hold for any input (no panic, and what a
//! successful parse promises). The `cargo fuzz` binaries in `fuzz_targets/` call them, and
//! the core crate's `tests/integration/fuzz_regressions.rs` replays the committed corpora and every
//! input that ever crashed through the same functions on stable Rust. The text targets
//! (`tokenizer`, `tokenizer_model`, `text`) drive `pocket-tts-text`, the others
//! `pocket-tts-core`.

use std::sync::OnceLock;

use pocket_tts_core::audio::{read_audio_bytes, resample, resampled_len};
use pocket_tts_core::config::Config;
use pocket_tts_core::VoiceState;
use pocket_tts_text::chunking::{prepare_text_prompt, split_into_best_sentences, TextOptions};
use pocket_tts_text::markup::{parse_markup, Segment, MAX_PAUSE_MS};
use pocket_tts_text::tokenizer::Tokenizer;

/// The official tokenizer (committed test asset), parsed once.
pub fn official_tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| {
        let bytes =
            include_bytes!("../../crates/pocket-tts-core/tests/fixtures/assets/tokenizer.model");
        Tokenizer::from_sentencepiece_bytes(bytes).expect("the official tokenizer parses")
    })
}

/// A voice state file: the geometry (layers, KV heads, head width) comes from the first
/// byte, the rest is the file. A state that loads must be finite and within its cache.
pub fn voice_state(data: &[u8]) {
    let Some((&g, bytes)) = data.split_first() else {
        return;
    };
    let layers = 1 + usize::from(g & 3);
    let heads = 1 + usize::from((g >> 2) & 3);
    let dim = 1usize << ((g >> 4) & 7);
    if let Ok(state) = VoiceState::from_safetensors_bytes(bytes, layers, heads, dim, "fuzz") {
        // A loaded state serializes and loads back unchanged.
        let again = state
            .to_safetensors_bytes()
            .expect("a loaded state serializes");
        let back = VoiceState::from_safetensors_bytes(&again, layers, heads, dim, "again")
            .expect("a saved state loads");
        assert_eq!(back, state, "a state round-trips through its file");
    }
}

/// A model config in YAML: parsing (and its validation) never panics, and a config that
/// parses gives sane derived sizes.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = Config::from_yaml_str(text, "fuzz") {
        let _ = config.latent_dim();
        let _ = config.speaker_dim();
        let _ = config.mimi.hop_length();
        let _ = config.mimi.frame_size();
    }
}

/// Text through the official tokenizer: encoding never panics, ids are in the vocabulary,
/// and decoding any ids (those of the text, then the raw bytes as ids) never panics.
pub fn tokenizer(data: &[u8]) {
    let tok = official_tokenizer();
    let text = String::from_utf8_lossy(data);
    let ids = tok.encode(&text);
    let vocab = tok.vocab_size() as u32;
    assert!(
        ids.iter().all(|&id| id < vocab),
        "an id outside the vocabulary"
    );
    let _ = tok.decode(&ids);
    let raw: Vec<u32> = data
        .chunks(2)
        .map(|c| u32::from(c[0]) | c.get(1).map_or(0, |&b| u32::from(b) << 8))
        .collect();
    let _ = tok.try_decode(&raw);
}

/// A SentencePiece `.model` file (a protobuf): parsing never panics, and a model that
/// parses encodes and decodes a sample text.
pub fn tokenizer_model(data: &[u8]) {
    if let Ok(tok) = Tokenizer::from_sentencepiece_bytes(data) {
        let ids = tok.encode("Hello, world! 123 ça va?");
        let _ = tok.decode(&ids);
    }
}

/// Text preparation and chunking with options from the first byte: never panics, the
/// prepared text is non-empty with a frames guess of 1 or 3, and there is at least one chunk;
/// pause markup parses without panicking into pauses within the limit and pieces of the text.
pub fn text(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let opts = TextOptions {
        pad_with_spaces_for_short_inputs: flags & 1 != 0,
        remove_semicolons: flags & 2 != 0,
        append_terminal_punctuation: flags & 4 != 0,
        capitalize_first_letter: flags & 8 != 0,
        replace_characters: if flags & 16 != 0 {
            vec![
                ('’', "'".to_string()),
                ('«', String::new()),
                ('\t', " ".to_string()),
            ]
        } else {
            Vec::new()
        },
    };
    if let Ok((prepared, frames)) = prepare_text_prompt(&text, &opts) {
        assert!(!prepared.is_empty());
        assert!(frames == 1 || frames == 3);
    }
    let max_tokens = 1 + usize::from(flags >> 5) * 7;
    if let Ok(chunks) = split_into_best_sentences(official_tokenizer(), &text, max_tokens, &opts) {
        // At least one chunk. A chunk may be blank: a text of only `▁` (SentencePiece's
        // space marker) gives `[""]`, as in the reference.
        assert!(!chunks.is_empty());
    }
    // Pause markup: never panics; text segments are pieces of the text, pauses are within
    // the limit.
    if let Ok(segments) = parse_markup(&text) {
        assert!(!segments.is_empty());
        let mut texts = 0;
        for s in &segments {
            match s {
                Segment::Pause(ms) => assert!(*ms <= MAX_PAUSE_MS),
                Segment::Text(t) => {
                    assert!(text.contains(t.as_str()));
                    texts += t.len();
                }
            }
        }
        assert!(texts <= text.len());
    }
}

/// An audio file (WAV through hound or symphonia, MP3, FLAC, Ogg Vorbis), kept to its first
/// 2 s, then resampled to 24 kHz: never panics; what reads is finite, non-empty, at a
/// non-zero rate; the resampled length is `resampled_len`'s.
pub fn audio(data: &[u8]) {
    let Ok((samples, rate, _)) = read_audio_bytes(data, "fuzz", Some(2)) else {
        return;
    };
    assert!(!samples.is_empty() && rate > 0);
    assert!(samples.iter().all(|x| x.is_finite()));
    assert!(samples.len() <= 2 * rate as usize);
    if let Ok(out) = resample(&samples, rate, 24_000) {
        assert_eq!(out.len(), resampled_len(samples.len(), rate, 24_000));
    }
}
