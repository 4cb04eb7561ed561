//! Loading helpers for [`Tokenizer::from_file`](super::Tokenizer::from_file): which
//! backend a tokenizer file gets (suffix, then the config's `kind`, then content)
//! and the Hugging Face `tokenizer.json` parse.
//!
//! reference: modules/text_conditioner.py of pocket-tts 4.0.1 (`build_tokenizer`,
//! `JsonTokenizer.__init__`).

use std::path::Path;

use super::TokenizerKind;
use crate::{Error, Result};

/// Picks the backend: file suffix first, then the config's `kind`, then content.
pub(super) fn resolve_kind(path: &Path, kind: &str, bytes: &[u8]) -> Result<TokenizerKind> {
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

pub(super) fn parse_json(bytes: &[u8], origin: &str) -> Result<tokenizers::Tokenizer> {
    tokenizers::Tokenizer::from_bytes(bytes)
        .map_err(|e| Error::InvalidData(format!("{origin}: not a valid tokenizer.json: {e}")))
}
