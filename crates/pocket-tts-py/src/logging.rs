//! The core's log records (its `tracing` events, emitted as `log` records when no
//! `tracing` subscriber is set) go to Python's `logging`, logger `pocket_tts_rs`, so that a
//! Python program configures them like any library's: quiet unless it asks (a library
//! adds no handler; Python's last-resort handler prints warnings and errors only).
//!
//! A record is forwarded only when that logger is enabled for its level, checked each time
//! (the program may change levels at any time); records of other crates than ours are
//! dropped. When the interpreter is shutting down, records are dropped.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The Python logger every record goes to.
pub const LOGGER: &str = "pocket_tts_rs";

static PY_LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

struct Bridge;

/// Python's `logging` level of a `log` level.
fn python_level(level: log::Level) -> u32 {
    match level {
        log::Level::Error => 40,
        log::Level::Warn => 30,
        log::Level::Info => 20,
        log::Level::Debug | log::Level::Trace => 10,
    }
}

/// Whether a record comes from this project's crates.
fn ours(target: &str) -> bool {
    target.starts_with("pocket_tts")
}

impl log::Log for Bridge {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        ours(metadata.target())
    }

    fn log(&self, record: &log::Record<'_>) {
        if !ours(record.target()) {
            return;
        }
        let level = python_level(record.level());
        let message = record.args().to_string();
        let target = record.target().to_string();
        // `try_attach` refuses while the interpreter finalizes: the record is dropped.
        let _ = Python::try_attach(|py| -> PyResult<()> {
            let Some(logger) = PY_LOGGER.get(py) else {
                return Ok(());
            };
            let logger = logger.bind(py);
            if logger.call_method1("isEnabledFor", (level,))?.is_truthy()? {
                let extra = pyo3::types::PyDict::new(py);
                extra.set_item("rust_target", target)?;
                let kwargs = pyo3::types::PyDict::new(py);
                kwargs.set_item("extra", extra)?;
                logger.call_method("log", (level, "%s", message), Some(&kwargs))?;
            }
            Ok(())
        });
    }

    fn flush(&self) {}
}

static BRIDGE: Bridge = Bridge;

/// Gets the `pocket_tts_rs` logger and installs the bridge as the process's `log` logger
/// (once; if another extension installed its own first, ours stays off).
pub fn install(py: Python<'_>) -> PyResult<()> {
    let logger = py
        .import("logging")?
        .call_method1("getLogger", (LOGGER,))?
        .unbind();
    let _ = PY_LOGGER.set(py, logger);
    if log::set_logger(&BRIDGE).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    Ok(())
}
