//! Where output files go: the one set of rules every file this project writes follows (WAV
//! files, voice states, the CLI's statistics).
//!
//! - A destination that does not exist, or is a regular file, is **replaced atomically**: the
//!   bytes go to a hidden temporary file in the same folder (`.NAME.XXXXXX.tmp`), which
//!   [`OutputFile::finish`] syncs and renames onto it. A symbolic link is followed: the file
//!   it points to is replaced and the link stays. An existing file keeps its permissions (and,
//!   where the process may, its owner). Until `finish` the destination keeps its old content;
//!   a failure, a drop or [`abandon_temporary_files`] removes the temporary file.
//! - A destination that exists and is not a regular file (a character or block device such as
//!   `/dev/null`, a FIFO, a terminal, `/dev/stdout`) is **opened and written in place**, never
//!   renamed over: replacing `/dev/null` with a regular file would break the system. Such an
//!   output is not seekable ([`OutputFile::is_seekable`]), so a WAV written to it carries the
//!   header of an unseekable stream.
//! - A folder or a socket is refused with [`Error::InvalidArgument`], a read-only regular file
//!   (no write permission bit at all) with [`Error::Io`] (`PermissionDenied`), as writing it
//!   in place would be.
//!
//! [`FileKey`] tells whether two paths are the same file (device and inode after symbolic
//! links, or the same place for a file not yet created), so that a caller can refuse, before
//! any work, an output that would overwrite one of its inputs or another output.
//!
//! The reference writes with `soundfile`/`wave`/`safetensors` straight onto the path (a
//! failure leaves a truncated file there); these rules are this port's own.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::{Error, Result};

