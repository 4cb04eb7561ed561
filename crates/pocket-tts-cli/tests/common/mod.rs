//! Helpers shared by the CLI's end-to-end tests: the tiny-model sandbox, command lines,
//! checks of WAV outputs and of refusals, and fixture builders.
//!
//! The fixture's config names its files relative to its folder, and its `tokenizer.model`
//! is an uncommitted symlink, so each test writes a copy of the config into a temporary
//! folder with absolute paths: the fixture's checkpoint and the official tokenizer committed
//! under `crates/pocket-tts-core/tests/fixtures/assets`.

#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_pocket-tts-cli");

/// The model's sample rate.
pub const SAMPLE_RATE: u32 = 24_000;
/// Samples per generated latent frame (80 ms at 24 kHz).
pub const FRAME_SAMPLES: usize = 1920;
/// Silence appended at the end of every WAV (200 ms at 24 kHz).
pub const TRAILING_SILENCE: usize = 4800;
/// Size of the canonical WAV header the CLI writes.
pub const WAV_HEADER_LEN: usize = 44;
/// The text spoken by the happy-path tests.
pub const TEXT: &str = "Hello there.";
/// Name of the output file inside the per-run output folders.
pub const OUT_NAME: &str = "speech.wav";
/// Content of an output file that exists before a failing run.
pub const PREVIOUS: &[u8] = b"a file from before: a failing run must not touch it";

// ---------------------------------------------------------------------------------------
// Fixtures and sandbox
// ---------------------------------------------------------------------------------------

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

/// The official SentencePiece tokenizer, committed with the core crate's test assets (see
/// `crates/pocket-tts-core/tests/fixtures/assets/README.md`).
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
pub fn yaml_quote(path: &Path) -> String {
    format!("'{}'", utf8(path).replace('\'', "''"))
}

