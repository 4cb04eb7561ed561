//! End-to-end tests of the `pocket-tts-cli` binary on the tiny random-weight model
//! (`tests/fixtures/tiny`).
//!
//! - Happy paths: the WAV written (24 kHz mono PCM16, whole 80 ms frames plus 200 ms of
//!   silence), streaming to stdout, text from stdin, exported voices, seeding.
//! - `stream` (WAV, raw PCM16 and f32 on stdout), `--measure-first-chunk`, `--stats-json`,
//!   `--threads`.
//! - Bad input: every refusal exits with status 1 and prints ONE line starting with
//!   `error:` that names the flag or file at fault, never panics, writes nothing to stdout,
//!   and leaves the output folder as it was (no new file, no temporary file, a previous
//!   file untouched).
//!
//! The fixture's config names its files relative to its folder, and its `tokenizer.model`
//! is an uncommitted symlink, so each test writes a copy of the config into a temporary
//! folder with absolute paths: the fixture's checkpoint and the official tokenizer committed
//! under `crates/pocket-tts-core/tests/fixtures/assets`.

mod common;

use std::fs;
use std::path::Path;

use common::*;
use pocket_tts_core::audio::{STREAMING_WAV_NFRAMES, WAV_TRAILING_SILENCE_SECONDS};

// ---------------------------------------------------------------------------------------
// Happy paths
// ---------------------------------------------------------------------------------------

#[test]
fn generate_writes_24khz_mono_pcm16_of_whole_frames_and_reports_timings() {
    let sb = Sandbox::new();
    let out_dir = sb.folder("out");
    let path = out_dir.join(OUT_NAME);
    let out = sb.run_ok(&sb.generate().set("--output-path", utf8(&path)), b"");
    assert!(
        out.stdout.is_empty(),
        "nothing goes to stdout with a file output"
    );
    assert_eq!(
        listing(&out_dir),
        vec![OUT_NAME.to_string()],
        "no temporary file left"
    );

    let samples = read_output_wav(&path);
    assert_eq!(
        TRAILING_SILENCE,
        (f64::from(SAMPLE_RATE) * WAV_TRAILING_SILENCE_SECONDS) as usize
    );
    // The canonical 44-byte header with the sizes patched.
    let bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[0..4], b"RIFF");
    assert_eq!(&bytes[8..16], b"WAVEfmt ");
    assert_eq!(&bytes[36..40], b"data");
    assert_eq!(u32_at(&bytes, 40) as usize, samples.len() * 2);
    assert_eq!(u32_at(&bytes, 4) as usize, bytes.len() - 8);

    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "model loaded in",
        "voice ",
        "ready in",
        "text prefill",
        "first audio after",
        "real-time factor",
        "results written in",
    ] {
        assert!(
            stderr.contains(needle),
            "stderr lacks {needle:?}:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("WARN") && !stderr.contains("ERROR"),
        "{stderr}"
    );

    // -q: nothing on stderr.
    let quiet = sb.run_ok(
        &sb.generate().switch("-q").set("--output-path", utf8(&path)),
        b"",
    );
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    assert_eq!(
        read_output_wav(&path),
        samples,
        "same settings, same output"
    );
}

#[test]
fn generate_to_stdout_streams_a_wav_with_the_same_pcm_as_the_file() {
    let sb = Sandbox::new();
    let path = sb.path(OUT_NAME);
    sb.run_ok(&sb.generate().set("--output-path", utf8(&path)), b"");
    let file = fs::read(&path).unwrap();

    let before = listing(sb.root());
    let out = sb.run_ok(&sb.generate().set("--output-path", "-"), b"");
    assert_eq!(
        listing(sb.root()),
        before,
        "--output-path - must not create a file"
    );
    let stdout = out.stdout;
    assert!(
        stdout.len() > WAV_HEADER_LEN,
        "stdout holds {} bytes",
        stdout.len()
    );
    assert_eq!(&stdout[0..4], b"RIFF");
    assert_eq!(&stdout[8..16], b"WAVEfmt ");
    assert_eq!(&stdout[36..40], b"data");
    // The header of an unseekable stream is never patched: it claims
    // STREAMING_WAV_NFRAMES mono 16-bit frames, like Python's wave.setnframes(1_000_000_000).
    assert_eq!(STREAMING_WAV_NFRAMES, 1_000_000_000);
    assert_eq!(u32_at(&stdout, 40), 2_000_000_000, "data chunk size");
    assert_eq!(u32_at(&stdout, 4), 2_000_000_036, "RIFF chunk size");
    // Format fields equal the file's (PCM, mono, 24 kHz, 16 bits).
    assert_eq!(&stdout[12..36], &file[12..36], "fmt chunk");
    assert_eq!(u32_at(&stdout, 24), SAMPLE_RATE);
    assert!(
        stdout[WAV_HEADER_LEN..] == file[WAV_HEADER_LEN..],
        "the PCM on stdout ({} bytes) differs from the file's ({} bytes)",
        stdout.len() - WAV_HEADER_LEN,
        file.len() - WAV_HEADER_LEN
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("real-time factor"), "{stderr}");
    assert!(!stderr.contains("results written"), "{stderr}");
}

