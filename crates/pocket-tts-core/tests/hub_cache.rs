//! `pocket_tts_core::hub` against a local hub cache made by the test (`HF_HOME`), offline:
//! cached files resolve by branch and by commit, relative paths against a base folder,
//! `resolve_cached` never downloads, `HF_HUB_OFFLINE` refuses what is not cached, and a hub
//! that cannot be reached gives `NotFound` naming the location and what to do.
//!
//! One test function: the environment is process-wide.

use std::fs;
use std::path::Path;

use pocket_tts_core::hub::{
    cached_hub_file, download_hub_file, hub_offline, resolve, resolve_cached, HfLocation,
};
use pocket_tts_core::Error;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn make_cache(home: &Path) -> std::path::PathBuf {
    let repo = home.join("hub/models--kyutai--pocket-tts");
    let snap = repo
        .join("snapshots")
        .join(COMMIT)
        .join("languages/english");
    fs::create_dir_all(&snap).unwrap();
    fs::create_dir_all(repo.join("refs")).unwrap();
    fs::write(repo.join("refs/main"), format!("{COMMIT}\n")).unwrap();
    let file = snap.join("model.safetensors");
    fs::write(&file, b"weights").unwrap();
    file
}

#[test]
fn hub_resolution_from_a_local_cache() {
    let home = tempfile::tempdir().unwrap();
    let file = make_cache(home.path());
    std::env::set_var("HF_HOME", home.path());
    // An endpoint nothing listens on: any download attempt fails at once.
    std::env::set_var("HF_ENDPOINT", "http://127.0.0.1:9");
    std::env::remove_var("HF_HUB_OFFLINE");
    std::env::set_var("HF_TOKEN", "");

    let spec = "hf://kyutai/pocket-tts/languages/english/model.safetensors";
    let loc = HfLocation::parse(spec).unwrap().unwrap();
    assert_eq!(
        cached_hub_file(&loc),
        Some(file.clone()),
        "by branch (refs/main)"
    );
    let by_commit = HfLocation::parse(&format!("{spec}@{COMMIT}"))
        .unwrap()
        .unwrap();
    assert_eq!(cached_hub_file(&by_commit), Some(file.clone()), "by commit");
    assert_eq!(resolve(spec, None).unwrap(), file);
    assert_eq!(resolve_cached(spec, None), Some(file.clone()));
    assert_eq!(
        download_hub_file(&loc).unwrap(),
        file,
        "cached: no download"
    );

    // Not cached: resolve_cached says so without a download; an unknown branch too.
    let missing = "hf://kyutai/pocket-tts/languages/french/model.safetensors";
    assert_eq!(resolve_cached(missing, None), None);
    assert_eq!(resolve_cached(&format!("{spec}@v2"), None), None);
    assert_eq!(resolve_cached("hf://bad", None), None, "malformed");

    // Not cached and the hub unreachable: NotFound naming the location and the way out.
    match resolve(missing, None) {
        Err(Error::NotFound(m)) => {
            assert!(m.contains(missing) && m.contains("local file"), "{m}")
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    // Offline: refused without trying, naming the cache.
    std::env::set_var("HF_HUB_OFFLINE", "1");
    assert!(hub_offline());
    match resolve(missing, None) {
        Err(Error::NotFound(m)) => assert!(m.contains("HF_HUB_OFFLINE"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(
        resolve(spec, None).unwrap(),
        file,
        "cached files still resolve offline"
    );
    std::env::set_var("HF_HUB_OFFLINE", "off");
    assert!(!hub_offline());

    // Local paths: relative to the base folder first, then as given.
    let base = tempfile::tempdir().unwrap();
    fs::write(base.path().join("tok.model"), b"t").unwrap();
    assert_eq!(
        resolve("tok.model", Some(base.path())).unwrap(),
        base.path().join("tok.model")
    );
    assert_eq!(
        resolve_cached("tok.model", Some(base.path())),
        Some(base.path().join("tok.model"))
    );
    assert_eq!(resolve_cached("no-such.model", Some(base.path())), None);
    match resolve("no-such.model", Some(base.path())) {
        Err(Error::NotFound(m)) => assert!(m.contains("no-such.model"), "{m}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    match resolve("https://example.com/model.safetensors", None) {
        Err(Error::Unsupported(m)) => assert!(m.contains("plain URLs"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert!(matches!(
        HfLocation::parse("hf://only/two"),
        Err(Error::InvalidArgument { .. })
    ));
}
