//! Resolving the file locations a config or the command line names, as the reference's
//! `utils.download_if_necessary` does: `hf://org/repo/path/in/repo[@revision]` through the
//! Hugging Face hub (the `hf-hub` crate, honouring `HF_HOME`, `HF_TOKEN`, `HF_ENDPOINT`
//! and `HF_HUB_OFFLINE`), and plain local paths.
//!
//! Nothing here is called implicitly: the library downloads only when a caller resolves
//! an `hf://` location.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// A parsed `hf://` location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HfLocation {
    /// `org/name`.
    pub repo_id: String,
    /// Path of the file inside the repository.
    pub filename: String,
    /// Branch, tag or commit; `main` when absent.
    pub revision: Option<String>,
}

impl HfLocation {
    /// Parses `hf://org/name/path/in/repo[@revision]`; `None` if `spec` is not an
    /// `hf://` location.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the location lacks a repository or a file name.
    pub fn parse(spec: &str) -> Result<Option<Self>> {
        let Some(rest) = spec.strip_prefix("hf://") else {
            return Ok(None);
        };
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() < 3 || parts.iter().any(|p| p.is_empty()) {
            return Err(Error::invalid_argument(format!(
                "{spec:?} is not a valid hub location: expected hf://org/repo/path/to/file[@revision]"
            )));
        }
        let repo_id = format!("{}/{}", parts[0], parts[1]);
        let file = parts[2..].join("/");
        let (filename, revision) = match file.split_once('@') {
            Some((f, r)) => (f.to_string(), Some(r.to_string())),
            None => (file, None),
        };
        Ok(Some(Self {
            repo_id,
            filename,
            revision,
        }))
    }
}

/// True when `HF_HUB_OFFLINE` asks for cache-only resolution (`1`, `true`, `yes`, `on`).
pub fn hub_offline() -> bool {
    std::env::var("HF_HUB_OFFLINE")
        .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
        .unwrap_or(false)
}

fn hub_cache_dir() -> PathBuf {
    if let Ok(home) = std::env::var("HF_HOME") {
        return PathBuf::from(home).join("hub");
    }
    #[cfg(feature = "hub")]
    {
        hf_hub::Cache::from_env().path().clone()
    }
    // hf-hub's default: ~/.cache/huggingface/hub.
    #[cfg(not(feature = "hub"))]
    {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        home.join(".cache").join("huggingface").join("hub")
    }
}

/// Looks a hub file up in the local cache only (the layout `huggingface_hub` and
/// `hf-hub` share: `models--org--name/{refs,snapshots}`).
pub fn cached_hub_file(loc: &HfLocation) -> Option<PathBuf> {
    let repo_dir = hub_cache_dir().join(format!("models--{}", loc.repo_id.replace('/', "--")));
    let revision = loc.revision.clone().unwrap_or_else(|| "main".to_string());
    let is_commit = revision.len() == 40 && revision.chars().all(|c| c.is_ascii_hexdigit());
    let commit = if is_commit {
        revision
    } else {
        std::fs::read_to_string(repo_dir.join("refs").join(&revision))
            .ok()?
            .trim()
            .to_string()
    };
    let path = repo_dir.join("snapshots").join(commit).join(&loc.filename);
    path.exists().then_some(path)
}

/// Downloads (or finds in the cache) a hub file.
///
/// # Errors
/// [`Error::NotFound`] when offline and the file is not cached, or when the hub refuses
/// or cannot be reached; the message names the location and what to do.
pub fn download_hub_file(loc: &HfLocation) -> Result<PathBuf> {
    if let Some(p) = cached_hub_file(loc) {
        return Ok(p);
    }
    let spec = format!(
        "hf://{}/{}{}",
        loc.repo_id,
        loc.filename,
        loc.revision
            .as_ref()
            .map(|r| format!("@{r}"))
            .unwrap_or_default()
    );
    if hub_offline() {
        return Err(Error::NotFound(format!(
            "{spec} is not in the local hub cache ({}) and HF_HUB_OFFLINE is set: \
             download it once online, or point the config at a local file",
            hub_cache_dir().display()
        )));
    }
    download_uncached(loc, &spec)
}

/// Downloads a hub file that is not in the cache (the `hub` feature's hf-hub client).
#[cfg(feature = "hub")]
fn download_uncached(loc: &HfLocation, spec: &str) -> Result<PathBuf> {
    let mut builder = hf_hub::api::sync::ApiBuilder::from_env().with_progress(false);
    if let Ok(home) = std::env::var("HF_HOME") {
        builder = builder.with_cache_dir(PathBuf::from(home).join("hub"));
    }
    if let Ok(token) = std::env::var("HF_TOKEN") {
        if !token.is_empty() {
            builder = builder.with_token(Some(token));
        }
    }
    let api = builder
        .build()
        .map_err(|e| Error::NotFound(format!("cannot set up the hub client for {spec}: {e}")))?;
    let repo = match &loc.revision {
        Some(rev) => {
            hf_hub::Repo::with_revision(loc.repo_id.clone(), hf_hub::RepoType::Model, rev.clone())
        }
        None => hf_hub::Repo::model(loc.repo_id.clone()),
    };
    api.repo(repo).get(&loc.filename).map_err(|e| {
        Error::NotFound(format!(
            "could not download {spec}: {e}. Check the network, accept the model's terms on \
             the hub and set HF_TOKEN if the repository is gated, or use a local file"
        ))
    })
}