#[test]
fn generate_reads_the_text_from_stdin() {
    let sb = Sandbox::new();
    let from_flag = sb.generate_samples(sb.generate());
    for stdin in [format!("{TEXT}\n"), TEXT.to_string()] {
        let dir = tempfile::tempdir_in(sb.root()).unwrap();
        let path = dir.path().join(OUT_NAME);
        let args = sb
            .generate()
            .set("--text", "-")
            .set("--output-path", utf8(&path));
        sb.run_ok(&args, stdin.as_bytes());
        assert!(
            read_output_wav(&path) == from_flag,
            "--text - with stdin {stdin:?} differs from --text {TEXT:?}"
        );
    }
}

#[test]
fn exported_voice_gives_the_same_speech_as_its_audio() {
    let sb = Sandbox::new();
    let out_dir = sb.folder("voices");
    let state = out_dir.join("voice.safetensors");
    let out = sb.run_ok(
        &Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .arg(utf8(&tiny("voice_excerpt.wav")))
            .arg(utf8(&state)),
        b"",
    );
    assert_eq!(
        listing(&out_dir),
        vec!["voice.safetensors".to_string()],
        "export-voice leaves only its output"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("voice.safetensors"), "{stderr}");

    let from_audio = sb.generate_samples(sb.generate());
    let from_state = sb.generate_samples(sb.generate().set("--voice", utf8(&state)));
    assert!(
        from_state == from_audio,
        "--voice {} ({} samples) differs from --voice voice_excerpt.wav ({} samples)",
        state.display(),
        from_state.len(),
        from_audio.len()
    );
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let sb = Sandbox::new();
    let sampled = |seed: &str| {
        sb.generate_samples(
            sb.generate()
                .set("--temperature", "0.3")
                .set("--seed", seed),
        )
    };
    let a = sampled("7");
    let b = sampled("7");
    let c = sampled("8");
    assert!(
        a == b,
        "--seed 7 at temperature 0.3 gave two different outputs"
    );
    assert!(a != c, "--seed 7 and --seed 8 gave the same output");
}

// ---------------------------------------------------------------------------------------
// Bad text
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_empty_text() {
    refused_with("--text", "", &["--text", "empty"]);
}

#[test]
fn refuses_whitespace_only_text() {
    refused_with("--text", " \t\n  ", &["--text", "empty"]);
}

#[test]
fn refuses_empty_stdin_text() {
    let sb = Sandbox::new();
    let args = sb.generate().set("--text", "-");
    assert_refused(
        &sb,
        "--text - (empty stdin)",
        args.clone(),
        b"",
        &["--text", "empty"],
    );
    assert_refused(
        &sb,
        "--text - (blank stdin)",
        args,
        b"  \n\n",
        &["--text", "empty"],
    );
}

