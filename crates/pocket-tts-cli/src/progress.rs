//! The progress bar of long generations, and a log writer that keeps it intact.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// The bar on screen, if any: log lines are printed above it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Texts whose longest possible audio is at least this many frames (10 s at 12.5 Hz) get
/// a progress bar.
const MIN_FRAMES: usize = 125;

/// A progress bar on stderr: frames generated out of the most the text allows
/// (`max_frames`; EOS usually comes earlier), and seconds of audio. `None` with `-q`,
/// for short texts, and when stderr is not a terminal.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(max_frames: usize, frame_seconds: f64, quiet: bool) -> Self {
        if quiet || max_frames < MIN_FRAMES || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} frames (at most), {audio} of audio",
        ) else {
            return Self(None);
        };
        let style = style.with_key(
            "audio",
            move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} s", state.pos() as f64 * frame_seconds);
            },
        );
        let bar =
            ProgressBar::with_draw_target(Some(max_frames as u64), ProgressDrawTarget::stderr())
                .with_style(style);
        if let Ok(mut active) = ACTIVE.lock() {
            *active = Some(bar.clone());
        }
        Self(Some(bar))
    }

    /// One more frame.
    pub fn inc(&self) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            if let Ok(mut active) = ACTIVE.lock() {
                *active = None;
            }
            bar.finish_and_clear();
        }
    }
}

/// Makes the log's writers: each log line goes to stderr whole, above the progress bar
/// when one is shown.
pub struct LogWriter;

/// One log line, written when dropped.
pub struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let write = || {
            let _ = std::io::stderr().lock().write_all(&self.0);
        };
        let bar = ACTIVE.lock().ok().and_then(|a| a.clone());
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogLine;

    fn make_writer(&'a self) -> LogLine {
        LogLine(Vec::new())
    }
}
