//! The output rules of `pocket_tts_core::output`: atomic replacement of regular files (mode
//! and symlinks kept), devices and FIFOs written in place, folders and sockets refused, and
//! file identity through symlinks, hard links and `..`.
#![cfg(unix)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use pocket_tts_core::output::{is_null_device, write_file, FileKey, OutputFile};
use pocket_tts_core::Error;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_regular_file_is_replaced_only_when_finished_keeping_its_mode() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("out.bin");
    fs::write(&path, b"old")?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600))?;
    let mut out = OutputFile::create(&path)?;
    assert!(out.is_seekable());
    out.write_all(b"new content")?;
    let temp = out
        .temporary_path()
        .expect("a temporary file")
        .to_path_buf();
    assert!(temp.exists());
    assert_eq!(fs::read(&path)?, b"old", "replaced before finish");
    out.finish()?;
    assert_eq!(fs::read(&path)?, b"new content");
    assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
    assert_eq!(names(dir.path()), vec!["out.bin"]);

    // Dropped unfinished: nothing changes, nothing is left.
    let mut out = OutputFile::create(&path)?;
    out.write_all(b"half")?;
    drop(out);
    assert_eq!(fs::read(&path)?, b"new content");
    assert_eq!(names(dir.path()), vec!["out.bin"]);
    Ok(())
}

#[test]
fn a_symlink_is_followed_and_kept() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let real = dir.path().join("real");
    fs::create_dir(&real)?;
    let target = real.join("t.bin");
    fs::write(&target, b"old")?;
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink(&target, &link)?;
    write_file(&link, b"new")?;
    assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
    assert_eq!(fs::read(&target)?, b"new");
    assert_eq!(names(&real), vec!["t.bin"]);
    Ok(())
}

#[test]
fn a_fifo_is_written_in_place() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("f");
    assert!(Command::new("mkfifo").arg(&fifo).status()?.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = Vec::new();
            fs::File::open(fifo).unwrap().read_to_end(&mut s).unwrap();
            s
        })
    };
    let out = OutputFile::create(&fifo)?;
    assert!(!out.is_seekable());
    assert!(out.temporary_path().is_none());
    drop(out);
    reader.join().unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = Vec::new();
            fs::File::open(fifo).unwrap().read_to_end(&mut s).unwrap();
            s
        })
    };
    write_file(&fifo, b"through the pipe")?;
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo)?.file_type().is_fifo());
    assert_eq!(names(dir.path()), vec!["f"]);
    Ok(())
}

#[test]
fn a_device_node_is_written_in_place_and_stays_a_device() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let node = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()?
        .success();
    // Non-root users cannot make device nodes; the system's null device is then safe to
    // use (such a user could not replace it).
    let node = if made {
        node
    } else {
        Path::new("/dev/null").to_path_buf()
    };
    let mut out = OutputFile::create(&node)?;
    assert!(!out.is_seekable());
    out.write_all(&[0u8; 1000])?;
    out.finish()?;
    assert!(fs::symlink_metadata(&node)?.file_type().is_char_device());
    assert!(is_null_device(&node));
    assert!(is_null_device(Path::new("/dev/null")));
    Ok(())
}

#[test]
fn folders_sockets_empty_paths_and_missing_folders_are_refused() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    assert!(matches!(
        OutputFile::create(dir.path()),
        Err(Error::InvalidArgument { .. })
    ));
    let sock = dir.path().join("s.sock");
    let _l = std::os::unix::net::UnixListener::bind(&sock)?;
    match OutputFile::create(&sock) {
        Err(Error::InvalidArgument { message: m, .. }) => assert!(m.contains("socket"), "{m}"),
        other => panic!("expected InvalidArgument, got {:?}", other.is_ok()),
    }
    assert!(matches!(
        OutputFile::create(Path::new("")),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        OutputFile::create(&dir.path().join("no/such/f")),
        Err(Error::NotFound(_))
    ));
    let locked = dir.path().join("locked.wav");
    fs::write(&locked, b"keep")?;
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o444))?;
    match OutputFile::create(&locked) {
        Err(Error::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied)
        }
        other => panic!("expected PermissionDenied, got {:?}", other.is_ok()),
    }
    assert_eq!(fs::read(&locked)?, b"keep");
    let ro = dir.path().join("ro");
    fs::create_dir(&ro)?;
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o500))?;
    // Root ignores folder permissions; only check the refusal for other users.
    if fs::write(ro.join("probe"), b"").is_err() {
        assert!(matches!(
            OutputFile::create(&ro.join("f")),
            Err(Error::Io { .. })
        ));
    }
    Ok(())
}

#[test]
fn file_keys_see_through_symlinks_hard_links_and_dot_dot() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a");
    fs::write(&a, b"x")?;
    let sub = dir.path().join("sub");
    fs::create_dir(&sub)?;
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&a, &link)?;
    let hard = dir.path().join("hard");
    fs::hard_link(&a, &hard)?;
    let key = FileKey::of(&a)?;
    assert_eq!(FileKey::of(&link)?, key);
    assert_eq!(FileKey::of(&hard)?, key);
    assert_eq!(FileKey::of(&sub.join("..").join("a"))?, key);
    assert_ne!(FileKey::of(&sub)?, key);
    // Files not yet made: the same place gives the same key.
    let new1 = FileKey::of(&dir.path().join("new"))?;
    let new2 = FileKey::of(&sub.join("..").join("new"))?;
    assert_eq!(new1, new2);
    assert_ne!(new1, FileKey::of(&sub.join("new"))?);
    assert!(!is_null_device(&a));
    Ok(())
}
