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
    /// A value given by the caller is out of range or malformed (text, a path, a
    /// parameter). `field` names the parameter when there is one (a field of
    /// [`GenerationParams`](crate::GenerationParams) or
    /// [`EngineOptions`](crate::EngineOptions), e.g. `"max_tokens"`), so that a caller can
    /// name it in its own terms (the CLI maps it to its flag); `message` says what is wrong
    /// with it and what is accepted.
    #[error("invalid argument: {}{message}", field.map(|f| format!("{f} ")).unwrap_or_default())]
    InvalidArgument {
        /// The parameter at fault, by its field name; `None` for a text, a path or a value
        /// that is not a named parameter.
        field: Option<&'static str>,
        /// What is wrong and what would be accepted (without the field name).
        message: String,
    },
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
    /// A checkpoint weight cannot be stored in the weight dtype asked for: a value beyond
    /// float16's range (65504) with `flow_lm.dtype: float16`. Store the model as bfloat16
    /// or float32 instead.
    #[error(
        "{tensor} holds {value}, outside the {dtype} range (largest 65504): store this \
         model's weights as bfloat16 or float32 (dtype)"
    )]
    WeightOutOfRange {
        /// The checkpoint tensor, e.g. `flow_lm.transformer.layers.0.linear1.weight`.
        tensor: String,
        /// The first value found out of range.
        value: f32,
        /// The dtype asked for, by its config name (`"float16"`).
        dtype: &'static str,
    },
    /// A checkpoint whose safetensors metadata names a format (`format`) or a version of
    /// it that this build does not know, e.g. a pre-quantized checkpoint of a newer
    /// `export-model`: its tensors cannot be read as this build would read them. Use a
    /// build that knows the format, or export the checkpoint again with this one.
    #[error(
        "checkpoint {path}: unknown format {format}: this build reads the reference's \
         checkpoints and its own pre-quantized ones (pocket-tts-rs-quantized version 1, \
         int8 or q4); export the checkpoint again with this version (pocket-tts-cli \
         export-model) or use the original one",
        path = path.display()
    )]
    CheckpointFormat {
        /// The checkpoint.
        path: PathBuf,
        /// The format its metadata names (`format`, `format_version`, `quantization`).
        format: String,
    },
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
    /// An error inside a tensor operation (a bug or an inconsistent model). The tensor
    /// library's own error is its [`std::error::Error::source`].
    #[error("tensor error: {0}")]
    Tensor(TensorError),
}

/// The error of a tensor operation, opaque: its message, and the tensor library's error as
/// its [`std::error::Error::source`] (the library, Candle, is not part of this API).
#[derive(Debug)]
pub struct TensorError(candle_core::Error);

impl std::fmt::Display for TensorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TensorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl TensorError {
    /// The Candle error, for this crate's code that wraps it again.
    pub(crate) fn into_candle(self) -> candle_core::Error {
        self.0
    }
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl From<candle_core::Error> for Error {
    /// A Candle error; one of ours that crossed a Candle API (a module's loader returns
    /// `candle_core::Result`, so it travels inside [`candle_core::Error::WrappedContext`],
    /// see `Error::into_candle`) comes back as itself, its failure class intact.
    fn from(e: candle_core::Error) -> Self {
        match ours_inside(e) {
            Ok(ours) => ours,
            Err(candle) => Error::Tensor(TensorError(candle)),
        }
    }
}

/// Unwraps one of our errors carried by `e` through Candle's wrappers (context, path,
/// backtrace); gives `e` back unchanged if it carries none.
fn ours_inside(e: candle_core::Error) -> std::result::Result<Error, candle_core::Error> {
    use candle_core::Error as C;
    match e {
        C::WrappedContext { wrapped, context } => match wrapped.downcast::<Error>() {
            Ok(ours) => Ok(*ours),
            Err(wrapped) => Err(C::WrappedContext { wrapped, context }),
        },
        C::WithBacktrace { inner, backtrace } => {
            ours_inside(*inner).map_err(|inner| C::WithBacktrace {
                inner: Box::new(inner),
                backtrace,
            })
        }
        C::Context { inner, context } => ours_inside(*inner).map_err(|inner| C::Context {
            inner: Box::new(inner),
            context,
        }),
        C::WithPath { inner, path } => ours_inside(*inner).map_err(|inner| C::WithPath {
            inner: Box::new(inner),
            path,
        }),
        other => Err(other),
    }
}

impl From<pocket_tts_text::Error> for Error {
    /// Each failure class of the text crate is the core class of the same name (a
    /// tokenizer file that does not exist is [`Error::NotFound`], a malformed pause tag
    /// [`Error::InvalidArgument`], …), with the same message.
    fn from(e: pocket_tts_text::Error) -> Self {
        use pocket_tts_text::Error as Text;
        match e {
            Text::NotFound(m) => Error::NotFound(m),
            Text::InvalidArgument(m) => Error::invalid_argument(m),
            Text::Unsupported(m) => Error::Unsupported(m),
            Text::InvalidData(m) => Error::InvalidData(m),
            Text::Io { path, source } => Error::Io { path, source },
            // A class added to the text crate and not mapped here yet.
            other => Error::Internal(format!("text pipeline: {other}")),
        }
    }
}

impl Error {
    /// [`Error::InvalidArgument`] about a value that is not a named parameter (a text, a
    /// path): `message` says what is wrong.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            field: None,
            message: message.into(),
        }
    }

    /// [`Error::InvalidArgument`] about the parameter `field` (its field name):
    /// `message` says what is wrong, without repeating the name.
    pub fn invalid_field(field: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            field: Some(field),
            message: message.into(),
        }
    }

    /// This error as a [`candle_core::Error`], for code that must return Candle's type (a
    /// module loader); `Error::from` turns it back into this error, variant and all.
    pub(crate) fn into_candle(self) -> candle_core::Error {
        candle_core::Error::WrappedContext {
            wrapped: Box::new(self),
            context: String::new(),
        }
    }

    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
