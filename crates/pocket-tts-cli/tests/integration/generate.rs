//! End-to-end tests of `pocket-tts-cli generate` on the tiny random-weight model
//! (`tests/fixtures/tiny`, run through the sandbox of `common`).
//!
//! - The WAV written (24 kHz mono PCM16, whole 80 ms frames plus 200 ms of silence),
//!   streaming to stdout, text from stdin, seeding.
//! - Bad output paths: a missing folder, a folder, a failing run to stdout. Each refusal
//!   exits with status 1 and one `error:` line naming the flag, and leaves the output
//!   folder as it was.

use crate::common;

use std::fs;

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
