//! The server's voices: the default voice and the voices folder's (loaded at start-up),
//! the predefined voices and `hf://` voices (loaded on first use, then cached), uploads
//! (kept in memory under a name), and `http(s)://` audio with
//! [`VoiceOptions::allow_urls`] (reference: `main.py` `text_to_speech`, which caches URL
//! voices with `_cached_get_state_for_audio_prompt`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

use pocket_tts_core::tts_model::PREDEFINED_VOICES;
use pocket_tts_core::{TtsModel, VoiceState};
use serde::Serialize;

use crate::error::{mib, ErrorKind, RequestError, ServerError};
use crate::SettingNames;

/// Voices loaded on demand (predefined, `hf://`, URLs) kept at most.
const CACHED_VOICES: usize = 32;
/// The name that always means the server's default voice.
pub const DEFAULT_VOICE_ALIAS: &str = "default";
/// OpenAI's voice names and the predefined voice each stands for by default (a voice of
/// similar character: OpenAI's lower voices to the male predefined voices, the higher to
/// the female ones). With a model that has no predefined voices (a custom config) they
/// all stand for the default voice. [`VoiceOptions::aliases`] overrides any of them and
/// adds others; a voice of the voices folder with one of these names keeps its name.
pub const OPENAI_VOICE_ALIASES: &[(&str, &str)] = &[
    ("alloy", "alba"),
    ("ash", "marius"),
    ("ballad", "jean"),
    ("cedar", "paul"),
    ("coral", "cosette"),
    ("echo", "javert"),
    ("fable", "george"),
    ("marin", "mary"),
    ("nova", "fantine"),
    ("onyx", "charles"),
    ("sage", "eponine"),
    ("shimmer", "azelma"),
    ("verse", "michael"),
];
/// Extensions of the files a voices folder turns into voices.
const VOICE_EXTENSIONS: &[&str] = &["wav", "mp3", "flac", "ogg", "safetensors"];

/// Where a voice comes from, as listed by `GET /v1/audio/voices`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum VoiceSource {
    /// The default voice, used when a request names none.
    Default,
    /// A file of the voices folder.
    Folder,
    /// One of the reference's predefined voices (downloaded from the hub on first use).
    Builtin,
    /// Uploaded with `POST /v1/audio/voices`.
    Upload,
    /// Another name of a voice ([`OPENAI_VOICE_ALIASES`], [`VoiceOptions::aliases`]).
    Alias,
}

/// One entry of the voice list.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VoiceInfo {
    /// The name requests use (`voice`, `voice_url`, Wyoming's `voice.name`).
    pub name: String,
    /// Where it comes from.
    pub source: VoiceSource,
    /// For an alias, the voice it stands for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voice: Option<String>,
}

/// A bounded name → voice map that forgets the oldest entry first.
struct Lru<V = Arc<VoiceState>> {
    map: HashMap<String, V>,
    order: VecDeque<String>,
    cap: usize,
}

impl<V: Clone> Lru<V> {
    fn new(cap: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap,
        }
    }

    fn get(&self, name: &str) -> Option<V> {
        self.map.get(name).cloned()
    }

    fn insert(&mut self, name: String, voice: V) {
        if self.map.insert(name.clone(), voice).is_none() {
            self.order.push_back(name);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                tracing::info!("voice {old:?} forgotten (more than {} kept)", self.cap);
                self.map.remove(&old);
            }
        }
    }
}

/// How a server's voices are loaded and which a request may ask for.
#[derive(Debug, Clone)]
pub struct VoiceOptions {
    /// Fetch `http(s)://` voice URLs a request names (off: the server never makes a
    /// request to an address a client chose). Default: off.
    pub allow_urls: bool,
    /// Uploaded voices kept (the oldest is forgotten first). Default: 64.
    pub max_uploads: usize,
    /// Cut voice prompts to their first 30 s (as the reference's server does). Default:
    /// on.
    pub truncate: bool,
    /// Voice aliases `(name, voice)`, over [`OPENAI_VOICE_ALIASES`]: `name` in a request
    /// means `voice` (the default voice's name, `default`, a voice of the folder, a
    /// predefined voice or an `hf://` voice). Default: none.
    pub aliases: Vec<(String, String)>,
}

