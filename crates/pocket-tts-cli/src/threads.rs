//! `--threads`: generation threads and the Candle (rayon) thread count.

use anyhow::{bail, Result};
use clap::Args;
use pocket_tts_core::tts_model::default_threads;

/// The `--threads` flag.
#[derive(Args, Debug, Clone)]
pub struct ThreadsArgs {
    /// Threads: 1 runs the FlowLM and the Mimi decoder one after the other; 2 or more
    /// overlaps them on two threads. Also the number of threads of Candle's tensor
    /// operations (RAYON_NUM_THREADS). Default: 2, or 1 on a single-CPU machine; never more
    /// than the CPUs available to the process.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// CPUs available to the process (hardware threads, within its affinity mask and quota).
fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl ThreadsArgs {
    /// Checks `--threads` and returns the thread count to use (capped at the CPUs
    /// available).
    pub fn resolve(&self) -> Result<usize> {
        let available = available();
        match self.threads {
            None => Ok(default_threads().min(available)),
            Some(0) => bail!("--threads 0: use at least 1 thread (e.g. --threads 1)"),
            Some(n) if n > available => {
                tracing::warn!(
                    "--threads {n}: only {available} CPUs are available to this process; using {available}"
                );
                Ok(available)
            }
            Some(n) => Ok(n),
        }
    }

    /// Checks `--threads` and sets the thread count of Candle's tensor operations
    /// (`RAYON_NUM_THREADS`, read by Candle's matrix products and when rayon's global pool
    /// starts). Must run before the first Candle operation. Without `--threads`, a
    /// `RAYON_NUM_THREADS` already in the environment is kept. Returns the thread count.
    pub fn configure(&self) -> Result<usize> {
        let n = self.resolve()?;
        if self.threads.is_some() || std::env::var_os("RAYON_NUM_THREADS").is_none() {
            // Single-threaded here: called at start-up, before any thread is spawned.
            std::env::set_var("RAYON_NUM_THREADS", n.to_string());
        }
        Ok(n)
    }
}
