//! [`pocket_tts_core::Error`] classes as the Python exceptions the reference documents
//! (`TTSModel.load_model`, `get_state_for_audio_prompt`, `generate_audio`): a missing file
//! is `FileNotFoundError`, bad text, arguments or file contents are `ValueError`, a
//! failure of the model is `RuntimeError`. The message is the core's one line, with the
//! core's parameter names replaced by the Python keyword arguments.

use pocket_tts_core::Error;
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyRuntimeError, PyValueError,
};
use pyo3::PyErr;

/// The keyword argument of `pocket_tts_rs.TTSModel` that sets a
/// [`pocket_tts_core::GenerationParams`] field (reference names: `temp` for the
/// temperature).
fn python_name(field: &str) -> &str {
    match field {
        "temperature" => "temp",
        other => other,
    }
}

/// The Python exception for a core error.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::NotFound(m) => PyFileNotFoundError::new_err(m),
        Error::InvalidArgument {
            field: Some(field),
            message,
        } => PyValueError::new_err(format!("{}: {message}", python_name(field))),
        Error::InvalidArgument {
            field: None,
            message,
        } => PyValueError::new_err(message),
        e @ (Error::InvalidData(_) | Error::Unsupported(_) | Error::WeightOutOfRange { .. }) => {
            PyValueError::new_err(e.to_string())
        }
        Error::Io { path, source } => {
            let msg = format!("{}: {source}", path.display());
            match source.kind() {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
                _ => PyOSError::new_err(msg),
            }
        }
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// `Result<T, Error>` → `PyResult<T>`.
pub trait IntoPy<T> {
    /// Maps the error with [`to_py`].
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for pocket_tts_core::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
