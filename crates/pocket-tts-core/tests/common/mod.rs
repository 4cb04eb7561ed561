//! Shared helpers for the integration tests: where test assets and fixtures live.
//!
//! Each test crate includes this module with `mod common;` and uses only part of it.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository root (two levels above this crate's manifest).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `<repo>/tests/fixtures/<name>`; panics if the fixture is missing (a missing fixture
/// is a failure, never a skip).
pub fn fixture(name: &str) -> PathBuf {
    let path = repo_root().join("tests/fixtures").join(name);
    assert!(
        path.is_file(),
        "fixture {} is missing; regenerate it with scripts/reference/",
        path.display()
    );
    path
}

/// Reads and parses a JSON fixture from `<repo>/tests/fixtures/<name>`.
pub fn json_fixture(name: &str) -> serde_json::Value {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fixture {} is not valid JSON: {e}", path.display()))
}

/// Local places a test asset may be, in order: `$POCKET_TTS_ASSETS/<rel>`, then
/// `<repo>/../shared/assets/<rel>`.
pub fn local_asset_candidates(rel: &str) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("POCKET_TTS_ASSETS") {
        candidates.push(PathBuf::from(dir).join(rel));
    }
    candidates.push(repo_root().join("../shared/assets").join(rel));
    candidates
}

/// Fetches a test asset from the Hugging Face hub when it is not available locally.
///
/// Only `tokenizer.model` is published there (the same file, sha256 `d461765a…`, in
/// `kyutai/pocket-tts-without-voice-cloning`); speech recordings are not.
fn remote_asset(rel: &str) -> Option<PathBuf> {
    let spec = match rel {
        "tokenizer.model" => "hf://kyutai/pocket-tts-without-voice-cloning/tokenizer.model",
        _ => return None,
    };
    let loc = pocket_tts_core::hub::HfLocation::parse(spec).ok()??;
    match pocket_tts_core::hub::download_hub_file(&loc) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("hub fallback for {rel} failed: {e}");
            None
        }
    }
}

/// Resolves a test asset (e.g. `"tokenizer.model"`) to an existing file: first the
/// local candidates of [`local_asset_candidates`], then [`remote_asset`]. Panics with
/// the list of places it looked if none has it.
pub fn asset(rel: &str) -> PathBuf {
    let candidates = local_asset_candidates(rel);
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return found.clone();
    }
    if let Some(found) = remote_asset(rel) {
        return found;
    }
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    panic!(
        "test asset {rel:?} not found; looked in: {} and on the Hugging Face hub (set \
         POCKET_TTS_ASSETS to the folder holding it)",
        looked.join(", ")
    );
}