impl Default for VoiceOptions {
    fn default() -> Self {
        Self {
            allow_urls: false,
            max_uploads: 64,
            truncate: true,
            aliases: Vec::new(),
        }
    }
}

/// The voices a server can speak with: a default voice, an optional folder of voices
/// (both loaded before the server starts), the model's predefined voices and `hf://`
/// voices (loaded on first use, then cached), uploads, and `http(s)://` audio when
/// [`VoiceOptions::allow_urls`].
pub struct Voices {
    model: Arc<TtsModel>,
    default_name: String,
    default: Arc<VoiceState>,
    folder: BTreeMap<String, Arc<VoiceState>>,
    builtin: Vec<&'static str>,
    /// Alias → the voice name it stands for.
    aliases: BTreeMap<String, String>,
    cache: Mutex<Lru>,
    uploads: Mutex<Lru>,
    options: VoiceOptions,
    /// Largest upload or fetched file, in bytes (the server's
    /// [`crate::Limits::max_body_bytes`]).
    max_bytes: usize,
    /// What messages call the settings (the server's).
    names: SettingNames,
}

/// Whether `name` is usable as a voice name: 1 to 64 ASCII letters, digits, `-`, `_`, `.`.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Voices {
    /// Loads the default voice (`voice`: a predefined name, an audio file or a
    /// `.safetensors` voice state, local or `hf://`; listed under its file stem) and every
    /// voice file of `dir` (audio files `.wav`, `.mp3`, `.flac`, `.ogg` and `.safetensors`
    /// voice states, each named by its stem: `anna.wav` → `anna`).
    ///
    /// # Errors
    /// [`ServerError::DefaultVoice`] for a default voice that cannot be loaded;
    /// [`ServerError::VoicesDir`] for an unreadable folder, one without voice files, two
    /// files with the same stem, a file stem that is not a valid voice name, or a voice
    /// file that cannot be loaded.
    pub fn load(
        model: Arc<TtsModel>,
        voice: &str,
        dir: Option<&Path>,
        options: VoiceOptions,
    ) -> Result<Self, ServerError> {
        let t0 = std::time::Instant::now();
        let default = model
            .voice_state(voice, options.truncate)
            .map_err(|source| ServerError::DefaultVoice {
                voice: voice.to_string(),
                source,
            })?;
        tracing::info!(
            "default voice {voice} ready in {:.0} ms",
            t0.elapsed().as_secs_f64() * 1000.0
        );
        let default_name = voice_name_of(voice);
        let folder = match dir {
            Some(dir) => load_folder(&model, dir, options.truncate)?,
            None => BTreeMap::new(),
        };
        let builtin = if model.language().is_some() {
            PREDEFINED_VOICES.to_vec()
        } else {
            Vec::new()
        };
        let aliases = aliases(&options.aliases, &default_name, &folder, &builtin)?;
        Ok(Self {
            model,
            default_name,
            default: Arc::new(default),
            folder,
            builtin,
            aliases,
            cache: Mutex::new(Lru::new(CACHED_VOICES)),
            uploads: Mutex::new(Lru::new(options.max_uploads)),
            options,
            max_bytes: crate::Limits::default().max_body_bytes,
            names: SettingNames::default(),
        })
    }

    /// The model the voices are for.
    pub fn model(&self) -> &Arc<TtsModel> {
        &self.model
    }

    /// Takes the server's body limit and setting names (at start-up).
    pub(crate) fn configure(&mut self, max_bytes: usize, names: &SettingNames) {
        self.max_bytes = max_bytes;
        self.names = names.clone();
    }

    /// Every voice a request can name: the default, the folder's, the uploads, then the
    /// predefined ones.
    pub(crate) fn list(&self) -> Vec<VoiceInfo> {
        let mut out = vec![VoiceInfo {
            name: self.default_name.clone(),
            source: VoiceSource::Default,
            voice: None,
        }];
        let mut push = |name: &str, source| {
            if !out.iter().any(|v| v.name == name) {
                out.push(VoiceInfo {
                    name: name.to_string(),
                    source,
                    voice: None,
                });
            }
        };
        for name in self.folder.keys() {
            push(name, VoiceSource::Folder);
        }
        let uploads = lock(&self.uploads).order.clone();
        for name in &uploads {
            push(name, VoiceSource::Upload);
        }
        for name in &self.builtin {
            push(name, VoiceSource::Builtin);
        }
        for (name, voice) in &self.aliases {
            if !out.iter().any(|v| &v.name == name) {
                out.push(VoiceInfo {
                    name: name.clone(),
                    source: VoiceSource::Alias,
                    voice: Some(voice.clone()),
                });
            }
        }
        out
    }

    /// The default voice.
    pub fn default_voice(&self) -> Arc<VoiceState> {
        Arc::clone(&self.default)
    }

    /// The default voice's name.
    pub fn default_name(&self) -> &str {
        &self.default_name
    }

    /// The voice `name` stands for (`param` is the request field, for messages): a listed
    /// name, `default`, an `hf://` file, or an `http(s)://` audio file with
    /// [`VoiceOptions::allow_urls`]. Voices loaded on demand are cached.
    ///
    /// # Errors
    /// A bad request naming `param` for an unknown or refused name or an unusable voice
    /// file.
    pub(crate) async fn resolve(
        self: &Arc<Self>,
        name: &str,
        param: &'static str,
    ) -> Result<Arc<VoiceState>, RequestError> {
        let name = self.aliases.get(name).map_or(name, String::as_str);
        if name == self.default_name || name == DEFAULT_VOICE_ALIAS {
            return Ok(self.default_voice());
        }
        if let Some(v) = self.folder.get(name) {
            return Ok(Arc::clone(v));
        }
        if let Some(v) = lock(&self.uploads).get(name) {
            return Ok(v);
        }
        if let Some(v) = lock(&self.cache).get(name) {
            return Ok(v);
        }
        let remote = name.starts_with("http://") || name.starts_with("https://");
        if remote && !self.options.allow_urls {
            return Err(RequestError::bad_request(
                param,
                format!(
                    "{param} {name:?}: this server does not fetch http(s) addresses (start it \
                     with {}); use a voice name, an hf:// path or an upload",
                    self.names.allow_urls
                ),
            ));
        }
        if !(remote || name.starts_with("hf://") || self.builtin.contains(&name)) {
            let names: Vec<String> = self
                .list()
                .into_iter()
                .filter(|v| v.source != VoiceSource::Alias)
                .map(|v| v.name)
                .collect();
            let aliases = if self.aliases.is_empty() {
                String::new()
            } else {
                " (or an alias from GET /v1/audio/voices, e.g. OpenAI's alloy)".to_string()
            };
            return Err(RequestError::bad_request(
                param,
                format!(
                    "{param} {name:?} is not a voice of this server: use one of {}{aliases} or \
                     an hf:// path",
                    names.join(", ")
                ),
            ));
        }
        let this = Arc::clone(self);
        let key = name.to_string();
        let voice = blocking(move || {
            if remote {
                this.fetch_url(&key, param)
            } else {
                this.model
                    .voice_state(&key, this.options.truncate)
                    .map_err(|e| RequestError::from_core(param, &e))
            }
        })
        .await?;
        let voice = Arc::new(voice);
        lock(&self.cache).insert(name.to_string(), Arc::clone(&voice));
        Ok(voice)
    }

    /// Clones a voice from uploaded audio (`param` is the form field, `file_name` the
    /// upload's name, which hints the format). Decoded in memory.
    ///
    /// # Errors
    /// A bad request naming `param` for audio that cannot be read or is silent.
    pub(crate) async fn from_upload(
        self: &Arc<Self>,
        bytes: Vec<u8>,
        file_name: String,
        param: &'static str,
    ) -> Result<Arc<VoiceState>, RequestError> {
        let this = Arc::clone(self);
        blocking(move || {
            let name = if file_name.is_empty() {
                format!("the uploaded {param}")
            } else {
                format!("the uploaded {param} {file_name:?}")
            };
            this.model
                .voice_state_from_audio_bytes(&bytes, &name, this.options.truncate)
                .map(Arc::new)
                .map_err(|e| RequestError::from_core(param, &e))
        })
        .await
    }

    /// Keeps `voice` under `name` for later requests (`POST /v1/audio/voices`).
    ///
    /// # Errors
    /// A bad request for a name that is not valid, a conflict for the name of a default,
    /// folder or predefined voice.
    pub(crate) fn add_upload(
        &self,
        name: &str,
        voice: Arc<VoiceState>,
    ) -> Result<(), RequestError> {
        if !valid_name(name) {
            return Err(RequestError::bad_request(
                "name",
                format!(
                    "name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.' (e.g. my-voice)"
                ),
            ));
        }
        if name == self.default_name
            || name == DEFAULT_VOICE_ALIAS
            || self.folder.contains_key(name)
            || self.builtin.contains(&name)
            || self.aliases.contains_key(name)
        {
            return Err(RequestError::new(
                ErrorKind::Conflict,
                format!("name {name:?} is a voice of the server already: choose another name"),
            )
            .with_param("name"));
        }
        lock(&self.uploads).insert(name.to_string(), voice);
        Ok(())
    }

    /// Downloads `url` (at most the upload limit) and clones its voice.
    fn fetch_url(&self, url: &str, param: &'static str) -> Result<VoiceState, RequestError> {
        let bad = |m: String| RequestError::bad_request(param, format!("{param} {url:?}: {m}"));
        let response = ureq::get(url)
            .timeout(std::time::Duration::from_secs(30))
            .call()
            .map_err(|e| bad(format!("cannot fetch it ({e})")))?;
        let limit = self.max_bytes;
        let mut bytes = Vec::new();
        response
            .into_reader()
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| bad(format!("cannot read it ({e})")))?;
        if bytes.len() > limit {
            return Err(bad(format!(
                "larger than the server's limit of {} ({})",
                mib(limit),
                self.names.max_body_bytes
            )));
        }
        let file_name = url.rsplit('/').next().unwrap_or(url);
        self.model
            .voice_state_from_audio_bytes(&bytes, file_name, self.options.truncate)
            .map_err(|e| RequestError::from_core(param, &e))
    }
}

