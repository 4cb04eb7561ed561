//! The server's errors: [`ServerError`], why it cannot start (public), and
//! [`RequestError`], why a request failed, whatever the protocol (internal: the HTTP layer
//! maps its [`ErrorKind`] to a status and the reference's or OpenAI's JSON shape, the
//! Wyoming layer to the `code` of an `error` event).

use std::path::PathBuf;

use pocket_tts_core::Error as CoreError;

/// Which listener a [`ServerError::Bind`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The HTTP listener ([`crate::ServerOptions::port`]).
    Http,
    /// The Wyoming listener ([`crate::ServerOptions::wyoming_port`]).
    Wyoming,
}

impl std::fmt::Display for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Listener::Http => "HTTP",
            Listener::Wyoming => "Wyoming",
        })
    }
}

/// Why the server, or its voices, cannot start. Messages name the option (its field
/// name) or the file; a program with its own names for them (command-line flags) matches
/// on the variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// An option out of range or malformed ([`crate::ServerOptions::validate`]).
    #[error("{option}: {message}")]
    InvalidOption {
        /// The field of [`crate::ServerOptions`] (or of its [`crate::Limits`]).
        option: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// A listener cannot be bound (address in use, not an address of this machine, a
    /// host name that does not resolve).
    #[error("{listener} listener on {host} port {port}: cannot listen there")]
    Bind {
        /// Which listener.
        listener: Listener,
        /// The host asked for.
        host: String,
        /// The port asked for.
        port: u16,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The default voice cannot be loaded.
    #[error("default voice {voice}")]
    DefaultVoice {
        /// The voice as given (a predefined name, a path, `hf://…`).
        voice: String,
        /// Why.
        #[source]
        source: CoreError,
    },
    /// The voices folder cannot be read, holds no voice, or one of its files cannot be a
    /// voice.
    #[error("voices folder {}: {problem}", dir.display())]
    VoicesDir {
        /// The folder.
        dir: PathBuf,
        /// What is wrong, naming the file at fault if one is.
        problem: String,
        /// The underlying error, if any (reading the folder, loading a voice).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The async runtime cannot start, or the HTTP server failed while serving.
    #[error("{what}")]
    Io {
        /// What failed.
        what: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The failure class of a [`RequestError`]: what the HTTP status and the Wyoming error
/// code are chosen from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The request is malformed or names something unusable (HTTP 400).
    BadRequest,
    /// No such route (HTTP 404).
    NotFound,
    /// The request is over a size limit (HTTP 413).
    TooLarge,
    /// The name is taken (HTTP 409).
    Conflict,
    /// The request lacks the API key, or has a wrong one (HTTP 401).
    Unauthorized,
    /// Every stream slot is taken and the queue is full (HTTP 429).
    Busy,
    /// The server failed (HTTP 500).
    Internal,
}

impl ErrorKind {
    /// Whether the client is at fault (it should change the request, not retry it).
    pub(crate) fn is_client_error(self) -> bool {
        !matches!(self, ErrorKind::Busy | ErrorKind::Internal)
    }

    /// A short name, for logs.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorKind::BadRequest => "bad request",
            ErrorKind::NotFound => "not found",
            ErrorKind::TooLarge => "too large",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Busy => "busy",
            ErrorKind::Internal => "internal",
        }
    }
}

/// A failed request: its failure class, a message naming the field or value at fault and
/// saying what to do, and the field (`param` in OpenAI's shape).
#[derive(Debug, Clone)]
pub(crate) struct RequestError {
    /// The failure class.
    pub kind: ErrorKind,
    /// What went wrong and what to do.
    pub message: String,
    /// The request field at fault, if one is.
    pub param: Option<&'static str>,
}

impl RequestError {
    /// A [`ErrorKind::BadRequest`] naming `param`.
    pub fn bad_request(param: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::BadRequest,
            message: message.into(),
            param: Some(param),
        }
    }

    /// An error of `kind` with no field.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            param: None,
        }
    }

    /// The error with `param` as the field at fault.
    pub fn with_param(mut self, param: &'static str) -> Self {
        self.param = Some(param);
        self
    }

    /// A core error met while serving `param` (a voice or the text): the caller's fault
    /// for bad input, busy, else the server's (logged).
    pub fn from_core(param: &'static str, e: &CoreError) -> Self {
        let kind = match e {
            CoreError::InvalidArgument { .. }
            | CoreError::InvalidData(_)
            | CoreError::NotFound(_)
            | CoreError::Unsupported(_) => ErrorKind::BadRequest,
            CoreError::Busy(_) => ErrorKind::Busy,
            _ => ErrorKind::Internal,
        };
        let message = if kind == ErrorKind::Internal {
            tracing::error!("{param}: {e}");
            format!("{param}: the server failed ({e}); see its log")
        } else {
            format!("{param}: {e}")
        };
        Self {
            kind,
            message,
            param: Some(param),
        }
    }
}

/// `n` bytes in MiB, for messages.
pub(crate) fn mib(n: usize) -> String {
    format!("{:.0} MiB", n as f64 / (1024.0 * 1024.0))
}
