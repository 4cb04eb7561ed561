//! Replays the fuzz corpora (`fuzz/corpus/<target>/`) and every input that ever crashed a
//! fuzz target (`fuzz/regressions/<target>/`) through the targets' bodies, on stable Rust:
//! a crash found by `cargo fuzz` stays fixed. The bodies are `fuzz/src/lib.rs`, compiled
//! here as a module.

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod targets;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Runs `body` on every file of the target's corpus and regressions; both folders must exist
/// and the corpus must not be empty (a missing folder fails, it is not skipped).
fn replay(target: &str, body: fn(&[u8])) {
    let mut count = 0;
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("the {kind} folder {} is missing: {e}", dir.display()));
        // Dot files (`.gitkeep`) keep empty folders in git; they are not inputs.
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{target}: {} panicked", file.display());
            count += 1;
        }
    }
    assert!(count > 0, "{target}: no corpus inputs");
}

#[test]
fn voice_state_corpus() {
    replay("voice_state", targets::voice_state);
}

#[test]
fn config_corpus() {
    replay("config", targets::config);
}

#[test]
fn tokenizer_corpus() {
    replay("tokenizer", targets::tokenizer);
}

#[test]
fn tokenizer_model_corpus() {
    replay("tokenizer_model", targets::tokenizer_model);
}

#[test]
fn text_corpus() {
    replay("text", targets::text);
}

#[test]
fn audio_corpus() {
    replay("audio", targets::audio);
}
