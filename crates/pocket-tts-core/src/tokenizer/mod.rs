//! Text tokenizer: SentencePiece `.model` files (decoded and run natively, bit-exact
//! with the Python `sentencepiece` package) and Hugging Face `tokenizer.json` files
//! (run through the `tokenizers` crate).
//!
//! reference: modules/text_conditioner.py (`SentencePieceTokenizer`, `JsonTokenizer`,
//! `build_tokenizer`).
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

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use crate::{Error, Result};

/// The whitespace symbol SentencePiece substitutes for `' '` (U+2581, LOWER ONE EIGHTH BLOCK).
const SPACE_SYMBOL: &str = "\u{2581}";
/// `kUnkPenalty` of `unigram_model.cc`: the unknown piece scores `min_score - 10`.
const UNK_PENALTY: f32 = 10.0;
/// `kDefaultUnknownSymbol` of `sentencepiece_processor.cc`.
const DEFAULT_UNK_SURFACE: &str = " \u{2047} ";
/// `TrainerSpec.ModelType.UNIGRAM`.
const MODEL_TYPE_UNIGRAM: i32 = 1;

/// Hand-written prost messages for the parts of `sentencepiece_model.proto` we read.
/// Unknown fields are skipped by prost, so any newer or older model file parses.
mod proto {
    /// `sentencepiece.ModelProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ModelProto {
        #[prost(message, repeated, tag = "1")]
        pub pieces: Vec<SentencePiece>,
        #[prost(message, optional, tag = "2")]
        pub trainer_spec: Option<TrainerSpec>,
        #[prost(message, optional, tag = "3")]
        pub normalizer_spec: Option<NormalizerSpec>,
        #[prost(message, optional, tag = "5")]
        pub denormalizer_spec: Option<NormalizerSpec>,
    }

    /// `sentencepiece.ModelProto.SentencePiece`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SentencePiece {
        #[prost(string, optional, tag = "1")]
        pub piece: Option<String>,
        #[prost(float, optional, tag = "2")]
        pub score: Option<f32>,
        /// `Type` enum: NORMAL=1 (default), UNKNOWN=2, CONTROL=3, USER_DEFINED=4,
        /// UNUSED=5, BYTE=6.
        #[prost(int32, optional, tag = "3")]
        pub r#type: Option<i32>,
    }

    /// `sentencepiece.TrainerSpec` (only the fields that change encoding or decoding).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TrainerSpec {
        /// UNIGRAM=1 (default), BPE=2, WORD=3, CHAR=4.
        #[prost(int32, optional, tag = "3")]
        pub model_type: Option<i32>,
        #[prost(int32, optional, tag = "4")]
        pub vocab_size: Option<i32>,
        #[prost(bool, optional, tag = "24")]
        pub treat_whitespace_as_suffix: Option<bool>,
        #[prost(bool, optional, tag = "35")]
        pub byte_fallback: Option<bool>,
        #[prost(int32, optional, tag = "40")]
        pub unk_id: Option<i32>,
        #[prost(string, optional, tag = "44")]
        pub unk_surface: Option<String>,
    }

    /// `sentencepiece.NormalizerSpec`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NormalizerSpec {
        #[prost(string, optional, tag = "1")]
        pub name: Option<String>,
        #[prost(bytes = "vec", optional, tag = "2")]
        pub precompiled_charsmap: Option<Vec<u8>>,
        #[prost(bool, optional, tag = "3")]
        pub add_dummy_prefix: Option<bool>,
        #[prost(bool, optional, tag = "4")]
        pub remove_extra_whitespaces: Option<bool>,
        #[prost(bool, optional, tag = "5")]
        pub escape_whitespaces: Option<bool>,
    }
}

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
        let kind = resolve_kind(path, kind, &bytes)?;
        let origin = path.display().to_string();
        let tokenizer = match kind {
            TokenizerKind::SentencePiece => Tokenizer {
                backend: Backend::SentencePiece(Box::new(SentencePieceModel::parse(
                    &bytes, &origin,
                )?)),
            },
            TokenizerKind::HfJson => Tokenizer {
                backend: Backend::Json(Box::new(parse_json(&bytes, &origin)?)),
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

/// Picks the backend: file suffix first, then the config's `kind`, then content.
fn resolve_kind(path: &Path, kind: &str, bytes: &[u8]) -> Result<TokenizerKind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    let by_kind = match kind.trim().to_ascii_lowercase().as_str() {
        "sentencepiece" | "spm" | "sp" => Some(TokenizerKind::SentencePiece),
        "tokenizers" | "json" => Some(TokenizerKind::HfJson),
        "" => None,
        other => {
            if !matches!(ext.as_deref(), Some("model" | "json")) {
                return Err(Error::InvalidArgument(format!(
                    "unknown tokenizer kind {other:?} for {}: expected \"sentencepiece\" or \
                     \"tokenizers\"",
                    path.display()
                )));
            }
            None
        }
    };
    let chosen = match ext.as_deref() {
        Some("model") => TokenizerKind::SentencePiece,
        Some("json") => TokenizerKind::HfJson,
        _ => by_kind.unwrap_or_else(|| {
            let first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
            if first == Some(b'{') {
                TokenizerKind::HfJson
            } else {
                TokenizerKind::SentencePiece
            }
        }),
    };
    if let Some(k) = by_kind {
        if k != chosen {
            tracing::debug!(
                "tokenizer kind {kind:?} overridden by the suffix of {}: using {chosen:?}",
                path.display()
            );
        }
    }
    Ok(chosen)
}

fn parse_json(bytes: &[u8], origin: &str) -> Result<tokenizers::Tokenizer> {
    tokenizers::Tokenizer::from_bytes(bytes)
        .map_err(|e| Error::InvalidData(format!("{origin}: not a valid tokenizer.json: {e}")))
}

/// SentencePiece piece types (`ModelProto.SentencePiece.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

#[derive(Debug, Clone)]
struct Piece {
    piece: String,
    score: f32,
    kind: PieceType,
    /// For byte pieces, the byte value of `<0xXX>`.
    byte: u8,
}

/// The normalizer of `normalizer.cc` for one `NormalizerSpec`.
#[derive(Debug, Clone)]
struct Normalizer {
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    charsmap: Option<CharsMap>,
}

/// A decoded `precompiled_charsmap`: a darts-clone double array whose values index
/// NUL-terminated replacement strings.
#[derive(Debug, Clone)]
struct CharsMap {
    units: Vec<u32>,
    normalized: Vec<u8>,
}

impl CharsMap {
    fn parse(blob: &[u8], origin: &str) -> Result<CharsMap> {
        let bad = |what: &str| {
            Error::InvalidData(format!("{origin}: broken precompiled_charsmap ({what})"))
        };
        if blob.len() <= 4 {
            return Err(bad("blob too short"));
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        let rest = &blob[4..];
        if trie_size > rest.len() || !trie_size.is_multiple_of(4) {
            return Err(bad("trie size exceeds the blob"));
        }
        let units = rest[..trie_size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect::<Vec<_>>();
        if units.is_empty() {
            return Err(bad("empty trie"));
        }
        Ok(CharsMap {
            units,
            normalized: rest[trie_size..].to_vec(),
        })
    }

    /// darts-clone `commonPrefixSearch`, returning the longest match as
    /// `(value, length)`.
    fn longest_prefix(&self, key: &[u8]) -> Option<(usize, usize)> {
        let has_leaf = |u: u32| (u >> 8) & 1 == 1;
        let value = |u: u32| (u & ((1u32 << 31) - 1)) as usize;
        let label = |u: u32| u & ((1u32 << 31) | 0xFF);
        let offset = |u: u32| ((u >> 10) << ((u & (1u32 << 9)) >> 6)) as usize;

        let mut best = None;
        let mut node_pos = offset(*self.units.first()?);
        for (i, &b) in key.iter().enumerate() {
            node_pos ^= b as usize;
            let unit = *self.units.get(node_pos)?;
            if label(unit) != b as u32 {
                break;
            }
            node_pos ^= offset(unit);
            if has_leaf(unit) {
                let leaf = *self.units.get(node_pos)?;
                best = Some((value(leaf), i + 1));
            }
        }
        best
    }

    /// The NUL-terminated replacement string at `value`.
    fn replacement(&self, value: usize) -> Option<&[u8]> {
        let tail = self.normalized.get(value..)?;
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        Some(&tail[..end])
    }
}

/// `string_util::OneCharLen`: the UTF-8 length announced by a lead byte.
fn one_char_len(b: u8) -> usize {
    const TABLE: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    TABLE[(b >> 4) as usize]
}

/// `string_util::IsValidDecodeUTF8`: length of the first character of `bytes` and
/// whether it is valid (a malformed sequence consumes one byte).
fn decode_utf8_prefix(bytes: &[u8]) -> (usize, bool) {
    let Some(&b0) = bytes.first() else {
        return (0, false);
    };
    let trail = |i: usize| bytes.get(i).is_some_and(|&b| b & 0xC0 == 0x80);
    let valid_cp = |cp: u32| cp < 0xD800 || (0xE000..=0x10FFFF).contains(&cp);
    if b0 < 0x80 {
        return (1, true);
    }
    if bytes.len() >= 2 && b0 & 0xE0 == 0xC0 {
        let cp = ((b0 as u32 & 0x1F) << 6) | (bytes[1] as u32 & 0x3F);
        if trail(1) && cp >= 0x80 && valid_cp(cp) {
            return (2, true);
        }
    } else if bytes.len() >= 3 && b0 & 0xF0 == 0xE0 {
        let cp =
            ((b0 as u32 & 0x0F) << 12) | ((bytes[1] as u32 & 0x3F) << 6) | (bytes[2] as u32 & 0x3F);
        if trail(1) && trail(2) && cp >= 0x800 && valid_cp(cp) {
            return (3, true);
        }
    } else if bytes.len() >= 4 && b0 & 0xF8 == 0xF0 {
        let cp = ((b0 as u32 & 0x07) << 18)
            | ((bytes[1] as u32 & 0x3F) << 12)
            | ((bytes[2] as u32 & 0x3F) << 6)
            | (bytes[3] as u32 & 0x3F);
        if trail(1) && trail(2) && trail(3) && cp >= 0x10000 && valid_cp(cp) {
            return (4, true);
        }
    }
    (1, false)
}

/// Appends the SentencePiece decoding of a run of raw bytes: each valid UTF-8
/// character as is, each byte that does not start one as U+FFFD.
fn push_bytes_lossy(out: &mut String, bytes: &[u8]) {
    let mut offset = 0;
    while offset < bytes.len() {
        let (len, valid) = decode_utf8_prefix(&bytes[offset..]);
        match std::str::from_utf8(&bytes[offset..offset + len]) {
            Ok(s) if valid => out.push_str(s),
            _ => out.push('\u{FFFD}'),
        }
        offset += len;
    }
}

impl Normalizer {
    fn from_spec(
        spec: Option<&proto::NormalizerSpec>,
        treat_whitespace_as_suffix: bool,
        origin: &str,
    ) -> Result<Normalizer> {
        let charsmap = match spec.and_then(|s| s.precompiled_charsmap.as_deref()) {
            Some(blob) if !blob.is_empty() => Some(CharsMap::parse(blob, origin)?),
            _ => None,
        };
        Ok(Normalizer {
            add_dummy_prefix: spec.and_then(|s| s.add_dummy_prefix).unwrap_or(true),
            remove_extra_whitespaces: spec
                .and_then(|s| s.remove_extra_whitespaces)
                .unwrap_or(true),
            escape_whitespaces: spec.and_then(|s| s.escape_whitespaces).unwrap_or(true),
            treat_whitespace_as_suffix,
            charsmap,
        })
    }

    /// `Normalizer::NormalizePrefix`: the normalized form of the first unit of `input`
    /// and how many input bytes it consumes.
    fn normalize_prefix<'a>(
        &'a self,
        input: &'a [u8],
        user_defined: &UserDefinedMatcher,
    ) -> (&'a [u8], usize) {
        if let Some(len) = user_defined.longest_match(input) {
            return (&input[..len], len);
        }
        if let Some(map) = &self.charsmap {
            if let Some((value, len)) = map.longest_prefix(input) {
                if let Some(rep) = map.replacement(value) {
                    return (rep, len);
                }
            }
        }
        let (len, valid) = decode_utf8_prefix(input);
        if valid {
            (&input[..len], len)
        } else {
            ("\u{FFFD}".as_bytes(), 1)
        }
    }

    /// `Normalizer::Normalize`, without the offset mapping.
    fn normalize(&self, input: &str, user_defined: &UserDefinedMatcher) -> Vec<u8> {
        let space_sym = SPACE_SYMBOL.as_bytes();
        let mut input = input.as_bytes();
        let mut out: Vec<u8> = Vec::with_capacity(input.len() * 3);
        if input.is_empty() {
            return out;
        }
        if self.remove_extra_whitespaces {
            while !input.is_empty() {
                let (norm, consumed) = self.normalize_prefix(input, user_defined);
                if norm != b" " {
                    break;
                }
                input = &input[consumed..];
            }
        }
        if input.is_empty() {
            return out;
        }
        let add_ws = |out: &mut Vec<u8>| {
            if self.escape_whitespaces {
                out.extend_from_slice(space_sym);
            } else {
                out.push(b' ');
            }
        };
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            add_ws(&mut out);
        }
        let mut is_prev_space = self.remove_extra_whitespaces;
        while !input.is_empty() {
            let (mut sp, consumed) = self.normalize_prefix(input, user_defined);
            while is_prev_space && sp.first() == Some(&b' ') {
                sp = &sp[1..];
            }
            if !sp.is_empty() {
                for &b in sp {
                    if self.escape_whitespaces && b == b' ' {
                        out.extend_from_slice(space_sym);
                    } else {
                        out.push(b);
                    }
                }
                is_prev_space = sp.last() == Some(&b' ');
            }
            input = &input[consumed..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            let space: &[u8] = if self.escape_whitespaces {
                space_sym
            } else {
                b" "
            };
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            add_ws(&mut out);
        }
        out
    }
}

/// `normalizer::PrefixMatcher` over the user-defined symbols: longest match at the start.
#[derive(Debug, Clone, Default)]
struct UserDefinedMatcher {
    symbols: HashMap<Vec<u8>, ()>,
    max_len: usize,
}

impl UserDefinedMatcher {
    fn longest_match(&self, input: &[u8]) -> Option<usize> {
        if self.symbols.is_empty() {
            return None;
        }
        (1..=self.max_len.min(input.len()))
            .rev()
            .find(|&len| self.symbols.contains_key(&input[..len]))
    }
}

/// A loaded SentencePiece Unigram model.
#[derive(Debug, Clone)]
struct SentencePieceModel {
    pieces: Vec<Piece>,
    /// NORMAL, USER_DEFINED and UNUSED pieces: the Viterbi trie of `unigram_model.cc`.
    trie: HashMap<Vec<u8>, u32>,
    max_piece_len: usize,
    /// `PieceToId` for each `<0xXX>` (unknown id if the model lacks it).
    byte_ids: [u32; 256],
    unk_id: u32,
    min_score: f32,
    max_score: f32,
    byte_fallback: bool,
    unk_surface: String,
    normalizer: Normalizer,
    denormalizer: Option<Normalizer>,
    user_defined: UserDefinedMatcher,
}

impl SentencePieceModel {
    /// Parses and validates a `ModelProto` like `SentencePieceProcessor::Load` and
    /// `ModelInterface::InitializePieces` do.
    fn parse(bytes: &[u8], origin: &str) -> Result<SentencePieceModel> {
        use prost::Message;
        let bad = |msg: String| Error::InvalidData(format!("{origin}: {msg}"));
        let model = proto::ModelProto::decode(bytes)
            .map_err(|e| bad(format!("not a SentencePiece model (protobuf error: {e})")))?;
        let trainer = model.trainer_spec.clone().unwrap_or_default();
        let model_type = trainer.model_type.unwrap_or(MODEL_TYPE_UNIGRAM);
        if model_type != MODEL_TYPE_UNIGRAM {
            let name = match model_type {
                2 => "BPE",
                3 => "WORD",
                4 => "CHAR",
                _ => "unknown",
            };
            return Err(Error::Unsupported(format!(
                "{origin}: SentencePiece model type {name} ({model_type}); only Unigram \
                 models are supported"
            )));
        }
        if model.pieces.is_empty() {
            return Err(bad("no pieces (not a SentencePiece model?)".into()));
        }
        let byte_fallback = trainer.byte_fallback.unwrap_or(false);

        let mut pieces = Vec::with_capacity(model.pieces.len());
        let mut trie: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut reserved: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut user_defined = UserDefinedMatcher::default();
        let mut unk_id: Option<u32> = None;
        let mut min_score = f32::MAX;
        // `FLT_MIN` (smallest positive float), as in `unigram_model.cc`.
        let mut max_score = f32::MIN_POSITIVE;
        for (i, p) in model.pieces.iter().enumerate() {
            let id = u32::try_from(i).map_err(|_| bad("too many pieces".into()))?;
            let text = p.piece.clone().unwrap_or_default();
            if text.is_empty() {
                return Err(bad(format!("piece {id} is empty")));
            }
            let kind = match p.r#type.unwrap_or(1) {
                1 => PieceType::Normal,
                2 => PieceType::Unknown,
                3 => PieceType::Control,
                4 => PieceType::UserDefined,
                5 => PieceType::Unused,
                6 => PieceType::Byte,
                t => return Err(bad(format!("piece {id} {text:?} has unknown type {t}"))),
            };
            let score = p.score.unwrap_or(0.0);
            let is_trie_piece = matches!(
                kind,
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused
            );
            let map = if is_trie_piece {
                &mut trie
            } else {
                &mut reserved
            };
            if map.insert(text.as_bytes().to_vec(), id).is_some() {
                return Err(bad(format!("piece {text:?} is already defined")));
            }
            let mut byte = 0u8;
            match kind {
                PieceType::Normal => {
                    min_score = min_score.min(score);
                    max_score = max_score.max(score);
                }
                PieceType::UserDefined => {
                    user_defined.max_len = user_defined.max_len.max(text.len());
                    user_defined.symbols.insert(text.as_bytes().to_vec(), ());
                }
                PieceType::Unknown => {
                    if unk_id.is_some() {
                        return Err(bad("unk is already defined".into()));
                    }
                    unk_id = Some(id);
                }
                PieceType::Byte => {
                    if !byte_fallback {
                        return Err(bad(format!(
                            "byte piece {text:?} is found although `byte_fallback` is false"
                        )));
                    }
                    byte = parse_byte_piece(&text)
                        .ok_or_else(|| bad(format!("byte piece {text:?} is malformed")))?;
                }
                PieceType::Control | PieceType::Unused => {}
            }
            pieces.push(Piece {
                piece: text,
                score,
                kind,
                byte,
            });
        }
        let unk_id = unk_id.ok_or_else(|| bad("unk is not defined".into()))?;
        if trie.is_empty() {
            return Err(bad("no pieces are loaded".into()));
        }
        let max_piece_len = trie.keys().map(Vec::len).max().unwrap_or(0);
        let piece_to_id = |s: &[u8]| -> u32 {
            reserved
                .get(s)
                .or_else(|| trie.get(s))
                .copied()
                .unwrap_or(unk_id)
        };
        let mut byte_ids = [unk_id; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = piece_to_id(format!("<0x{b:02X}>").as_bytes());
        }

        let treat_ws_suffix = trainer.treat_whitespace_as_suffix.unwrap_or(false);
        let normalizer =
            Normalizer::from_spec(model.normalizer_spec.as_ref(), treat_ws_suffix, origin)?;
        let denormalizer = match &model.denormalizer_spec {
            Some(spec)
                if spec
                    .precompiled_charsmap
                    .as_ref()
                    .is_some_and(|m| !m.is_empty()) =>
            {
                Some(Normalizer::from_spec(Some(spec), false, origin)?)
            }
            _ => None,
        };
        let unk_surface = trainer
            .unk_surface
            .unwrap_or_else(|| DEFAULT_UNK_SURFACE.to_string());

        Ok(SentencePieceModel {
            pieces,
            trie,
            max_piece_len,
            byte_ids,
            unk_id,
            min_score,
            max_score,
            byte_fallback,
            unk_surface,
            normalizer,
            denormalizer,
            user_defined,
        })
    }

    /// `SentencePieceProcessor::Encode` → ids.
    fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text, &self.user_defined);
        let mut ids = Vec::with_capacity(normalized.len() / 2 + 1);
        let mut prev_unk = false;
        for (start, end, id) in self.viterbi(&normalized) {
            let is_unk = id == self.unk_id;
            if is_unk && self.byte_fallback {
                ids.extend(
                    normalized[start..end]
                        .iter()
                        .map(|&b| self.byte_ids[b as usize]),
                );
            } else if !(is_unk && prev_unk) {
                // A run of unknown pieces is merged into one unknown id.
                ids.push(id);
            }
            prev_unk = is_unk;
        }
        ids
    }

    /// `unigram::Model::EncodeOptimized`: best segmentation of the normalized bytes as
    /// `(start, end, id)` byte ranges.
    ///
    /// The arithmetic mirrors the C++: path scores are stored as `f32`; a piece
    /// candidate is the `f64` sum of its score and the stored path score (the score
    /// expression is a `double` because of the `- 0.1` user-defined bonus), compared in
    /// `f64`; the unknown candidate is summed and compared in `f32`. The first
    /// candidate wins ties.
    fn viterbi(&self, normalized: &[u8]) -> Vec<(usize, usize, u32)> {
        #[derive(Clone, Copy)]
        struct Best {
            id: u32,
            score: f32,
            starts_at: Option<usize>,
        }
        let size = normalized.len();
        if size == 0 {
            return Vec::new();
        }
        let unk_score: f32 = self.min_score - UNK_PENALTY;
        let mut best = vec![
            Best {
                id: self.unk_id,
                score: 0.0,
                starts_at: None,
            };
            size + 1
        ];
        let mut starts_at = 0;
        while starts_at < size {
            let till_here = best[starts_at].score;
            let mblen = one_char_len(normalized[starts_at]).min(size - starts_at);
            let mut has_single_node = false;
            let max_end = (starts_at + self.max_piece_len).min(size);
            for end in starts_at + 1..=max_end {
                let Some(&id) = self.trie.get(&normalized[starts_at..end]) else {
                    continue;
                };
                let piece = &self.pieces[id as usize];
                if piece.kind == PieceType::Unused {
                    continue;
                }
                let length = end - starts_at;
                let score: f64 = if piece.kind == PieceType::UserDefined {
                    f64::from(length as f32 * self.max_score) - 0.1
                } else {
                    f64::from(piece.score)
                };
                let candidate = score + f64::from(till_here);
                let target = &mut best[end];
                if target.starts_at.is_none() || candidate > f64::from(target.score) {
                    target.score = candidate as f32;
                    target.starts_at = Some(starts_at);
                    target.id = id;
                }
                if length == mblen {
                    has_single_node = true;
                }
            }
            if !has_single_node {
                let candidate: f32 = unk_score + till_here;
                let target = &mut best[starts_at + mblen];
                if target.starts_at.is_none() || candidate > target.score {
                    target.score = candidate;
                    target.starts_at = Some(starts_at);
                    target.id = self.unk_id;
                }
            }
            starts_at += mblen;
        }
        let mut out = Vec::new();
        let mut ends_at = size;
        while ends_at > 0 {
            let node = best[ends_at];
            // Every end reached by the loop above has a predecessor; stop defensively.
            let Some(start) = node.starts_at else { break };
            out.push((start, ends_at, node.id));
            ends_at = start;
        }
        out.reverse();
        out
    }

    /// `SentencePieceProcessor::Decode` for ids already checked to be in range.
    fn decode(&self, ids: &[u32]) -> String {
        let mut text = String::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        let strip_bos =
            self.normalizer.add_dummy_prefix || self.normalizer.remove_extra_whitespaces;
        for &id in ids {
            let Some(piece) = self.pieces.get(id as usize) else {
                continue;
            };
            if piece.kind == PieceType::Byte {
                bytes.push(piece.byte);
                continue;
            }
            push_bytes_lossy(&mut text, &bytes);
            bytes.clear();
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            bos_ws_seen = false;
            match piece.kind {
                PieceType::Control => {}
                PieceType::Unknown => text.push_str(&self.unk_surface),
                _ => {
                    let mut s = piece.piece.as_str();
                    if is_bos_ws && strip_bos {
                        if let Some(rest) = s.strip_prefix(SPACE_SYMBOL) {
                            s = rest;
                            bos_ws_seen = !self.normalizer.remove_extra_whitespaces;
                        }
                    }
                    text.push_str(&s.replace(SPACE_SYMBOL, " "));
                }
            }
        }
        push_bytes_lossy(&mut text, &bytes);
        match &self.denormalizer {
            Some(d) => {
                let out = d.normalize(&text, &UserDefinedMatcher::default());
                String::from_utf8_lossy(&out).into_owned()
            }
            None => text,
        }
    }
}

