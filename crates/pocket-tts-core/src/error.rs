//! The library's error type: one variant per failure class, so callers (and tests)
//! can match on what went wrong rather than on message text.

use std::path::PathBuf;

/// Errors returned by `pocket-tts-core`.
///
/// Variants are failure classes. Each carries a message that names the file,
/// tensor, flag or value at fault and, where possible, says what to do.
///
/// The enum is `#[non_exhaustive]`: match it with a wildcard arm, new failure classes may
/// be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file, hub repository, voice or tensor that was asked for does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A value given by the caller is out of range or malformed (text, flag, path).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The request is well-formed but not supported by this build or model
    /// (an unknown flow type, a feature the checkpoint lacks).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A file was read but its content is wrong: corrupt audio, a checkpoint with a
    /// missing or mis-shaped tensor, a config with unknown fields.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// The request is valid but cannot be taken now: every stream of the batched engine
    /// is busy and its queue is full. Retry later (a server answers 429 / 503).
    #[error("busy: {0}")]
    Busy(String),
    /// An I/O error on a named path.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory being read or written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A failure inside the library that the caller cannot fix (a worker thread's panic, a
    /// broken invariant): a bug to report.
    #[error("internal error: {0}")]
    Internal(String),
    /// An error inside a tensor operation (a bug or an inconsistent model).
    #[error("tensor error: {0}")]
    Candle(#[from] candle_core::Error),
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl From<pocket_tts_text::Error> for Error {
    /// Each failure class of the text crate is the core class of the same name (a
    /// tokenizer file that does not exist is [`Error::NotFound`], a malformed pause tag
    /// [`Error::InvalidArgument`], …), with the same message.
    fn from(e: pocket_tts_text::Error) -> Self {
        use pocket_tts_text::Error as Text;
        match e {
            Text::NotFound(m) => Error::NotFound(m),
            Text::InvalidArgument(m) => Error::InvalidArgument(m),
            Text::Unsupported(m) => Error::Unsupported(m),
            Text::InvalidData(m) => Error::InvalidData(m),
            Text::Io { path, source } => Error::Io { path, source },
            // A class added to the text crate and not mapped here yet.
            other => Error::Internal(format!("text pipeline: {other}")),
        }
    }
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
