//! Text tokenizer: SentencePiece `.model` files (decoded and run natively, bit-exact
//! with the Python `sentencepiece` package) and Hugging Face `tokenizer.json` files
//! (run through the `tokenizers` crate).
//!
//! reference: modules/text_conditioner.py of pocket-tts 4.0.1
//! (`SentencePieceTokenizer`, `JsonTokenizer`, `build_tokenizer`).
//!
//! The SentencePiece path re-implements what `sentencepiece` 0.2.x does for a Unigram
//! model, step by step:
//!
//! * normalization (`normalizer.cc`): optional precompiled character map, user-defined
//!   symbols copied verbatim, `remove_extra_whitespaces`, `add_dummy_prefix`,
//!   `escape_whitespaces` (`' '` → `U+2581`), `treat_whitespace_as_suffix`;
//! * the optimized Viterbi search of `unigram_model.cc` (`EncodeOptimized`), with its
//!   exact mixed `float`/`double` arithmetic so that ties break the same way;
//! * unknown characters: byte-fallback pieces `<0xXX>` when the model has them,
//!   otherwise one merged unknown id per run (`PopulateSentencePieceText`);
//! * decoding (`SentencePieceProcessor::Decode`): control pieces are invisible, the
//!   unknown piece decodes to `unk_surface`, the first `U+2581` of the text is dropped,
//!   runs of byte pieces are reassembled into UTF-8 with one `U+FFFD` per invalid byte.
//!
//! Submodules, by concern:
//!
//! * `proto`: the `sentencepiece_model.proto` messages read from a `.model` file;
//! * `model`: the validated piece table of a Unigram model;
//! * `normalizer`: text normalization (character map, whitespace rules);
//! * `unigram`: encoding (Viterbi search, byte fallback, unknown runs);
//! * `decode`: ids back to text;
//! * `utf8`: SentencePiece's UTF-8 validity rules;
//! * `load`: backend choice for a file and the `tokenizer.json` parse.

mod decode;
mod load;
mod model;
mod normalizer;
mod proto;
mod unigram;
mod utf8;

use std::fmt;
use std::path::Path;

use crate::{Error, Result};

use load::{parse_json, resolve_kind};
use model::SentencePieceModel;

/// Which backend a [`Tokenizer`] runs.
///
/// reference: modules/text_conditioner.py, `SentencePieceTokenizer` / `JsonTokenizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerKind {
    /// A SentencePiece `.model` file (`ModelProto`), run natively.
    SentencePiece,
    /// A Hugging Face `tokenizer.json`, run by the `tokenizers` crate.
    HfJson,
}

/// A text tokenizer: text → token ids and back.
///
/// Build it with [`Tokenizer::from_file`] (the config-driven path, with the vocabulary
/// size check of the reference), [`Tokenizer::from_sentencepiece_bytes`] or
/// [`Tokenizer::from_json_bytes`].
///
/// reference: modules/text_conditioner.py, `SentencePieceTokenizer`, `JsonTokenizer`.
pub struct Tokenizer {
    backend: Backend,
}

enum Backend {
    SentencePiece(Box<SentencePieceModel>),
    Json(Box<tokenizers::Tokenizer>),
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokenizer")
            .field("kind", &self.kind())
            .field("vocab_size", &self.vocab_size())
            .finish()
    }
}

