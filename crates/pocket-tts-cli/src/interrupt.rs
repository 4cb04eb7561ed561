//! SIGINT and SIGTERM: remove the temporary files of unfinished outputs and exit with the
//! conventional status (130, 143), so that Ctrl-C never leaves a hidden `.NAME.XXXX.tmp` or
//! a destination half replaced.

/// Starts a thread that waits for SIGINT or SIGTERM; on either, it removes every temporary
/// output file (`pocket_tts_core::output::abandon_temporary_files`: no output is renamed into
/// place after it), says so on stderr and exits with 128 + the signal number. A failure to
/// install the handlers is logged and ignored (the default action, exiting, remains).
pub fn install() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot install the SIGINT/SIGTERM handlers: {e}");
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("pocket-tts-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    let removed = pocket_tts_core::output::abandon_temporary_files();
                    let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                    eprintln!(
                        "interrupted ({name}): stopped{}",
                        if removed > 0 {
                            "; the unfinished output was removed and no file was replaced"
                        } else {
                            ""
                        }
                    );
                    std::process::exit(128 + sig);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the signal thread: {e}");
        }
    }
}
