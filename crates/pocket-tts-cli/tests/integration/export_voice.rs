//! End-to-end tests of `pocket-tts-cli export-voice` on the tiny random-weight model
//! (`tests/fixtures/tiny`, run through the sandbox of `common`).
//!
//! - An exported voice state gives the same speech as the audio it came from;
//!   `--threads` is accepted.
//! - Bad audio and bad export paths are refused with one `error:` line, leaving no file
//!   and no partial file, and a voice state already there untouched.

use crate::common;

use std::fs;
use std::path::Path;

use common::*;

// ---------------------------------------------------------------------------------------
// Happy paths
// ---------------------------------------------------------------------------------------

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
