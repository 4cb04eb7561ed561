//! The SentencePiece Unigram model: the piece table read from a `ModelProto` and
//! validated on load (piece types, one unknown piece, no duplicates, well-formed byte
//! pieces, Unigram only), with the lookup structures the encoder uses.
//!
//! reference: SentencePiece `src/sentencepiece_processor.cc` (`Load`),
//! `src/model_interface.cc` (`InitializePieces`) and `src/unigram_model.cc`
//! (min/max scores); the model bytes are those modules/text_conditioner.py
//! (pocket-tts 4.0.1) loads in `SentencePieceTokenizer`.

use std::collections::HashMap;

use super::normalizer::{Normalizer, UserDefinedMatcher};
use super::proto;
use crate::{Error, Result};

/// `kDefaultUnknownSymbol` of `sentencepiece_processor.cc`.
const DEFAULT_UNK_SURFACE: &str = " \u{2047} ";
/// `TrainerSpec.ModelType.UNIGRAM`.
const MODEL_TYPE_UNIGRAM: i32 = 1;

/// SentencePiece piece types (`ModelProto.SentencePiece.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

#[derive(Debug, Clone)]
pub(super) struct Piece {
    pub(super) piece: String,
    pub(super) score: f32,
    pub(super) kind: PieceType,
    /// For byte pieces, the byte value of `<0xXX>`.
    pub(super) byte: u8,
}

/// A loaded SentencePiece Unigram model.
#[derive(Debug, Clone)]
pub(super) struct SentencePieceModel {
    pub(super) pieces: Vec<Piece>,
    /// NORMAL, USER_DEFINED and UNUSED pieces: the Viterbi trie of `unigram_model.cc`.
    pub(super) trie: HashMap<Vec<u8>, u32>,
    pub(super) max_piece_len: usize,
    /// `PieceToId` for each `<0xXX>` (unknown id if the model lacks it).
    pub(super) byte_ids: [u32; 256],
    pub(super) unk_id: u32,
    pub(super) min_score: f32,
    pub(super) max_score: f32,
    pub(super) byte_fallback: bool,
    pub(super) unk_surface: String,
    pub(super) normalizer: Normalizer,
    pub(super) denormalizer: Option<Normalizer>,
    pub(super) user_defined: UserDefinedMatcher,
}

impl SentencePieceModel {
    /// Parses and validates a `ModelProto` like `SentencePieceProcessor::Load` and
    /// `ModelInterface::InitializePieces` do.
    pub(super) fn parse(bytes: &[u8], origin: &str) -> Result<SentencePieceModel> {
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
    fn byte_piece_parsing() {
        assert_eq!(parse_byte_piece("<0x0A>"), Some(10));
        assert_eq!(parse_byte_piece("<0xff>"), Some(255));
        assert_eq!(parse_byte_piece("<0x1>"), None);
        assert_eq!(parse_byte_piece("0x10"), None);
    }
}