impl Tokenizer {
    /// Loads a tokenizer file and checks that its vocabulary has `n_bins` entries.
    ///
    /// The backend is chosen like the reference's `build_tokenizer`, but the file
    /// suffix wins over the config: a `.model` file is always read as SentencePiece and
    /// a `.json` file always as a Hugging Face `tokenizer.json`, whatever `kind` says.
    /// For other suffixes `kind` decides: `"sentencepiece"` (also `"spm"`, `"sp"`) or
    /// `"tokenizers"` (also `"json"`); an empty `kind` sniffs the content (a JSON
    /// object → `tokenizer.json`, anything else → SentencePiece).
    ///
    /// `n_bins` is the config's `flow_lm.lookup_table.n_bins`, which must equal the
    /// vocabulary size (with added tokens for `tokenizer.json`).
    ///
    /// # Errors
    /// * [`Error::NotFound`] if `path` does not exist, [`Error::Io`] on other read errors;
    /// * [`Error::InvalidArgument`] for an unknown `kind`;
    /// * [`Error::InvalidData`] if the file is not a valid model of its kind (the message
    ///   names the file) or its vocabulary size differs from `n_bins`;
    /// * [`Error::Unsupported`] for a SentencePiece model that is not Unigram.
    ///
    /// reference: modules/text_conditioner.py, `build_tokenizer`.
    pub fn from_file(path: &Path, kind: &str, n_bins: usize) -> Result<Tokenizer> {
        let bytes = std::fs::read(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::NotFound(format!("tokenizer file {} does not exist", path.display()))
            } else {
                Error::io(path, e)
            }
        })?;
        Self::from_bytes(&bytes, path, kind, n_bins)
    }

    /// [`Tokenizer::from_file`] on a file's bytes already in memory (the WebAssembly
    /// build, which has no files): `name` is the file's name, whose suffix chooses the
    /// backend as in [`Tokenizer::from_file`] and which messages name.
    ///
    /// # Errors
    /// As [`Tokenizer::from_file`], but for the file's existence.
    pub fn from_bytes(bytes: &[u8], name: &Path, kind: &str, n_bins: usize) -> Result<Tokenizer> {
        let kind = resolve_kind(name, kind, bytes)?;
        let origin = name.display().to_string();
        let tokenizer = match kind {
            TokenizerKind::SentencePiece => Tokenizer {
                backend: Backend::SentencePiece(Box::new(SentencePieceModel::parse(
                    bytes, &origin,
                )?)),
            },
            TokenizerKind::HfJson => Tokenizer {
                backend: Backend::Json(Box::new(parse_json(bytes, &origin)?)),
            },
        };
        let vocab_size = tokenizer.vocab_size();
        if vocab_size != n_bins {
            return Err(Error::InvalidData(format!(
                "tokenizer {origin} has vocab size={vocab_size} but n_bins={n_bins} was \
                 specified (flow_lm.lookup_table.n_bins in the config must match the tokenizer)"
            )));
        }
        Ok(tokenizer)
    }

    /// Builds a SentencePiece tokenizer from the bytes of a `.model` file (a serialized
    /// `ModelProto`, as returned by Python's `sp.serialized_model_proto()`).
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the bytes are not a valid model (bad protobuf, no
    /// unknown piece, duplicate or empty pieces, malformed byte pieces or character
    /// map); [`Error::Unsupported`] if the model is not a Unigram model.
    ///
    /// reference: modules/text_conditioner.py, `SentencePieceTokenizer.__init__` /
    /// `encoder_from_serialized`.
    pub fn from_sentencepiece_bytes(bytes: &[u8]) -> Result<Tokenizer> {
        Ok(Tokenizer {
            backend: Backend::SentencePiece(Box::new(SentencePieceModel::parse(
                bytes,
                "SentencePiece model",
            )?)),
        })
    }

    /// Builds a tokenizer from the bytes of a Hugging Face `tokenizer.json`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the bytes are not a valid `tokenizer.json`.
    ///
    /// reference: modules/text_conditioner.py, `JsonTokenizer.__init__`.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Tokenizer> {
        Ok(Tokenizer {
            backend: Backend::Json(Box::new(parse_json(bytes, "tokenizer.json")?)),
        })
    }

    /// The backend this tokenizer runs.
    pub fn kind(&self) -> TokenizerKind {
        match &self.backend {
            Backend::SentencePiece(_) => TokenizerKind::SentencePiece,
            Backend::Json(_) => TokenizerKind::HfJson,
        }
    }

    /// Number of token ids (pieces; for `tokenizer.json` including added tokens).
    ///
    /// reference: `sp.vocab_size()` / `tokenizer.get_vocab_size()`.
    pub fn vocab_size(&self) -> usize {
        match &self.backend {
            Backend::SentencePiece(sp) => sp.pieces.len(),
            Backend::Json(tk) => tk.get_vocab_size(true),
        }
    }

    /// The piece string of a token id (`<0x41>` for byte pieces), `None` if out of range.
    ///
    /// reference: `sp.id_to_piece(id)`.
    pub fn id_to_piece(&self, id: u32) -> Option<String> {
        match &self.backend {
            Backend::SentencePiece(sp) => sp.pieces.get(id as usize).map(|p| p.piece.clone()),
            Backend::Json(tk) => tk.id_to_token(id),
        }
    }

    /// The score (log probability) of a SentencePiece piece, `None` for an id out of
    /// range or a `tokenizer.json` tokenizer.
    ///
    /// reference: `sp.get_score(id)`.
    pub fn piece_score(&self, id: u32) -> Option<f32> {
        match &self.backend {
            Backend::SentencePiece(sp) => sp.pieces.get(id as usize).map(|p| p.score),
            Backend::Json(_) => None,
        }
    }

    /// Encodes text into token ids, without BOS/EOS or any other special token.
    ///
    /// For SentencePiece this is bit-exact with `sp.encode(text, out_type=int)`. For a
    /// `tokenizer.json` an internal error of the `tokenizers` crate (which the reference
    /// would raise) is logged and yields an empty vector; use [`Tokenizer::try_encode`]
    /// to get it as an error instead.
    ///
    /// reference: modules/text_conditioner.py, `SentencePieceTokenizer.encode`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self.try_encode(text) {
            Ok(ids) => ids,
            Err(e) => {
                tracing::error!("tokenizer failed to encode {text:?}: {e}");
                Vec::new()
            }
        }
    }

    /// Like [`Tokenizer::encode`], but reports failures of the `tokenizer.json` backend.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the `tokenizers` crate fails on this input (the
    /// SentencePiece backend never fails).
    pub fn try_encode(&self, text: &str) -> Result<Vec<u32>> {
        match &self.backend {
            Backend::SentencePiece(sp) => Ok(sp.encode(text)),
            Backend::Json(tk) => tk
                .encode(text, false)
                .map(|enc| enc.get_ids().to_vec())
                .map_err(|e| Error::InvalidData(format!("tokenizer.json failed to encode: {e}"))),
        }
    }

    /// Decodes token ids into text.
    ///
    /// For SentencePiece this is bit-exact with `sp.decode(ids)`: `U+2581` becomes a
    /// space, the leading dummy-prefix space is dropped, control pieces are invisible,
    /// the unknown piece becomes `" ⁇ "`, runs of byte pieces are reassembled into UTF-8
    /// (each invalid byte → `U+FFFD`). Any slice of ids can be decoded, e.g. a slice
    /// that cuts a multi-byte character. Ids out of range (which `sp.decode` rejects
    /// with an `IndexError`) are skipped with a warning; use [`Tokenizer::try_decode`]
    /// to get them as an error.
    ///
    /// reference: modules/text_conditioner.py, `SentencePieceTokenizer.decode`.
    pub fn decode(&self, ids: &[u32]) -> String {
        match self.try_decode(ids) {
            Ok(text) => text,
            Err(e) => {
                tracing::warn!("{e}; decoding the valid ids only");
                let n = self.vocab_size();
                let valid: Vec<u32> = ids.iter().copied().filter(|&i| (i as usize) < n).collect();
                self.try_decode(&valid).unwrap_or_default()
            }
        }
    }

    /// Like [`Tokenizer::decode`], but rejects ids out of range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if an id is `>= vocab_size()`; [`Error::InvalidData`]
    /// if the `tokenizers` crate fails to decode.
    pub fn try_decode(&self, ids: &[u32]) -> Result<String> {
        let n = self.vocab_size();
        if let Some(bad) = ids.iter().find(|&&i| i as usize >= n) {
            return Err(Error::InvalidArgument(format!(
                "token id {bad} is out of range (vocab size {n})"
            )));
        }
        match &self.backend {
            Backend::SentencePiece(sp) => Ok(sp.decode(ids)),
            Backend::Json(tk) => tk
                .decode(ids, true)
                .map_err(|e| Error::InvalidData(format!("tokenizer.json failed to decode: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_invalid_data() {
        let err = Tokenizer::from_sentencepiece_bytes(b"\xff\xff\xff not a model").unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
        let err = Tokenizer::from_sentencepiece_bytes(b"").unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
    }
}