/// Parses `<0xXX>` (two uppercase or lowercase hex digits) into its byte.
fn parse_byte_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_prefix_matches_sentencepiece() {
        assert_eq!(decode_utf8_prefix("é".as_bytes()), (2, true));
        assert_eq!(decode_utf8_prefix(&[0xE4, 0xB8]), (1, false));
        assert_eq!(decode_utf8_prefix(&[0xED, 0xA0, 0x80]), (1, false)); // surrogate
        assert_eq!(decode_utf8_prefix(&[0xC0, 0x80]), (1, false)); // overlong
        let mut s = String::new();
        push_bytes_lossy(&mut s, &[b'a', 0xE4, 0xB8, 0xE4, 0xB8, 0xAD]);
        assert_eq!(s, "a\u{FFFD}\u{FFFD}\u{4E2D}");
    }

    #[test]
    fn byte_piece_parsing() {
        assert_eq!(parse_byte_piece("<0x0A>"), Some(10));
        assert_eq!(parse_byte_piece("<0xff>"), Some(255));
        assert_eq!(parse_byte_piece("<0x1>"), None);
        assert_eq!(parse_byte_piece("0x10"), None);
    }

    #[test]
    fn garbage_is_invalid_data() {
        let err = Tokenizer::from_sentencepiece_bytes(b"\xff\xff\xff not a model").unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
        let err = Tokenizer::from_sentencepiece_bytes(b"").unwrap_err();
        assert!(matches!(err, Error::InvalidData(_)), "{err}");
    }
}