/// Temporary files not yet renamed into place, for [`abandon_temporary_files`].
static LIVE_TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set by [`abandon_temporary_files`]: no temporary file is renamed into place after it.
static ABANDONED: AtomicBool = AtomicBool::new(false);

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE_TEMPORARIES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every temporary file an [`OutputFile`] of this process still holds, and makes
/// every later [`OutputFile::finish`] fail: no destination is replaced after this call.
///
/// Meant for a signal handler's thread (SIGINT, SIGTERM) just before the process exits, when
/// destructors will not run. Returns the number of files removed.
pub fn abandon_temporary_files() -> usize {
    let mut files = live();
    ABANDONED.store(true, Ordering::SeqCst);
    let mut removed = 0;
    for path in files.drain(..) {
        if fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The identity of a file a path names, to compare an output with inputs and other outputs.
///
/// Two paths have equal keys when they name the same existing file (same device and inode, on
/// Unix; the same canonical path elsewhere), whatever symbolic links, `..` or hard links lead
/// there; or, for a file that does not exist yet, the same name in the same folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileKey {
    /// An existing file: `(device, inode)` on Unix.
    #[cfg(unix)]
    Existing(u64, u64),
    /// An existing file: its canonical path (platforms without inodes).
    #[cfg(not(unix))]
    Existing(PathBuf),
    /// A file that does not exist yet: its canonical folder joined with its name.
    New(PathBuf),
}

impl FileKey {
    /// The key of `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming `path` when it does not exist and its folder cannot be resolved
    /// (the folder is missing or unreadable).
    pub fn of(path: &Path) -> Result<Self> {
        match fs::metadata(path) {
            Ok(meta) => Ok(Self::existing(path, &meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = path.file_name().ok_or_else(|| {
                    Error::invalid_argument(format!("{} does not name a file", path.display()))
                })?;
                let dir = fs::canonicalize(parent_dir(path)).map_err(|e| Error::io(path, e))?;
                Ok(FileKey::New(dir.join(name)))
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    #[cfg(unix)]
    fn existing(_path: &Path, meta: &fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileKey::Existing(meta.dev(), meta.ino())
    }

    #[cfg(not(unix))]
    fn existing(path: &Path, _meta: &fs::Metadata) -> Self {
        FileKey::Existing(fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
    }
}

/// True when `path` is the null device (`/dev/null`, or any node of the same character
/// device), which any number of outputs may share.
pub fn is_null_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let rdev = |p: &Path| {
            fs::metadata(p)
                .ok()
                .filter(|m| m.file_type().is_char_device())
                .map(|m| m.rdev())
        };
        matches!((rdev(path), rdev(Path::new("/dev/null"))), (Some(a), Some(b)) if a == b)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The folder a path's file is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// How an [`OutputFile`] reaches its destination.
enum Target {
    /// A temporary file renamed onto `target` by `finish`.
    Replace {
        file: Option<tempfile::NamedTempFile>,
        target: PathBuf,
    },
    /// The destination itself (a device, a FIFO, a terminal, `/dev/stdout`).
    InPlace { file: File, seekable: bool },
}

/// An output file that follows this module's rules: see the [module docs](self).
///
/// It implements [`Write`] (unbuffered: wrap it in a `BufWriter` for small writes) and
/// [`Seek`] (an error for in-place outputs that cannot seek).
pub struct OutputFile {
    path: PathBuf,
    target: Target,
}

impl OutputFile {
    /// Opens `path` for writing under the module's rules.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`] naming `path` when it is empty, a folder or a socket;
    /// - [`Error::NotFound`] naming the folder when the folder does not exist;
    /// - [`Error::Io`] naming `path` when the temporary file cannot be created (a read-only
    ///   folder) or the destination cannot be opened.
    pub fn create(path: &Path) -> Result<Self> {
        if path.as_os_str().is_empty() {
            return Err(Error::invalid_argument(
                "the output path is empty: give a file name",
            ));
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Err(Error::invalid_argument(format!(
                "{} is a folder: give a file name inside it",
                path.display()
            ))),
            Ok(meta) if is_socket(&meta) => Err(Error::invalid_argument(format!(
                "{} is a socket: output can only go to a file, a device or a FIFO",
                path.display()
            ))),
            Ok(meta) if !meta.is_file() || is_process_path(path) => Self::in_place(path, &meta),
            Ok(meta) if meta.permissions().readonly() => Err(Error::io(
                path,
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the file is read-only: make it writable or choose another path",
                ),
            )),
            Ok(meta) => {
                let target = fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
                Self::replace(path, target, Some(&meta))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = parent_dir(path);
                if !dir.is_dir() {
                    return Err(Error::NotFound(format!(
                        "the folder {} of {} does not exist: create it first or choose another path",
                        dir.display(),
                        path.display()
                    )));
                }
                Self::replace(path, path.to_path_buf(), None)
            }
            Err(e) => Err(Error::io(path, e)),
        }
    }

    fn in_place(path: &Path, meta: &fs::Metadata) -> Result<Self> {
        let regular = meta.is_file();
        // A regular file reached through /dev/stdout or /proc/self/fd: the shell opened it for
        // us; write it from the start like `>` would.
        let file = OpenOptions::new()
            .write(true)
            .truncate(regular)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            target: Target::InPlace {
                file,
                seekable: regular,
            },
        })
    }

    fn replace(path: &Path, target: PathBuf, existing: Option<&fs::Metadata>) -> Result<Self> {
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(target.file_name().unwrap_or_default());
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // A new file gets 0o666 minus the umask, like `File::create` (tempfile's default is
        // 0o600); a replaced one keeps its mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let mut files = live();
        let file = builder
            .tempfile_in(parent_dir(&target))
            .map_err(|e| Error::io(path, e))?;
        if let Some(meta) = existing {
            fs::set_permissions(file.path(), meta.permissions()).map_err(|e| Error::io(path, e))?;
            keep_owner(file.as_file(), meta);
        }
        files.push(file.path().to_path_buf());
        drop(files);
        Ok(Self {
            path: path.to_path_buf(),
            target: Target::Replace {
                file: Some(file),
                target,
            },
        })
    }

    /// The destination, as given to [`create`](Self::create).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the output can seek (a file being replaced, or a regular file written in
    /// place); false for devices, FIFOs and terminals.
    pub fn is_seekable(&self) -> bool {
        match &self.target {
            Target::Replace { .. } => true,
            Target::InPlace { seekable, .. } => *seekable,
        }
    }

    /// True when the output is a terminal (written in place).
    pub fn is_terminal(&self) -> bool {
        use std::io::IsTerminal;
        match &self.target {
            Target::Replace { .. } => false,
            Target::InPlace { file, .. } => file.is_terminal(),
        }
    }

    /// The temporary file, while the destination is being replaced.
    pub fn temporary_path(&self) -> Option<&Path> {
        match &self.target {
            Target::Replace { file, .. } => file.as_ref().map(|f| f.path()),
            Target::InPlace { .. } => None,
        }
    }

    fn file(&mut self) -> &mut File {
        match &mut self.target {
            Target::Replace { file, .. } => file
                .as_mut()
                .expect("the temporary file lives until finish or drop")
                .as_file_mut(),
            Target::InPlace { file, .. } => file,
        }
    }

    /// Completes the output: a replaced file is synced to disk and renamed onto the
    /// destination; an in-place one is flushed.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the destination; the temporary file is then removed and the
    /// destination left as it was. [`Error::Io`] of kind `Interrupted` after
    /// [`abandon_temporary_files`].
    pub fn finish(mut self) -> Result<()> {
        let path = self.path.clone();
        match &mut self.target {
            Target::InPlace { file, .. } => file.flush().map_err(|e| Error::io(&path, e)),
            Target::Replace { file, target } => {
                let temp = file.take().expect("finish is called once");
                temp.as_file().sync_all().map_err(|e| Error::io(&path, e))?;
                let mut files = live();
                if ABANDONED.load(Ordering::SeqCst) {
                    return Err(Error::io(
                        &path,
                        io::Error::new(io::ErrorKind::Interrupted, "interrupted"),
                    ));
                }
                files.retain(|p| p != temp.path());
                temp.persist(&*target)
                    .map_err(|e| Error::io(&path, e.error))?;
                Ok(())
            }
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Target::Replace {
            file: Some(temp), ..
        } = &self.target
        {
            // The NamedTempFile removes itself; forget it here.
            live().retain(|p| p != temp.path());
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Seek for OutputFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        if !self.is_seekable() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this output cannot seek",
            ));
        }
        self.file().seek(pos)
    }
}

/// Writes `bytes` to `path` under the module's rules (atomically for regular files).
///
/// # Errors
///
/// Those of [`OutputFile::create`], [`Write::write_all`] and [`OutputFile::finish`], all
/// naming `path`.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    out.write_all(bytes).map_err(|e| Error::io(path, e))?;
    out.finish()
}

#[cfg(unix)]
fn is_socket(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_socket()
}

#[cfg(not(unix))]
fn is_socket(_meta: &fs::Metadata) -> bool {
    false
}

/// Paths that name a process's open files (`/dev/stdout`, `/dev/fd/N`, `/proc/…/fd/N`): even
/// when they lead to a regular file, that file is written in place, not renamed over.
fn is_process_path(path: &Path) -> bool {
    let Ok(abs) = std::path::absolute(path) else {
        return false;
    };
    let s = abs.to_string_lossy();
    s.starts_with("/dev/") || s.starts_with("/proc/")
}

#[cfg(unix)]
fn keep_owner(file: &File, meta: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    // Only root may give a file away; for others the owner is already right or the call
    // fails harmlessly.
    let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
}

#[cfg(not(unix))]
fn keep_owner(_file: &File, _meta: &fs::Metadata) {}
