//! `output::abandon_temporary_files` (what the CLI calls on SIGINT/SIGTERM): every unfinished
//! output's temporary file is removed and no destination is replaced afterwards. Its own test
//! binary, since the abandonment is process-wide.

use std::fs;
use std::io::Write;

use pocket_tts_core::output::{abandon_temporary_files, OutputFile};
use pocket_tts_core::Error;

#[test]
fn abandoning_removes_temporary_files_and_blocks_later_renames() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a.wav");
    let b = dir.path().join("b.json");
    fs::write(&a, b"previous")?;
    let mut out_a = OutputFile::create(&a)?;
    out_a.write_all(b"partial")?;
    let out_b = OutputFile::create(&b)?;
    assert_eq!(fs::read_dir(dir.path())?.count(), 3);
    assert_eq!(abandon_temporary_files(), 2);
    assert_eq!(fs::read_dir(dir.path())?.count(), 1, "temporary files left");
    match out_a.finish() {
        Err(Error::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::Interrupted)
        }
        other => panic!("expected an interrupted finish, got {other:?}"),
    }
    drop(out_b);
    assert_eq!(fs::read(&a)?, b"previous");
    assert!(!b.exists());
    Ok(())
}