/// The tiny config with absolute paths: `weights` as its checkpoint and the official
/// tokenizer, followed by `extra` (more YAML lines).
pub fn tiny_config_text(weights: &Path, extra: &str) -> String {
    let original = fs::read_to_string(tiny("config.yaml")).expect("read the tiny config");
    let (mut weights_lines, mut tokenizer_lines) = (0, 0);
    let mut out = String::new();
    for line in original.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if trimmed == "weights_path: model.safetensors" {
            weights_lines += 1;
            out += &format!("{indent}weights_path: {}\n", yaml_quote(weights));
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
    out + extra
}

/// A temporary folder holding a working copy of the tiny config; commands run in it.
pub struct Sandbox {
    pub dir: TempDir,
    pub config: PathBuf,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("create a temporary folder");
        let config = dir.path().join("tiny.yaml");
        fs::write(&config, tiny_config_text(&tiny("model.safetensors"), "")).unwrap();
        Self { dir, config }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root().join(name)
    }

    /// Writes a file into the sandbox and returns its path.
    pub fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, content).unwrap();
        path
    }

    /// A new empty folder in the sandbox.
    pub fn folder(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        fs::create_dir(&path).unwrap();
        path
    }

    /// A config like the working one with `weights` as the checkpoint, plus `extra`.
    pub fn config_with(&self, name: &str, weights: &Path, extra: &str) -> PathBuf {
        self.file(name, tiny_config_text(weights, extra))
    }

    /// A `generate` command line with the sandbox config, the fixture voice, [`TEXT`],
    /// deterministic sampling and the fixture's EOS threshold.
    pub fn generate(&self) -> Args {
        self.speak("generate")
    }

    /// [`Sandbox::generate`]'s settings for `stream`.
    pub fn stream(&self) -> Args {
        self.speak("stream")
    }

    pub fn speak(&self, command: &str) -> Args {
        Args::new(command)
            .set("--config", utf8(&self.config))
            .set("--voice", utf8(&tiny("voice_excerpt.wav")))
            .set("--text", TEXT)
            .set("--temperature", "0")
            .set("--eos-threshold", "-12.56")
            .set("--seed", "1")
    }

    /// Runs the CLI in the sandbox, feeding `stdin`.
    pub fn run(&self, args: &Args, stdin: &[u8]) -> Output {
        let mut child = Command::new(BIN)
            .args(args.to_vec())
            .current_dir(self.root())
            .env_remove("POCKET_TTS_LOG")
            .env_remove("RUST_BACKTRACE")
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pocket-tts-cli");
        {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            // A command that fails before reading stdin closes it: ignore the broken pipe.
            let _ = pipe.write_all(stdin);
        }
        child.wait_with_output().expect("wait for pocket-tts-cli")
    }

    /// Starts the CLI in the sandbox without waiting: stdin closed, stderr piped, stdout as
    /// given.
    pub fn spawn(&self, args: &Args, stdout: Stdio) -> std::process::Child {
        Command::new(BIN)
            .args(args.to_vec())
            .current_dir(self.root())
            .env("HF_HUB_OFFLINE", "1")
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pocket-tts-cli")
    }

    /// Runs a command that must succeed and returns its output.
    pub fn run_ok(&self, args: &Args, stdin: &[u8]) -> Output {
        let out = self.run(args, stdin);
        assert!(
            out.status.success(),
            "{args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Generates into a new file and returns its samples (checked to be a well-formed
    /// output WAV).
    pub fn generate_samples(&self, args: Args) -> Vec<i16> {
        let dir = tempfile::tempdir_in(self.root()).unwrap();
        let path = dir.path().join(OUT_NAME);
        self.run_ok(&args.set("--output-path", utf8(&path)), b"");
        read_output_wav(&path)
    }

    /// Runs `stream` with `args` and `--format pcm-s16le`, and returns its samples (no
    /// header, no trailing silence).
    pub fn stream_samples(&self, args: Args) -> Vec<i16> {
        let out = self.run_ok(&args.set("--format", "pcm-s16le"), b"");
        i16s(&out.stdout)
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

/// A command line: the subcommand, then `--flag value` pairs (set or replaced by name)
/// and bare arguments.
#[derive(Debug, Clone)]
pub struct Args {
    pub command: String,
    pub flags: Vec<(String, Option<String>)>,
    pub positional: Vec<String>,
}

impl Args {
    pub fn new(command: &str) -> Self {
        Self {
            command: command.into(),
            flags: Vec::new(),
            positional: Vec::new(),
        }
    }

    /// Sets `flag` to `value`, replacing a previous value.
    pub fn set(mut self, flag: &str, value: impl Into<String>) -> Self {
        let value = Some(value.into());
        match self.flags.iter_mut().find(|(f, _)| f == flag) {
            Some(entry) => entry.1 = value,
            None => self.flags.push((flag.into(), value)),
        }
        self
    }

    /// Adds a flag without a value (`-q`).
    pub fn switch(mut self, flag: &str) -> Self {
        self.flags.push((flag.into(), None));
        self
    }

    pub fn unset(mut self, flag: &str) -> Self {
        self.flags.retain(|(f, _)| f != flag);
        self
    }

    pub fn arg(mut self, value: impl Into<String>) -> Self {
        self.positional.push(value.into());
        self
    }

    pub fn to_vec(&self) -> Vec<String> {
        let mut v = vec![self.command.clone()];
        for (flag, value) in &self.flags {
            v.push(flag.clone());
            v.extend(value.clone());
        }
        v.extend(self.positional.iter().cloned());
        v
    }
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// Reads an output WAV and checks it: 24 kHz mono 16-bit PCM, whole frames of speech
/// followed by exactly 200 ms of silence.
pub fn read_output_wav(path: &Path) -> Vec<i16> {
    let reader = hound::WavReader::open(path)
        .unwrap_or_else(|e| panic!("{} is not a readable WAV: {e}", path.display()));
    let spec = reader.spec();
    assert_eq!(
        spec.sample_rate,
        SAMPLE_RATE,
        "sample rate of {}",
        path.display()
    );
    assert_eq!(spec.channels, 1, "channels of {}", path.display());
    assert_eq!(
        spec.bits_per_sample,
        16,
        "bits per sample of {}",
        path.display()
    );
    assert_eq!(
        spec.sample_format,
        hound::SampleFormat::Int,
        "format of {}",
        path.display()
    );
    let samples: Vec<i16> = reader
        .into_samples::<i16>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{}: bad sample data: {e}", path.display()));
    check_speech_layout(&samples, &path.display().to_string());
    samples
}

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

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// Names of the entries of a folder, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Checks a refused command: exit status 1, no panic, nothing on stdout, and a one-line
/// `error: …` message containing every needle (with `verbose`, INFO log lines may come
/// before it; nothing else may). Returns the error line.
pub fn check_refusal(case: &str, out: &Output, needles: &[&str], verbose: bool) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{case}: the CLI panicked:\n{stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{case}: expected exit status 1, got {}; stderr:\n{stderr}",
        out.status
    );
    assert!(
        out.stdout.is_empty(),
        "{case}: a failing run wrote {} bytes to stdout",
        out.stdout.len()
    );
    let lines: Vec<&str> = stderr.lines().collect();
    let (last, before) = lines
        .split_last()
        .unwrap_or_else(|| panic!("{case}: nothing on stderr"));
    assert!(
        last.starts_with("error: "),
        "{case}: the last stderr line should be the error:\n{stderr}"
    );
    if verbose {
        for line in before {
            assert!(
                line.starts_with(" INFO "),
                "{case}: only progress (INFO) lines may precede the error, found {line:?}:\n{stderr}"
            );
        }
    } else {
        assert!(
            before.is_empty(),
            "{case}: with -q, stderr must be the error line alone:\n{stderr}"
        );
    }
    for needle in needles {
        assert!(
            last.contains(needle),
            "{case}: the error should mention {needle:?}:\n{last}"
        );
    }
    last.to_string()
}

/// Runs a `generate` (or `export-voice`) command that must be refused, twice:
///
/// 1. at the default verbosity, with the output path in a new empty folder: that folder
///    must still be empty afterwards (no output, no temporary file);
/// 2. with `-q`, with a file already at the output path: it must be left untouched and
///    be the folder's only entry, and stderr must be the error line alone.
///
/// Both runs must give the same error line, which is returned.
pub fn assert_refused(
    sb: &Sandbox,
    case: &str,
    args: Args,
    stdin: &[u8],
    needles: &[&str],
) -> String {
    let n = fs::read_dir(sb.root()).unwrap().count();
    let empty = sb.folder(&format!("out-{n}-empty"));
    let args1 = args
        .clone()
        .set("--output-path", utf8(&empty.join(OUT_NAME)));
    let line1 = check_refusal(case, &sb.run(&args1, stdin), needles, true);
    assert_eq!(
        listing(&empty),
        Vec::<String>::new(),
        "{case}: the failing run left files in the output folder"
    );

    let occupied = sb.folder(&format!("out-{n}-occupied"));
    let previous = occupied.join(OUT_NAME);
    fs::write(&previous, PREVIOUS).unwrap();
    let args2 = args.switch("-q").set("--output-path", utf8(&previous));
    let line2 = check_refusal(
        &format!("{case} (-q)"),
        &sb.run(&args2, stdin),
        needles,
        false,
    );
    assert_eq!(
        listing(&occupied),
        vec![OUT_NAME.to_string()],
        "{case}: the failing run left files next to the previous output"
    );
    assert_eq!(
        fs::read(&previous).unwrap(),
        PREVIOUS,
        "{case}: the failing run changed the file already at the output path"
    );
    assert_eq!(line1, line2, "{case}: the error differs with -q");
    line1
}

/// [`assert_refused`] for `generate` with the working setup and one flag changed.
pub fn refused_with(flag: &str, value: &str, needles: &[&str]) -> String {
    let sb = Sandbox::new();
    let case = format!("{flag} {value:?}");
    assert_refused(&sb, &case, sb.generate().set(flag, value), b"", needles)
}

/// [`assert_refused`] for `generate --voice <path>`.
pub fn refused_voice(sb: &Sandbox, voice: &Path, needles: &[&str]) -> String {
    let case = format!("--voice {}", voice.display());
    assert_refused(
        sb,
        &case,
        sb.generate().set("--voice", utf8(voice)),
        b"",
        needles,
    )
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

/// Writes a mono 16-bit WAV at 24 kHz.
pub fn write_wav(path: &Path, samples: &[i16]) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for &s in samples {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
}

/// An owned tensor to serialize.
pub struct Owned {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

pub fn f32_tensor(shape: &[usize]) -> Owned {
    let n: usize = shape.iter().product();
    Owned {
        dtype: Dtype::F32,
        shape: shape.to_vec(),
        data: (0..n)
            .flat_map(|i| (i as f32 * 0.01).to_le_bytes())
            .collect(),
    }
}

pub fn i64_tensor(values: &[i64]) -> Owned {
    Owned {
        dtype: Dtype::I64,
        shape: vec![values.len()],
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

pub fn write_safetensors(path: &Path, tensors: &[(String, Owned)]) {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, t)| {
            let view = TensorView::new(t.dtype, t.shape.clone(), &t.data).unwrap();
            (name.clone(), view)
        })
        .collect();
    safetensors::tensor::serialize_to_file(views, None, path).unwrap();
}

/// The tensors of a safetensors file as owned copies, sorted by name.
pub fn read_safetensors(path: &Path) -> Vec<(String, Owned)> {
    let bytes = fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut tensors: Vec<(String, Owned)> = st
        .tensors()
        .into_iter()
        .map(|(name, view)| {
            let owned = Owned {
                dtype: view.dtype(),
                shape: view.shape().to_vec(),
                data: view.data().to_vec(),
            };
            (name, owned)
        })
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    tensors
}

/// The tiny checkpoint's tensors as owned copies, sorted by name.
pub fn tiny_checkpoint() -> Vec<(String, Owned)> {
    read_safetensors(&tiny("model.safetensors"))
}

/// Index of the first 2-D, non-square tensor of the FlowLM (so that swapping its
/// dimensions gives a wrong shape with the same number of values).
pub fn non_square_matrix(tensors: &[(String, Owned)]) -> usize {
    tensors
        .iter()
        .position(|(name, t)| {
            name.starts_with("flow_lm.") && t.shape.len() == 2 && t.shape[0] != t.shape[1]
        })
        .expect("the tiny checkpoint has a non-square FlowLM matrix")
}

/// Signal-to-noise ratio of `b` against `a`, in dB (`a` is the signal, `b − a` the noise).
///
/// # Panics
/// If the lengths differ (e.g. EOS on another frame).
pub fn snr_db<T: Copy + Into<f64>>(a: &[T], b: &[T]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ (EOS on another frame?)");
    let signal: f64 = a.iter().map(|&x| x.into().powi(2)).sum();
    let noise: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x.into() - y.into()).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-30)).log10()
}
