//! Decoding ids back to text: control pieces are invisible, the unknown piece becomes
//! `unk_surface`, the first `U+2581` of the text is dropped, runs of byte pieces are
//! reassembled into UTF-8, and the optional denormalizer runs last.
//!
//! reference: SentencePiece `src/sentencepiece_processor.cc`
//! (`SentencePieceProcessor::Decode`), as called by `SentencePieceTokenizer.decode` in
//! modules/text_conditioner.py (pocket-tts 4.0.1).

use super::model::{PieceType, SentencePieceModel};
use super::normalizer::{UserDefinedMatcher, SPACE_SYMBOL};
use super::utf8::push_bytes_lossy;

impl SentencePieceModel {
    /// `SentencePieceProcessor::Decode` for ids already checked to be in range.
    pub(super) fn decode(&self, ids: &[u32]) -> String {
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