#[test]
fn refuses_non_utf8_stdin_text() {
    let sb = Sandbox::new();
    let args = sb.generate().set("--text", "-");
    assert_refused(
        &sb,
        "--text - (bytes)",
        args,
        &[0xff, 0xfe, 0x80],
        &["--text -", "stdin"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad voices
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_missing_voice_file() {
    let sb = Sandbox::new();
    let voice = sb.path("nonexistent.wav");
    refused_voice(
        &sb,
        &voice,
        &["--voice", "nonexistent.wav", "does not exist"],
    );
    let state = sb.path("nonexistent.safetensors");
    refused_voice(
        &sb,
        &state,
        &["--voice", "nonexistent.safetensors", "does not exist"],
    );
}

#[test]
fn refuses_corrupt_audio() {
    let sb = Sandbox::new();
    let voice = sb.file("corrupt.wav", noise_bytes(5000, 1));
    let line = refused_voice(
        &sb,
        &voice,
        &["--voice", "corrupt.wav", "Supported formats"],
    );
    assert!(!line.contains("probe reached EOF"), "{line}");
}

#[test]
fn refuses_a_wav_without_samples() {
    let sb = Sandbox::new();
    let voice = sb.path("empty.wav");
    write_wav(&voice, &[]);
    refused_voice(&sb, &voice, &["--voice", "empty.wav", "no samples"]);
}

#[test]
fn refuses_a_silent_wav() {
    let sb = Sandbox::new();
    let voice = sb.path("silent.wav");
    write_wav(&voice, &vec![0; SAMPLE_RATE as usize]);
    refused_voice(&sb, &voice, &["--voice", "silent.wav", "silent"]);
}

#[test]
fn refuses_a_text_file_named_mp3() {
    let sb = Sandbox::new();
    let voice = sb.file(
        "notes.mp3",
        "These are not the droids you are looking for.\n",
    );
    refused_voice(
        &sb,
        &voice,
        &["--voice", "notes.mp3", "cannot read audio file"],
    );
}

#[test]
fn refuses_a_checkpoint_as_voice_state() {
    let sb = Sandbox::new();
    let voice = tiny("model.safetensors");
    refused_voice(
        &sb,
        &voice,
        &["--voice", "model.safetensors", "not a voice state"],
    );
}

#[test]
fn refuses_a_safetensors_of_unrelated_tensors_as_voice_state() {
    let sb = Sandbox::new();
    let voice = sb.path("unrelated.safetensors");
    write_safetensors(&voice, &[("weight".to_string(), f32_tensor(&[3, 4]))]);
    refused_voice(
        &sb,
        &voice,
        &["--voice", "unrelated.safetensors", "not a voice state"],
    );
}

#[test]
fn refuses_a_voice_state_of_the_wrong_shape() {
    let sb = Sandbox::new();
    let voice = sb.path("other_model.safetensors");
    // The tiny FlowLM has 2 layers of 4 heads of width 16; this state has 3 heads of 8.
    let mut tensors = Vec::new();
    for layer in 0..2 {
        let p = format!("transformer.layers.{layer}.self_attn");
        tensors.push((format!("{p}/cache"), f32_tensor(&[2, 1, 5, 3, 8])));
        tensors.push((format!("{p}/offset"), i64_tensor(&[5])));
        tensors.push((format!("{p}/pad"), i64_tensor(&[0])));
    }
    write_safetensors(&voice, &tensors);
    refused_voice(
        &sb,
        &voice,
        &[
            "--voice",
            "transformer.layers.0.self_attn/cache",
            "[2, 1, 5, 3, 8]",
            "expected [2, 1, T, 4, 16]",
        ],
    );
}

#[test]
fn refuses_a_voice_state_that_is_not_safetensors() {
    let sb = Sandbox::new();
    let voice = sb.file("garbage.safetensors", noise_bytes(300, 2));
    refused_voice(
        &sb,
        &voice,
        &["--voice", "garbage.safetensors", "safetensors"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad models
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_config_whose_checkpoint_is_missing() {
    let sb = Sandbox::new();
    let weights = sb.path("no/such/model.safetensors");
    let config = sb.config_with("missing_weights.yaml", &weights, "");
    let line = refused_with("--config", utf8(&config), &["--config", "weights_path"]);
    assert!(line.contains(utf8(&weights)), "{line}");
}

#[test]
fn refuses_a_checkpoint_with_a_tensor_removed() {
    let sb = Sandbox::new();
    let mut tensors = tiny_checkpoint();
    let (name, removed) = tensors.remove(non_square_matrix(&tensors));
    let weights = sb.path("removed.safetensors");
    write_safetensors(&weights, &tensors);
    let config = sb.config_with("removed.yaml", &weights, "");
    let needles = [
        "removed.safetensors",
        &format!("missing tensor {name}"),
        &format!("{:?}", removed.shape),
    ];
    refused_with("--config", utf8(&config), &needles);
}

#[test]
fn refuses_a_checkpoint_with_a_tensor_reshaped() {
    let sb = Sandbox::new();
    let mut tensors = tiny_checkpoint();
    let i = non_square_matrix(&tensors);
    let expected = tensors[i].1.shape.clone();
    tensors[i].1.shape.reverse();
    let name = tensors[i].0.clone();
    let weights = sb.path("reshaped.safetensors");
    write_safetensors(&weights, &tensors);
    let config = sb.config_with("reshaped.yaml", &weights, "");
    // Both shapes, e.g. "tensor … has shape [64, 4001], expected [4001, 64]".
    let problem = format!(
        "tensor {name} has shape {:?}, expected {expected:?}",
        tensors[i].1.shape
    );
    refused_with(
        "--config",
        utf8(&config),
        &["reshaped.safetensors", &problem],
    );
}

#[test]
fn refuses_a_config_whose_tokenizer_is_missing() {
    let sb = Sandbox::new();
    let text = fs::read_to_string(&sb.config).unwrap();
    let tok = yaml_quote(&tokenizer());
    let missing = sb.path("no_tokenizer.model");
    assert!(text.contains(&tok));
    let config = sb.file("no_tok.yaml", text.replace(&tok, &yaml_quote(&missing)));
    refused_with(
        "--config",
        utf8(&config),
        &["--config", "no_tokenizer.model"],
    );
}

#[test]
fn refuses_an_unknown_language() {
    let sb = Sandbox::new();
    let args = sb.generate().unset("--config").set("--language", "klingon");
    assert_refused(
        &sb,
        "--language klingon",
        args,
        b"",
        &["--language", "klingon", "english"],
    );
}

#[test]
fn refuses_config_and_language_together() {
    refused_with("--language", "english", &["--config", "--language"]);
}

#[test]
fn refuses_a_config_with_an_unknown_field() {
    let sb = Sandbox::new();
    let config = sb.config_with("typo.yaml", &tiny("model.safetensors"), "bogus_field: 3\n");
    refused_with(
        "--config",
        utf8(&config),
        &["--config", "typo.yaml", "bogus_field"],
    );
}

#[test]
fn refuses_a_config_that_is_not_yaml() {
    let sb = Sandbox::new();
    let binary = sb.file("binary.yaml", noise_bytes(400, 3));
    let line = refused_with(
        "--config",
        utf8(&binary),
        &["--config", "binary.yaml", "YAML"],
    );
    assert_eq!(
        line.matches("UTF-8").count(),
        1,
        "the cause is told once: {line}"
    );
    let prose = sb.file("prose.yaml", "This is not a config, just a sentence.\n");
    refused_with("--config", utf8(&prose), &["--config", "prose.yaml"]);
    let broken = sb.file("broken.yaml", "flow_lm: [1, 2\n  mimi: }\n");
    refused_with("--config", utf8(&broken), &["--config", "broken.yaml"]);
}

#[test]
fn refuses_a_missing_config_or_one_not_named_yaml() {
    let sb = Sandbox::new();
    let missing = sb.path("missing.yaml");
    refused_with(
        "--config",
        utf8(&missing),
        &["--config", "missing.yaml", "does not exist"],
    );
    let json = sb.file("config.json", "{}");
    refused_with(
        "--config",
        utf8(&json),
        &["--config", "config.json", ".yaml"],
    );
}

// ---------------------------------------------------------------------------------------
// Bad numbers and devices
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_a_negative_or_nan_temperature() {
    refused_with("--temperature", "-1", &["--temperature"]);
    refused_with("--temperature", "NaN", &["--temperature"]);
}

#[test]
fn refuses_zero_sampler_decode_steps() {
    refused_with("--sampler-decode-steps", "0", &["--sampler-decode-steps"]);
}

#[test]
fn refuses_zero_max_tokens() {
    refused_with("--max-tokens", "0", &["--max-tokens"]);
}

#[test]
fn refuses_a_zero_or_negative_noise_clamp() {
    refused_with("--noise-clamp", "0", &["--noise-clamp"]);
    refused_with("--noise-clamp", "-1", &["--noise-clamp"]);
}

#[test]
fn refuses_a_nan_eos_threshold() {
    refused_with("--eos-threshold", "NaN", &["--eos-threshold"]);
}

#[test]
fn refuses_cuda() {
    refused_with("--device", "cuda", &["--device cuda", "cpu"]);
}

// ---------------------------------------------------------------------------------------
// Bad output paths
// ---------------------------------------------------------------------------------------

#[test]
fn refuses_an_output_path_in_a_missing_folder() {
    let sb = Sandbox::new();
    let path = sb.path("no_such_folder").join(OUT_NAME);
    let args = sb.generate().set("--output-path", utf8(&path));
    let line = check_refusal("missing folder", &sb.run(&args, b""), &[], true);
    for needle in ["--output-path", "no_such_folder", "does not exist"] {
        assert!(
            line.contains(needle),
            "the error should mention {needle:?}: {line}"
        );
    }
    assert!(
        !sb.path("no_such_folder").exists(),
        "the folder must not be created"
    );
}

#[test]
fn refuses_an_output_path_that_is_a_folder() {
    let sb = Sandbox::new();
    let folder = sb.folder("existing_folder");
    let args = sb.generate().set("--output-path", utf8(&folder));
    let line = check_refusal("folder", &sb.run(&args, b""), &[], true);
    for needle in ["--output-path", "existing_folder", "folder"] {
        assert!(
            line.contains(needle),
            "the error should mention {needle:?}: {line}"
        );
    }
    assert_eq!(
        listing(&folder),
        Vec::<String>::new(),
        "nothing written in the folder"
    );
}

#[test]
fn failing_run_to_stdout_writes_nothing_there() {
    let sb = Sandbox::new();
    let voice = sb.file("corrupt.wav", noise_bytes(5000, 4));
    let args = sb
        .generate()
        .set("--voice", utf8(&voice))
        .set("--output-path", "-");
    let before = listing(sb.root());
    // check_refusal asserts that stdout is empty: no WAV header before the failure.
    check_refusal(
        "stdout",
        &sb.run(&args, b""),
        &["--voice", "corrupt.wav"],
        true,
    );
    assert_eq!(listing(sb.root()), before);
}

// ---------------------------------------------------------------------------------------
// export-voice refusals
// ---------------------------------------------------------------------------------------

#[test]
fn export_voice_refuses_bad_audio_and_leaves_nothing() {
    let sb = Sandbox::new();
    let corrupt = sb.file("corrupt.wav", noise_bytes(5000, 5));
    let out_dir = sb.folder("voices");
    let target = out_dir.join("voice.safetensors");
    let args = Args::new("export-voice")
        .set("--config", utf8(&sb.config))
        .arg(utf8(&corrupt))
        .arg(utf8(&target));
    check_refusal(
        "export-voice corrupt",
        &sb.run(&args, b""),
        &["corrupt.wav"],
        true,
    );
    assert_eq!(
        listing(&out_dir),
        Vec::<String>::new(),
        "no file, no partial file"
    );

    // A voice state already there stays as it was.
    fs::write(&target, PREVIOUS).unwrap();
    let quiet = args.switch("-q");
    check_refusal(
        "export-voice corrupt -q",
        &sb.run(&quiet, b""),
        &["corrupt.wav"],
        false,
    );
    assert_eq!(listing(&out_dir), vec!["voice.safetensors".to_string()]);
    assert_eq!(fs::read(&target).unwrap(), PREVIOUS);
}

#[test]
fn export_voice_refuses_bad_export_paths() {
    let sb = Sandbox::new();
    let audio = tiny("voice_excerpt.wav");
    let export = |target: &Path| {
        Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .arg(utf8(&audio))
            .arg(utf8(target))
    };
    let wav = sb.path("voice.wav");
    let needles = ["EXPORT_PATH", "voice.wav", ".safetensors"];
    check_refusal(
        "not .safetensors",
        &sb.run(&export(&wav), b""),
        &needles,
        true,
    );
    assert!(!wav.exists());

    let missing = sb.path("no_such_folder").join("voice.safetensors");
    let needles = ["EXPORT_PATH", "no_such_folder", "does not exist"];
    check_refusal(
        "missing folder",
        &sb.run(&export(&missing), b""),
        &needles,
        true,
    );
    assert!(!sb.path("no_such_folder").exists());

    let folder = sb.folder("folder.safetensors");
    let needles = ["EXPORT_PATH", "folder.safetensors", "is a folder"];
    check_refusal("folder", &sb.run(&export(&folder), b""), &needles, true);
    assert_eq!(listing(&folder), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------
// stream, --stats-json, --threads
// ---------------------------------------------------------------------------------------

/// Little-endian i16s.
fn i16s(bytes: &[u8]) -> Vec<i16> {
    assert_eq!(bytes.len() % 2, 0, "odd number of PCM16 bytes");
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// Little-endian f32s.
fn f32s(bytes: &[u8]) -> Vec<f32> {
    assert_eq!(bytes.len() % 4, 0, "PCM f32 bytes not a multiple of 4");
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Parses a `--stats-json` file and checks the keys and types every report has, and that
/// its figures agree with each other. Returns the object.
fn read_stats(path: &Path) -> serde_json::Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()));
    let obj = v.as_object().expect("the stats are one JSON object");
    let num = |k: &str| {
        obj.get(k)
            .unwrap_or_else(|| panic!("stats lack {k:?}: {text}"))
            .as_f64()
            .unwrap_or_else(|| panic!("stats {k:?} is not a number: {text}"))
    };
    for k in [
        "load_ms",
        "voice_ms",
        "prefill_ms",
        "generation_ms",
        "audio_ms",
    ] {
        assert!(num(k) >= 0.0, "{k} < 0: {text}");
    }
    let frames = obj["frames"]
        .as_u64()
        .unwrap_or_else(|| panic!("frames is not an integer: {text}"));
    assert!(frames > 0, "{text}");
    assert_eq!(
        frames as f64 * 80.0,
        num("audio_ms"),
        "audio_ms must be frames * 80: {text}"
    );
    let rtf = num("rtf");
    let expected = num("generation_ms") / num("audio_ms");
    assert!(
        (rtf - expected).abs() <= 1e-9 * expected.max(1.0),
        "rtf {rtf} != generation_ms / audio_ms {expected}"
    );
    for k in ["lm_step_ms", "decode_frame_ms"] {
        let d = obj[k]
            .as_object()
            .unwrap_or_else(|| panic!("{k} is not an object: {text}"));
        let (mean, p50, p95) = (
            d["mean"].as_f64().unwrap(),
            d["p50"].as_f64().unwrap(),
            d["p95"].as_f64().unwrap(),
        );
        assert!(
            mean > 0.0 && p50 > 0.0 && p50 <= p95,
            "{k}: mean {mean}, p50 {p50}, p95 {p95}"
        );
        assert_eq!(d.len(), 3, "{k} has exactly mean, p50, p95: {text}");
    }
    match &obj["peak_rss_mb"] {
        serde_json::Value::Null => {
            if cfg!(target_os = "linux") {
                panic!("peak_rss_mb is null on Linux (VmHWM): {text}");
            }
        }
        m => assert!(m.as_f64().unwrap() > 1.0, "peak_rss_mb {m}"),
    }
    assert!(obj["runs"].as_u64().unwrap() >= 1);
    assert!(obj["threads"].as_u64().unwrap() >= 1);
    v
}

/// Nothing but `keep` in `dir` (no temporary file left by the atomic writes).
fn assert_only(dir: &Path, keep: &[&str]) {
    let mut want: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(listing(dir), want, "unexpected files in {}", dir.display());
}

#[test]
fn stream_writes_wav_pcm16_and_f32_consistently() {
    let sb = Sandbox::new();
    let file = sb.generate_samples(sb.generate());
    let before = listing(sb.root());
    let run = |format: &str| {
        let out = sb.run_ok(&sb.stream().set("--format", format), b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("first audio after"), "{stderr}");
        assert!(stderr.contains("real-time factor"), "{stderr}");
        assert!(
            !stderr.contains('\r'),
            "no progress bar off a terminal: {stderr}"
        );
        out.stdout
    };

    // WAV: the header of an unseekable stream, then the same PCM as `generate`'s file.
    let wav = run("wav");
    assert_eq!(&wav[0..4], b"RIFF");
    assert_eq!(&wav[8..16], b"WAVEfmt ");
    assert_eq!(&wav[36..40], b"data");
    assert_eq!(
        u32_at(&wav, 40),
        2 * STREAMING_WAV_NFRAMES,
        "data chunk size"
    );
    assert_eq!(u32_at(&wav, 4), 2 * STREAMING_WAV_NFRAMES + 36, "RIFF size");
    assert_eq!(u32_at(&wav, 24), SAMPLE_RATE);
    let wav_pcm = i16s(&wav[WAV_HEADER_LEN..]);
    check_speech_layout(&wav_pcm, "stream --format wav");
    assert!(wav_pcm == file, "stream's WAV differs from generate's");
    let speech = &wav_pcm[..wav_pcm.len() - TRAILING_SILENCE];

    // Raw PCM16: the WAV's samples, no header, no trailing silence.
    let s16 = run("pcm-s16le");
    assert_eq!(s16.len(), speech.len() * 2, "pcm-s16le size");
    assert!(i16s(&s16) == speech, "pcm-s16le differs from the WAV's PCM");

    // Raw f32: the same frames before PCM16 rounding.
    let f32le = run("pcm-f32le");
    assert_eq!(f32le.len(), speech.len() * 4, "pcm-f32le size");
    let floats = f32s(&f32le);
    assert_eq!(floats.len() % FRAME_SAMPLES, 0);
    for (i, (&x, &q)) in floats.iter().zip(speech).enumerate() {
        assert!(x.is_finite(), "sample {i} is {x}");
        assert_eq!(
            (x.clamp(-1.0, 1.0) * 32767.0) as i16,
            q,
            "sample {i}: f32 {x} does not convert to the WAV's {q}"
        );
        assert!(
            (x.clamp(-1.0, 1.0) * 32767.0 - f32::from(q)).abs() < 1.0,
            "sample {i}: f32 {x} vs PCM16 {q}"
        );
    }
    assert_eq!(listing(sb.root()), before, "stream writes no file");
}

#[test]
fn stream_measure_first_chunk_reports_min_median_max_and_its_parts() {
    let sb = Sandbox::new();
    let speech = sb.generate_samples(sb.generate());
    let frames = ((speech.len() - TRAILING_SILENCE) / FRAME_SAMPLES) as u64;
    let dir = sb.folder("stats");
    let json = dir.join("ttfa.json");
    let out = sb.run_ok(
        &sb.stream()
            .switch("--measure-first-chunk")
            .set("--runs", "3")
            .set("--stats-json", utf8(&json)),
        b"",
    );
    assert!(out.stdout.is_empty(), "the audio is discarded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "time to first audio over 3 runs",
        "first audio",
        "text prefill",
        "first FlowLM step",
        "first Mimi decode",
        "min",
        "median",
        "max",
        "real-time factor",
    ] {
        assert!(
            stderr.contains(needle),
            "stderr lacks {needle:?}:\n{stderr}"
        );
    }
    assert_only(&dir, &["ttfa.json"]);
    let v = read_stats(&json);
    let ttfa = v["first_chunk_ms"]
        .as_object()
        .expect("first_chunk_ms is {min, p50, max} with --measure-first-chunk");
    let (min, p50, max) = (
        ttfa["min"].as_f64().unwrap(),
        ttfa["p50"].as_f64().unwrap(),
        ttfa["max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= p50 && p50 <= max, "{ttfa:?}");
    assert_eq!(v["runs"], 3);
    // Totals over the three (deterministic) runs.
    assert_eq!(v["frames"].as_u64().unwrap(), 3 * frames);
    assert!(max <= v["generation_ms"].as_f64().unwrap());

    // --keep-audio: the first run's audio, as `stream` writes it.
    let kept = sb.run_ok(
        &sb.stream()
            .switch("--measure-first-chunk")
            .set("--runs", "2")
            .switch("--keep-audio")
            .set("--format", "pcm-s16le"),
        b"",
    );
    assert!(i16s(&kept.stdout) == speech[..speech.len() - TRAILING_SILENCE]);
}

#[test]
fn generate_and_stream_write_stats_json() {
    let sb = Sandbox::new();
    let dir = sb.folder("out");
    let wav = dir.join(OUT_NAME);
    let json = dir.join("stats.json");
    sb.run_ok(
        &sb.generate()
            .set("--output-path", utf8(&wav))
            .set("--stats-json", utf8(&json)),
        b"",
    );
    assert_only(&dir, &[OUT_NAME, "stats.json"]);
    let v = read_stats(&json);
    let samples = read_output_wav(&wav);
    let frames = ((samples.len() - TRAILING_SILENCE) / FRAME_SAMPLES) as u64;
    assert_eq!(v["frames"].as_u64().unwrap(), frames, "frames vs the WAV");
    assert_eq!(v["runs"], 1);
    let first = v["first_chunk_ms"]
        .as_f64()
        .expect("first_chunk_ms is a number for one generation");
    assert!(first > 0.0 && first <= v["generation_ms"].as_f64().unwrap());
    // One chunk: its prefill comes before the first audio.
    assert!(v["prefill_ms"].as_f64().unwrap() <= first);

    // The file is replaced as a whole; `stream` writes the same keys.
    let out = sb.run_ok(&sb.stream().set("--stats-json", utf8(&json)), b"");
    assert!(!out.stdout.is_empty());
    assert_only(&dir, &[OUT_NAME, "stats.json"]);
    let v2 = read_stats(&json);
    assert_eq!(v2["frames"], v["frames"]);
    let keys =
        |v: &serde_json::Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(&v), keys(&v2));
}

#[test]
fn threads_1_and_2_give_the_same_audio() {
    let sb = Sandbox::new();
    let one = sb.generate_samples(sb.generate().set("--threads", "1"));
    let two = sb.generate_samples(sb.generate().set("--threads", "2"));
    assert!(
        one == two,
        "--threads 1 and --threads 2 differ at temperature 0"
    );
    let sampled = |threads: &str| {
        sb.run_ok(
            &sb.stream()
                .set("--threads", threads)
                .set("--temperature", "0.3")
                .set("--format", "pcm-f32le"),
            b"",
        )
        .stdout
    };
    assert!(
        sampled("1") == sampled("2"),
        "--threads 1 and --threads 2 differ at temperature 0.3 with a seed"
    );
}

#[test]
fn refuses_zero_threads() {
    refused_with("--threads", "0", &["--threads 0"]);
    let sb = Sandbox::new();
    check_refusal(
        "stream --threads 0",
        &sb.run(&sb.stream().set("--threads", "0"), b""),
        &["--threads 0"],
        true,
    );
    let state = sb.path("voice.safetensors");
    let export = Args::new("export-voice")
        .set("--config", utf8(&sb.config))
        .set("--threads", "0")
        .arg(utf8(&tiny("voice_excerpt.wav")))
        .arg(utf8(&state));
    check_refusal(
        "export-voice --threads 0",
        &sb.run(&export, b""),
        &["--threads 0"],
        true,
    );
    assert!(!state.exists());
}

#[test]
fn export_voice_takes_threads() {
    let sb = Sandbox::new();
    let state = sb.path("voice.safetensors");
    sb.run_ok(
        &Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .set("--threads", "1")
            .arg(utf8(&tiny("voice_excerpt.wav")))
            .arg(utf8(&state)),
        b"",
    );
    assert!(state.is_file());
}

#[test]
fn refuses_bad_stream_and_stats_flags() {
    let sb = Sandbox::new();
    let refused = |case: &str, args: Args, needles: &[&str]| {
        let before = listing(sb.root());
        check_refusal(case, &sb.run(&args, b""), needles, true);
        assert_eq!(listing(sb.root()), before, "{case}: files were created");
    };
    refused(
        "--runs 0",
        sb.stream()
            .switch("--measure-first-chunk")
            .set("--runs", "0"),
        &["--runs 0"],
    );
    refused(
        "--runs without --measure-first-chunk",
        sb.stream().set("--runs", "3"),
        &["--runs", "--measure-first-chunk"],
    );
    refused(
        "--keep-audio without --measure-first-chunk",
        sb.stream().switch("--keep-audio"),
        &["--keep-audio", "--measure-first-chunk"],
    );
    let missing = sb.path("no_such_folder").join("stats.json");
    for args in [
        sb.stream(),
        sb.generate().set("--output-path", utf8(&sb.path(OUT_NAME))),
    ] {
        refused(
            "--stats-json in a missing folder",
            args.set("--stats-json", utf8(&missing)),
            &["--stats-json", "no_such_folder", "does not exist"],
        );
    }
    let folder = sb.folder("stats_folder");
    refused(
        "--stats-json a folder",
        sb.stream().set("--stats-json", utf8(&folder)),
        &["--stats-json", "stats_folder", "folder"],
    );
}
