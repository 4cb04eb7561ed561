//! Helpers shared by the server's tests: the tiny-model sandbox, the audio `generate`
//! would write for the same settings, and checks of audio.
//!
//! The fixture's config names its files relative to its folder, and its `tokenizer.model`
//! is an uncommitted symlink, so each test writes a copy of the config into a temporary
//! folder with absolute paths: the fixture's checkpoint and the official tokenizer committed
//! under `crates/pocket-tts-core/tests/fixtures/assets` (as the CLI's tests do).

#![allow(dead_code)]

pub mod server;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pocket_tts_core::config::Config;
use pocket_tts_core::{GenerationParams, TtsModel};
use tempfile::TempDir;

/// The model's sample rate.
pub const SAMPLE_RATE: u32 = 24_000;
/// Samples per generated latent frame (80 ms at 24 kHz).
pub const FRAME_SAMPLES: usize = 1920;
/// Silence appended at the end of every WAV (200 ms at 24 kHz).
pub const TRAILING_SILENCE: usize = 4800;
/// Size of the canonical WAV header.
pub const WAV_HEADER_LEN: usize = 44;
/// The text spoken by the happy-path tests.
pub const TEXT: &str = "Hello there.";
/// The EOS threshold the tiny fixture's speech ends with.
pub const EOS_THRESHOLD: f32 = -12.56;

pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize()
        .unwrap_or_else(|e| panic!("cannot resolve the repository root {}: {e}", root.display()))
}

/// A file of `tests/fixtures/tiny`; a missing fixture is a failure, never a skip.
pub fn tiny(name: &str) -> PathBuf {
    let path = repo_root().join("tests/fixtures/tiny").join(name);
    assert!(path.is_file(), "fixture {} is missing", path.display());
    path
}

/// The official SentencePiece tokenizer, committed with the core crate's test assets.
pub fn tokenizer() -> PathBuf {
    let path = repo_root().join("crates/pocket-tts-core/tests/fixtures/assets/tokenizer.model");
    assert!(path.is_file(), "test asset {} is missing", path.display());
    path
}

pub fn utf8(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("test paths must be UTF-8: {}", path.display()))
}

/// A YAML single-quoted scalar.
fn yaml_quote(path: &Path) -> String {
    format!("'{}'", utf8(path).replace('\'', "''"))
}

/// The tiny config with absolute paths: its checkpoint and the official tokenizer.
fn tiny_config_text() -> String {
    let original = fs::read_to_string(tiny("config.yaml")).expect("read the tiny config");
    let (mut weights_lines, mut tokenizer_lines) = (0, 0);
    let mut out = String::new();
    for line in original.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if trimmed == "weights_path: model.safetensors" {
            weights_lines += 1;
            out += &format!(
                "{indent}weights_path: {}\n",
                yaml_quote(&tiny("model.safetensors"))
            );
        } else if trimmed == "tokenizer_path: tokenizer.model" {
            tokenizer_lines += 1;
            out += &format!("{indent}tokenizer_path: {}\n", yaml_quote(&tokenizer()));
        } else {
            out += line;
            out += "\n";
        }
    }
    assert_eq!(
        (weights_lines, tokenizer_lines),
        (1, 1),
        "tests/fixtures/tiny/config.yaml no longer has `weights_path: model.safetensors` and \
         `tokenizer_path: tokenizer.model`: update tiny_config_text"
    );
    out
}

/// A temporary folder holding a working copy of the tiny config.
pub struct Sandbox {
    pub dir: TempDir,
    pub config: PathBuf,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("create a temporary folder");
        let config = dir.path().join("tiny.yaml");
        fs::write(&config, tiny_config_text()).unwrap();
        Self { dir, config }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A new empty folder in the sandbox.
    pub fn folder(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        fs::create_dir(&path).unwrap();
        path
    }

    /// The sandbox's config.
    pub fn config(&self) -> Config {
        Config::from_yaml_file(&self.config).expect("the tiny config")
    }

    /// Loads the tiny model from the sandbox's config (as `--config` does).
    pub fn model(&self) -> Arc<TtsModel> {
        let model = TtsModel::builder()
            .config(self.config(), self.config.parent())
            .load()
            .expect("the tiny model");
        Arc::new(model)
    }

    /// The samples `generate` writes for [`TEXT`] with [`params`] and the fixture voice
    /// (speech, then 200 ms of silence), and the speech alone (what `stream --format
    /// pcm-s16le` writes), generated here with the library.
    pub fn reference_audio(&self) -> (Vec<i16>, Vec<i16>) {
        let model = self.model();
        let voice = model
            .voice_state(utf8(&tiny("voice_excerpt.wav")), true)
            .expect("the fixture voice");
        let samples = model
            .generate(&voice, TEXT, &params(model.config()))
            .expect("generate");
        let mut pcm = Vec::new();
        pocket_tts_core::audio::pcm16_le(&samples, &mut pcm);
        let speech = i16s(&pcm);
        let mut wav = speech.clone();
        wav.resize(wav.len() + TRAILING_SILENCE, 0);
        check_speech_layout(&wav, "generate's samples");
        (wav, speech)
    }
}

/// The deterministic settings of the tests (`--temperature 0 --eos-threshold -12.56
/// --seed 1` on the command line), over the config's defaults.
pub fn params(config: &Config) -> GenerationParams {
    GenerationParams {
        temperature: 0.0,
        eos_threshold: EOS_THRESHOLD,
        seed: Some(1),
        ..GenerationParams::for_config(config)
    }
}

/// Little-endian i16s.
pub fn i16s(bytes: &[u8]) -> Vec<i16> {
    assert_eq!(bytes.len() % 2, 0, "odd number of PCM16 bytes");
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// Whole frames of speech followed by exactly 200 ms of silence.
pub fn check_speech_layout(samples: &[i16], what: &str) {
    assert!(
        samples.len() > TRAILING_SILENCE,
        "{what}: {} samples, not even one frame of speech before the silence",
        samples.len()
    );
    let speech = samples.len() - TRAILING_SILENCE;
    assert_eq!(
        speech % FRAME_SAMPLES,
        0,
        "{what}: {} samples is not a whole number of {FRAME_SAMPLES}-sample frames + \
         {TRAILING_SILENCE} samples of silence",
        samples.len()
    );
    assert!(
        samples[speech..].iter().all(|&s| s == 0),
        "{what}: the last {TRAILING_SILENCE} samples are not silent"
    );
    assert!(
        samples[..speech].iter().any(|&s| s != 0),
        "{what}: the speech part is all zeros"
    );
}

/// Deterministic pseudo-random bytes (a fixed LCG), for corrupt files.
pub fn noise_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 56) as u8
        })
        .collect()
}
