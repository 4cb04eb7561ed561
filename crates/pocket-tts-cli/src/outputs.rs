//! A run's output files, checked before any work against its input files and against each
//! other: an output that is the same file as an input (the voice, the config, the weights,
//! the tokenizer) or as another output of the run would destroy it. Where and how each
//! output is then written is `pocket_tts_core::output`'s job.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use pocket_tts_core::output::{is_null_device, FileKey};

/// A file the run reads or writes, with the flag (or config field) that names it.
pub struct Named {
    /// The flag or field, e.g. `--voice`.
    pub what: String,
    /// The path as given.
    pub path: PathBuf,
}

impl Named {
    /// A file named by `what`.
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            what: what.into(),
            path: path.into(),
        }
    }
}

/// Standard output, as a file to compare outputs with (`/dev/stdout`).
pub fn stdout() -> Named {
    Named::new("stdout", "/dev/stdout")
}

/// Refuses, naming both flags, an output that resolves to the same file (device and inode,
/// after symbolic links) as an input or as an earlier output. The null device may be shared.
/// Outputs whose key cannot be computed (a missing folder) are left for the writer to report.
pub fn check_distinct(outputs: &[Named], inputs: &[Named]) -> Result<()> {
    let key = |p: &Path| FileKey::of(p).ok();
    let input_keys: Vec<(&Named, FileKey)> = inputs
        .iter()
        .filter_map(|n| key(&n.path).map(|k| (n, k)))
        .collect();
    let mut seen: Vec<(&Named, FileKey)> = Vec::new();
    for out in outputs {
        if is_null_device(&out.path) {
            continue;
        }
        let Some(k) = key(&out.path) else { continue };
        if let Some((input, _)) = input_keys.iter().find(|(_, ik)| *ik == k) {
            bail!(
                "{} {} is the same file as {} {}: writing it would destroy that input; \
                 choose another output path",
                out.what,
                out.path.display(),
                input.what,
                input.path.display()
            );
        }
        if let Some((other, _)) = seen.iter().find(|(_, ok)| *ok == k) {
            bail!(
                "{} {} and {} {} are the same file: give each output its own path",
                other.what,
                other.path.display(),
                out.what,
                out.path.display()
            );
        }
        seen.push((out, k));
    }
    Ok(())
}