/// The alias table: [`OPENAI_VOICE_ALIASES`] (onto the predefined voices, or the default
/// voice when the model has none; a folder voice of the same name keeps it), then
/// `explicit` over it, each checked.
fn aliases(
    explicit: &[(String, String)],
    default_name: &str,
    folder: &BTreeMap<String, Arc<VoiceState>>,
    builtin: &[&str],
) -> Result<BTreeMap<String, String>, ServerError> {
    let mut out = BTreeMap::new();
    for (name, voice) in OPENAI_VOICE_ALIASES {
        if folder.contains_key(*name) || *name == default_name {
            continue;
        }
        let voice = if builtin.contains(voice) {
            voice
        } else {
            DEFAULT_VOICE_ALIAS
        };
        out.insert(name.to_string(), voice.to_string());
    }
    for (name, voice) in explicit {
        let bad = |message: String| ServerError::InvalidOption {
            option: "voice_options.aliases",
            message,
        };
        if !valid_name(name) || name == DEFAULT_VOICE_ALIAS {
            return Err(bad(format!(
                "alias {name:?}: use 1 to 64 letters, digits, '-', '_' or '.', not `default`"
            )));
        }
        let known = voice == default_name
            || voice == DEFAULT_VOICE_ALIAS
            || folder.contains_key(voice.as_str())
            || builtin.contains(&voice.as_str())
            || voice.starts_with("hf://");
        if !known {
            let mut names: Vec<&str> = vec![default_name, DEFAULT_VOICE_ALIAS];
            names.extend(folder.keys().map(String::as_str));
            names.extend(builtin.iter().copied());
            return Err(bad(format!(
                "alias {name:?} stands for {voice:?}, which is not a voice of this server: \
                 use one of {} or an hf:// path",
                names.join(", ")
            )));
        }
        out.insert(name.clone(), voice.clone());
    }
    Ok(out)
}

