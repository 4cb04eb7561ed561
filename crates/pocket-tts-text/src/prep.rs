//! What the model reads of a text: the reference's preparation and chunking
//! ([`crate::chunking`]), with two opt-in steps of ours around it: normalization
//! ([`crate::normalize`]) and pause markup ([`crate::markup`]). With both off
//! ([`TextPrep::default`]) the chunks are exactly the reference's.
//!
//! Order: the markup is parsed first (on the text as given), each text segment is then
//! normalized (when asked), prepared and split into chunks on its own
//! (`split_into_best_sentences`), so the text on each side of a pause is a prompt of its
//! own (capitalized, ended with a period when it has no final punctuation, as the
//! reference does for any prompt). Whitespace-only text between tags is dropped.

use crate::chunking::{prepare_text_prompt, split_into_best_sentences, TextOptions};
use crate::markup::{parse_markup, Segment};
use crate::normalize::{normalize, Language};
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// The opt-in steps of the text preparation. [`Default`]: both off, the reference's
/// behaviour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextPrep {
    /// Rewrite numbers, dates, money, abbreviations and symbols into words of this
    /// language before the reference's preparation (`None`: the text as given).
    pub normalize: Option<Language>,
    /// Read `[pause …]` and `<break time="…"/>` tags as silences (`false`: they are text).
    pub markup: bool,
}

/// A piece of a text, in the order it is spoken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextPiece {
    /// A chunk of text generated on its own, as split (before
    /// [`prepare_text_prompt`], which [`ModelInput`] applies).
    Chunk(String),
    /// Silence, in milliseconds.
    Pause(u32),
}

/// A piece as the model takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelInput {
    /// A chunk: its text as split, as prepared (what is tokenized), its tokens, and the
    /// reference's guess of frames to generate after EOS.
    Chunk {
        /// The chunk as split ([`TextPiece::Chunk`]).
        chunk: String,
        /// The chunk after [`prepare_text_prompt`]: exactly what is tokenized.
        prepared: String,
        /// The token ids of `prepared`.
        tokens: Vec<u32>,
        /// Frames after EOS guessed from the chunk's length (1 or 3).
        frames_after_eos_guess: usize,
    },
    /// Silence, in milliseconds.
    Pause(u32),
}

/// Splits `text` into the chunks and pauses generated one after the other.
///
/// With [`TextPrep::default`] this is [`split_into_best_sentences`] (the reference's
/// chunks). See the module docs for the order of the steps.
///
/// # Errors
/// [`Error::InvalidArgument`] for a text with nothing to speak (empty, whitespace only,
/// or with markup neither words nor pauses), a malformed pause tag, or a segment that
/// [`prepare_text_prompt`] finds empty.
pub fn split_text(
    tokenizer: &Tokenizer,
    text: &str,
    max_tokens: usize,
    opts: &TextOptions,
    prep: &TextPrep,
) -> Result<Vec<TextPiece>> {
    let empty = || Error::InvalidArgument("the text is empty: give some words to speak".into());
    let segments = if prep.markup {
        parse_markup(text)?
    } else {
        vec![Segment::Text(text.to_string())]
    };
    let mut pieces = Vec::new();
    for segment in segments {
        match segment {
            Segment::Pause(ms) => pieces.push(TextPiece::Pause(ms)),
            Segment::Text(t) if t.trim().is_empty() => {}
            Segment::Text(t) => {
                let t = match prep.normalize {
                    Some(language) => normalize(&t, language),
                    None => t,
                };
                if t.trim().is_empty() {
                    continue;
                }
                let chunks = split_into_best_sentences(tokenizer, &t, max_tokens, opts)?;
                pieces.extend(chunks.into_iter().map(TextPiece::Chunk));
            }
        }
    }
    if pieces.is_empty() {
        return Err(empty());
    }
    Ok(pieces)
}

