//! The text crate's error type: one variant per failure class, so callers (and tests) can
//! match on what went wrong rather than on message text. `pocket-tts-core` maps each
//! variant to its own class of the same name (`From<pocket_tts_text::Error>`).

use std::path::PathBuf;

/// Errors returned by `pocket-tts-text`.
///
/// Variants are failure classes. Each carries a message that names the file, setting or
/// value at fault and, where possible, says what to do.
///
/// The enum is `#[non_exhaustive]`: match it with a wildcard arm, new failure classes may
/// be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file that was asked for does not exist (a tokenizer file).
    #[error("not found: {0}")]
    NotFound(String),
    /// A value given by the caller is out of range or malformed: a text with nothing to
    /// speak, a malformed pause tag, an unknown language or tokenizer kind, a token id
    /// outside the vocabulary.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The input is well-formed but not supported (a SentencePiece model that is not
    /// Unigram).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A file or setting was read but its content is wrong: a corrupt tokenizer file, a
    /// `replace_characters` key that is not one character, an unknown config `language`.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// An I/O error on a named path.
    #[error("{path}: {source}")]
    Io {
        /// The file being read.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