/// Without the `hub` feature (the WebAssembly build) nothing is downloaded.
#[cfg(not(feature = "hub"))]
fn download_uncached(_: &HfLocation, spec: &str) -> Result<PathBuf> {
    Err(Error::NotFound(format!(
        "{spec} is not in the local hub cache ({}) and this build has no hub client (the \
         `hub` feature of pocket-tts-core): download it elsewhere, or use a local file",
        hub_cache_dir().display()
    )))
}

/// Resolves a file location: `hf://…` through the hub, anything else as a local path.
/// A relative local path is looked up against `base_dir` (the directory of the config
/// that names it) first, then against the working directory (the reference's rule).
///
/// # Errors
/// [`Error::NotFound`] naming the location and the places looked in;
/// [`Error::Unsupported`] for `http://`/`https://` URLs (download the file and pass
/// its path).
pub fn resolve(spec: &str, base_dir: Option<&Path>) -> Result<PathBuf> {
    resolve_with(spec, base_dir, true)
}

/// [`resolve`], downloading an `hf://` file only when `download` is true; otherwise it
/// must already be in the local hub cache.
///
/// # Errors
/// As [`resolve`]; without `download`, [`Error::NotFound`] for an `hf://` file not yet in
/// the cache, naming it and saying how to allow the download.
pub fn resolve_with(spec: &str, base_dir: Option<&Path>, download: bool) -> Result<PathBuf> {
    if let Some(loc) = HfLocation::parse(spec)? {
        if download {
            return download_hub_file(&loc);
        }
        return cached_hub_file(&loc).ok_or_else(|| {
            Error::NotFound(format!(
                "{spec} is not in the local hub cache ({}) and downloads are off: allow them \
                 (TtsModelBuilder::download) or give a local path",
                hub_cache_dir().display()
            ))
        });
    }
    if spec.starts_with("http://") || spec.starts_with("https://") {
        return Err(Error::Unsupported(format!(
            "{spec}: plain URLs are not fetched; download the file and pass its local path"
        )));
    }
    let path = Path::new(spec);
    if path.is_relative() {
        if let Some(base) = base_dir {
            let candidate = base.join(path);
            if candidate.exists() {
                return Ok(candidate);
            }
        }
    }
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let also = base_dir
        .filter(|_| path.is_relative())
        .map(|b| format!(" or {}", b.join(path).display()))
        .unwrap_or_default();
    Err(Error::NotFound(format!(
        "{}{also} does not exist",
        path.display()
    )))
}

/// Where [`resolve`] would find `spec` without downloading anything: a local path (relative
/// paths tried against `base_dir` first) that exists, or an `hf://` location already in the
/// local hub cache. `None` otherwise (missing, malformed, or not downloaded yet).
///
/// Used to list a run's input files before the model is loaded, so that an output path can
/// be checked against them.
pub fn resolve_cached(spec: &str, base_dir: Option<&Path>) -> Option<PathBuf> {
    match HfLocation::parse(spec) {
        Ok(Some(loc)) => return cached_hub_file(&loc),
        Ok(None) => {}
        Err(_) => return None,
    }
    let path = Path::new(spec);
    if path.is_relative() {
        if let Some(candidate) = base_dir.map(|b| b.join(path)).filter(|c| c.exists()) {
            return Some(candidate);
        }
    }
    path.exists().then(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hub_locations() {
        let loc =
            HfLocation::parse("hf://kyutai/pocket-tts/languages/english/model.safetensors@abc")
                .unwrap()
                .unwrap();
        assert_eq!(loc.repo_id, "kyutai/pocket-tts");
        assert_eq!(loc.filename, "languages/english/model.safetensors");
        assert_eq!(loc.revision.as_deref(), Some("abc"));
        assert!(HfLocation::parse("local/file.yaml").unwrap().is_none());
        assert!(matches!(
            HfLocation::parse("hf://kyutai/only-repo"),
            Err(Error::InvalidArgument { .. })
        ));
    }

    #[test]
    fn missing_local_file_is_not_found() {
        let err = resolve("definitely/missing.safetensors", Some(Path::new("/tmp"))).unwrap_err();
        assert!(matches!(err, Error::NotFound(ref m) if m.contains("missing.safetensors")));
    }
}
