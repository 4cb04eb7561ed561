//! Shared helpers for the text crate's integration tests: where the fixtures and the
//! committed tokenizer live (read in place, never copied: the reference's fixtures under
//! `<repo>/tests/fixtures`, `tokenizer.model` under the core crate's
//! `tests/fixtures/assets` with its provenance README).
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

/// A committed test asset of the core crate (`tokenizer.model`: a copy of
/// `../shared/assets` with its provenance in
/// `crates/pocket-tts-core/tests/fixtures/assets/README.md`), so that the tests run offline
/// on a fresh clone. A missing asset is a failure, never a skip.
pub fn asset(rel: &str) -> PathBuf {
    let path = repo_root()
        .join("crates/pocket-tts-core/tests/fixtures/assets")
        .join(rel);
    assert!(
        path.is_file(),
        "test asset {} is missing (it is committed; restore it from ../shared/assets)",
        path.display()
    );
    path
}