/// Runs `f` on tokio's blocking pool (voice loading reads files and runs the encoder).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, RequestError> + Send + 'static,
) -> Result<T, RequestError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(RequestError::new(
            ErrorKind::Internal,
            format!("loading the voice failed: {e}"),
        ))
    })
}

/// The name a default voice is listed under: a predefined name as it is, a file by its
/// stem (`voices/anna.wav` → `anna`).
fn voice_name_of(voice: &str) -> String {
    let base = voice.split('@').next().unwrap_or(voice);
    let stem = Path::new(base)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(base);
    if valid_name(stem) {
        stem.to_string()
    } else {
        DEFAULT_VOICE_ALIAS.to_string()
    }
}

/// Every audio file and `.safetensors` voice state of `dir`, named by its stem.
fn load_folder(
    model: &TtsModel,
    dir: &Path,
    truncate: bool,
) -> Result<BTreeMap<String, Arc<VoiceState>>, ServerError> {
    let fail = |problem: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| {
        ServerError::VoicesDir {
            dir: dir.to_path_buf(),
            problem,
            source,
        }
    };
    let unreadable = |e: std::io::Error| fail("cannot read the folder".into(), Some(Box::new(e)));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if path.is_file() && ext.is_some_and(|e| VOICE_EXTENSIONS.contains(&e.as_str())) {
            files.push(path);
        } else {
            tracing::debug!(
                "voices folder: {} is not a voice file, skipped",
                path.display()
            );
        }
    }
    files.sort();
    let mut voices: BTreeMap<String, Arc<VoiceState>> = BTreeMap::new();
    let mut origin: HashMap<String, std::path::PathBuf> = HashMap::new();
    for path in files {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if !valid_name(&stem) || stem == DEFAULT_VOICE_ALIAS {
            return Err(fail(
                format!(
                    "{} cannot be a voice name ({stem:?}): rename the file to 1 to 64 letters, \
                     digits, '-', '_' or '.', other than \"default\"",
                    path.display()
                ),
                None,
            ));
        }
        if let Some(first) = origin.get(&stem) {
            return Err(fail(
                format!(
                    "{} and {} would both be the voice {stem:?}: keep one",
                    first.display(),
                    path.display()
                ),
                None,
            ));
        }
        let spec = path.to_string_lossy().into_owned();
        let voice = model.voice_state(&spec, truncate).map_err(|e| {
            fail(
                format!("voice {stem:?} ({})", path.display()),
                Some(Box::new(e)),
            )
        })?;
        tracing::info!("voice {stem:?} loaded from {}", path.display());
        origin.insert(stem.clone(), path);
        voices.insert(stem, Arc::new(voice));
    }
    if voices.is_empty() {
        return Err(fail(
            "no voice files in it (audio files: .wav, .mp3, .flac, .ogg; voice states: \
             .safetensors)"
                .into(),
            None,
        ));
    }
    Ok(voices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voice_names() {
        assert!(valid_name("anna"));
        assert!(valid_name("my-voice_2.v1"));
        assert!(!valid_name(""));
        assert!(!valid_name("a b"));
        assert!(!valid_name("../etc"));
        assert!(!valid_name(&"x".repeat(65)));
        assert_eq!(voice_name_of("alba"), "alba");
        assert_eq!(voice_name_of("voices/anna.wav"), "anna");
        assert_eq!(
            voice_name_of("hf://kyutai/tts-voices/alba-mackenna/casual.wav@v1"),
            "casual"
        );
        assert_eq!(voice_name_of("/tmp/my voice.wav"), DEFAULT_VOICE_ALIAS);
    }

    #[test]
    fn the_cache_forgets_the_oldest_first() {
        let mut lru = Lru::new(2);
        lru.insert("a".into(), 1);
        lru.insert("b".into(), 2);
        lru.insert("a".into(), 3);
        lru.insert("c".into(), 4);
        assert_eq!(lru.get("a"), None);
        assert_eq!((lru.get("b"), lru.get("c")), (Some(2), Some(4)));
        assert_eq!(lru.order, ["b", "c"]);
    }
}