/// [`split_text`], each chunk prepared ([`prepare_text_prompt`]) and tokenized as the
/// model reads it.
///
/// # Errors
/// See [`split_text`].
pub fn model_inputs(
    tokenizer: &Tokenizer,
    text: &str,
    max_tokens: usize,
    opts: &TextOptions,
    prep: &TextPrep,
) -> Result<Vec<ModelInput>> {
    split_text(tokenizer, text, max_tokens, opts, prep)?
        .into_iter()
        .map(|piece| prepare_piece(tokenizer, piece, opts))
        .collect()
}

/// One piece as the model takes it (see [`ModelInput`]).
///
/// # Errors
/// [`Error::InvalidArgument`] for a chunk that is empty once prepared.
pub fn prepare_piece(
    tokenizer: &Tokenizer,
    piece: TextPiece,
    opts: &TextOptions,
) -> Result<ModelInput> {
    Ok(match piece {
        TextPiece::Pause(ms) => ModelInput::Pause(ms),
        TextPiece::Chunk(chunk) => {
            let (prepared, guess) = prepare_text_prompt(&chunk, opts)?;
            let tokens = tokenizer.encode(&prepared);
            ModelInput::Chunk {
                chunk,
                prepared,
                tokens,
                frames_after_eos_guess: guess,
            }
        }
    })
}

/// The language of a model's text, for normalization: `explicit` if given, else
/// `config_language` (the model config's `language` field), else the built-in config
/// name's language (`builtin`: `french_24l` → French). `None` when none of them names one
/// (a custom config without `language`).
///
/// # Errors
/// [`Error::InvalidData`] for a `config_language` that is not a known language (a config
/// read by `pocket-tts-core`'s `Config::from_yaml_str` has been checked already).
pub fn text_language(
    explicit: Option<Language>,
    config_language: Option<&str>,
    builtin: Option<&str>,
) -> Result<Option<Language>> {
    if explicit.is_some() {
        return Ok(explicit);
    }
    if let Some(name) = config_language {
        return name
            .parse()
            .map(Some)
            .map_err(|e| Error::InvalidData(format!("config language: {e}")));
    }
    Ok(builtin.and_then(Language::from_config_name))
}

/// [`text_language`] when normalization needs one.
///
/// # Errors
/// [`Error::InvalidArgument`] when no language resolves, naming the `text_language`
/// setting and the config's `language` field; the errors of [`text_language`].
pub fn require_text_language(
    explicit: Option<Language>,
    config_language: Option<&str>,
    builtin: Option<&str>,
) -> Result<Language> {
    text_language(explicit, config_language, builtin)?.ok_or_else(|| {
        let known: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
        Error::InvalidArgument(format!(
            "text_language: normalization needs the text's language and this model names \
             none (a custom config without a `language` field); set text_language, or add \
             `language: english` (or {}) to the config",
            known[1..].join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_resolution_order() {
        // The config's `language` field: absent, or a name as written in the YAML.
        let none = None;
        let german = Some("de");
        let fr = Some(Language::French);
        assert_eq!(text_language(fr, german, Some("english")).unwrap(), fr);
        assert_eq!(
            text_language(None, german, Some("english")).unwrap(),
            Some(Language::German)
        );
        assert_eq!(
            text_language(None, none, Some("italian_24l")).unwrap(),
            Some(Language::Italian)
        );
        assert_eq!(
            text_language(None, none, Some("english_2026-01")).unwrap(),
            Some(Language::English)
        );
        assert_eq!(text_language(None, none, None).unwrap(), None);
        assert_eq!(text_language(None, none, Some("klingon")).unwrap(), None);
        let bad = Some("klingon");
        assert!(matches!(
            text_language(None, bad, None),
            Err(Error::InvalidData(_))
        ));
        match require_text_language(None, none, None) {
            Err(Error::InvalidArgument(m)) => {
                assert!(
                    m.starts_with("text_language") && m.contains("`language"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            require_text_language(None, none, Some("dutch")).unwrap(),
            Language::Dutch
        );
    }
}
