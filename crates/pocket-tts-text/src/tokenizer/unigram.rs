//! Encoding with the Unigram model: the optimized Viterbi search over the normalized
//! bytes, with the exact mixed `float`/`double` arithmetic of the C++ so that ties
//! break the same way, then byte-fallback pieces for unknown characters or one merged
//! unknown id per run.
//!
//! reference: SentencePiece `src/unigram_model.cc` (`Model::EncodeOptimized`) and
//! `src/sentencepiece_processor.cc` (`Encode`, `PopulateSentencePieceText`), as
//! called by `SentencePieceTokenizer.encode` in modules/text_conditioner.py
//! (pocket-tts 4.0.1).

use super::model::{PieceType, SentencePieceModel};
use super::utf8::one_char_len;

/// `kUnkPenalty` of `unigram_model.cc`: the unknown piece scores `min_score - 10`.
const UNK_PENALTY: f32 = 10.0;

impl SentencePieceModel {
    /// `SentencePieceProcessor::Encode` → ids.
    pub(super) fn encode(&self, text: &str) -> Vec<u32> {
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
}
