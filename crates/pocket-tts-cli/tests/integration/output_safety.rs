//! The CLI never destroys a user's file (issue: output safety).
//!
//! - Devices, FIFOs and sockets as outputs: written in place or refused, never renamed over.
//!   The device nodes and FIFOs are private ones made by the test in a temporary folder,
//!   never the system's `/dev`.
//! - An output that is one of the run's inputs (directly, through a symlink or a `..` path)
//!   or another output is refused before any work, naming both flags, and the input is left
//!   byte for byte as it was.
//! - A replaced file keeps its permissions; a symlinked output keeps its link.
//! - SIGINT and SIGTERM remove the temporary file and exit with 130 and 143.
//! - Hostile voice states and checkpoints (NaN), long voice prompts, and the smaller cases:
//!   an empty output path, stdout to a terminal, a broken pipe, a folder as weights, folders
//!   in `export-voice`, an absurd temperature.
#![cfg(unix)]

use crate::common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Runs `args` in the sandbox and checks it is refused with every needle in its error line.
fn refused(sb: &Sandbox, case: &str, args: Args, needles: &[&str]) -> String {
    check_refusal(case, &sb.run(&args.switch("-q"), b""), needles, false)
}

/// A private character device node equal to the null device (major 1, minor 3), made with
/// `mknod` (root only). `None` when this user may not make device nodes.
fn private_null_device(dir: &Path) -> Option<PathBuf> {
    let path = dir.join("null-device");
    let status = Command::new("mknod")
        .arg(&path)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .expect("run mknod");
    status.success().then_some(path)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_device_output_is_written_in_place_never_replaced() {
    let sb = Sandbox::new();
    // As root (CI, containers) a private node; otherwise the system's null device, which
    // a non-root process could not replace anyway.
    let device = private_null_device(sb.root()).unwrap_or_else(|| {
        assert_ne!(
            unsafe_geteuid(),
            0,
            "root could not make a device node with mknod"
        );
        PathBuf::from("/dev/null")
    });
    for args in [
        sb.generate().set("--output-path", utf8(&device)),
        sb.generate()
            .set("--output-path", utf8(&sb.path("a.wav")))
            .set("--stats-json", utf8(&device)),
    ] {
        sb.run_ok(&args, b"");
        let meta = fs::symlink_metadata(&device).unwrap();
        assert!(
            meta.file_type().is_char_device(),
            "{} is no longer a character device after {args:?}",
            device.display()
        );
    }
    // The null device may be shared by two outputs.
    sb.run_ok(
        &sb.generate()
            .set("--output-path", utf8(&device))
            .set("--stats-json", utf8(&device)),
        b"",
    );
    assert!(!listing(sb.root()).iter().any(|n| n.ends_with(".tmp")));
}

fn unsafe_geteuid() -> u32 {
    // `id -u`: no libc dependency for one call.
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn a_fifo_output_gets_a_streamed_wav_and_stays_a_fifo() {
    let sb = Sandbox::new();
    let fifo = sb.path("speech.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            fs::File::open(&fifo)
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .expect("read the FIFO");
            bytes
        })
    };
    sb.run_ok(&sb.generate().set("--output-path", utf8(&fifo)), b"");
    let bytes = reader.join().unwrap();
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(&bytes[..4], b"RIFF");
    // The header of an unseekable stream, as `--output-path -` writes.
    let from_stdout = sb.run_ok(&sb.generate().set("--output-path", "-"), b"");
    assert_eq!(bytes, from_stdout.stdout, "FIFO and stdout WAVs differ");
}

#[test]
fn a_socket_or_a_folder_as_output_is_refused() {
    let sb = Sandbox::new();
    let socket = sb.path("speech.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    refused(
        &sb,
        "socket output",
        sb.generate().set("--output-path", utf8(&socket)),
        &["--output-path", "speech.sock", "socket"],
    );
    assert!(fs::symlink_metadata(&socket)
        .unwrap()
        .file_type()
        .is_socket());
    let folder = sb.folder("out");
    refused(
        &sb,
        "folder output",
        sb.generate().set("--output-path", utf8(&folder)),
        &["--output-path", "folder"],
    );
    refused(
        &sb,
        "empty output path",
        sb.generate().set("--output-path", ""),
        &["--output-path", "empty"],
    );
}

/// Checks a refusal that names both flags and leaves `input` unchanged.
fn refused_keeps(sb: &Sandbox, case: &str, args: Args, input: &Path, needles: &[&str]) {
    let before = fs::read(input).unwrap();
    let line = refused(sb, case, args, needles);
    assert!(line.contains("same file"), "{case}: {line}");
    assert_eq!(
        fs::read(input).unwrap(),
        before,
        "{case}: {} was changed",
        input.display()
    );
    assert!(
        !listing(sb.root()).iter().any(|n| n.ends_with(".tmp")),
        "{case}: a temporary file was left"
    );
}

#[test]
fn an_output_that_is_an_input_is_refused_before_any_work() {
    let sb = Sandbox::new();
    let voice = sb.file("voice.wav", fs::read(tiny("voice_excerpt.wav")).unwrap());
    let sub = sb.folder("sub");
    let link = sb.path("link.wav");
    std::os::unix::fs::symlink(&voice, &link).unwrap();
    let dotdot = sub.join("..").join("voice.wav");
    let with_voice = sb.generate().set("--voice", utf8(&voice));
    for (case, out) in [
        ("output = voice", voice.clone()),
        ("output = symlink to the voice", link.clone()),
        ("output = voice through ..", dotdot),
    ] {
        refused_keeps(
            &sb,
            case,
            with_voice.clone().set("--output-path", utf8(&out)),
            &voice,
            &["--output-path", "--voice"],
        );
    }
    // A hard link is the same file too.
    let hard = sb.path("hard.wav");
    fs::hard_link(&voice, &hard).unwrap();
    refused_keeps(
        &sb,
        "output = hard link to the voice",
        with_voice.clone().set("--output-path", utf8(&hard)),
        &voice,
        &["--output-path", "--voice"],
    );
    refused_keeps(
        &sb,
        "stats = voice",
        with_voice
            .clone()
            .set("--output-path", utf8(&sb.path("out.wav")))
            .set("--stats-json", utf8(&voice)),
        &voice,
        &["--stats-json", "--voice"],
    );
    refused_keeps(
        &sb,
        "output = config",
        sb.generate().set("--output-path", utf8(&sb.config)),
        &sb.config,
        &["--output-path", "--config"],
    );
    let weights = sb.file(
        "w.safetensors",
        fs::read(tiny("model.safetensors")).unwrap(),
    );
    let config = sb.config_with("w.yaml", &weights, "");
    refused_keeps(
        &sb,
        "output = weights",
        sb.generate()
            .set("--config", utf8(&config))
            .set("--output-path", utf8(&weights)),
        &weights,
        &["--output-path", "weights_path"],
    );
    let state = sb.file(
        "voice.safetensors",
        fs::read(tiny("voice_state.safetensors")).unwrap(),
    );
    refused_keeps(
        &sb,
        "output = voice state",
        sb.generate()
            .set("--voice", utf8(&state))
            .set("--output-path", utf8(&state)),
        &state,
        &["--output-path", "--voice"],
    );
    // Two outputs of one run.
    let out = sb.file("out.wav", PREVIOUS);
    refused_keeps(
        &sb,
        "stats = output",
        sb.generate()
            .set("--output-path", utf8(&out))
            .set("--stats-json", utf8(&out)),
        &out,
        &["--output-path", "--stats-json"],
    );
    let new = sb.path("new.wav");
    refused(
        &sb,
        "stats = output, not yet existing",
        sb.generate()
            .set("--output-path", utf8(&new))
            .set("--stats-json", utf8(&new)),
        &["--output-path", "--stats-json", "same file"],
    );
    assert!(!new.exists());
    // export-voice: the checkpoint and the audio.
    let export = |out: &Path, audio: &Path| {
        Args::new("export-voice")
            .set("--config", utf8(&config))
            .arg(utf8(audio))
            .arg(utf8(out))
    };
    refused_keeps(
        &sb,
        "export-voice OUT = weights",
        export(&weights, &voice),
        &weights,
        &["EXPORT_PATH", "weights_path"],
    );
    refused_keeps(
        &sb,
        "export-voice OUT = AUDIO_PATH",
        export(&state, &state),
        &state,
        &["EXPORT_PATH", "AUDIO_PATH"],
    );
}

#[test]
fn a_replaced_file_keeps_its_permissions_and_a_symlink_stays() {
    let sb = Sandbox::new();
    let out = sb.file("speech.wav", PREVIOUS);
    fs::set_permissions(&out, fs::Permissions::from_mode(0o640)).unwrap();
    sb.run_ok(&sb.generate().set("--output-path", utf8(&out)), b"");
    read_output_wav(&out);
    let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the replaced file's mode");

    let target_dir = sb.folder("real");
    let target = target_dir.join("target.wav");
    fs::write(&target, PREVIOUS).unwrap();
    let link = sb.path("link.wav");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    sb.run_ok(&sb.generate().set("--output-path", utf8(&link)), b"");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    read_output_wav(&target);
    assert_eq!(listing(&target_dir), vec!["target.wav".to_string()]);
}

/// Starts `generate` into `out` with `--stats-json` on a FIFO nobody reads: the process
/// blocks opening it, with the WAV's temporary file already made. Returns the child once
/// that temporary file exists.
fn generate_blocked_with_a_temporary_file(sb: &Sandbox, out: &Path) -> std::process::Child {
    let fifo = sb.path("stats.fifo");
    if !fifo.exists() {
        mkfifo(&fifo);
    }
    let args = sb
        .generate()
        .set("--output-path", utf8(out))
        .set("--stats-json", utf8(&fifo))
        .switch("-q");
    let child = sb.spawn(&args, Stdio::null());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !listing(sb.root()).iter().any(|n| n.ends_with(".tmp")) {
        assert!(
            Instant::now() < deadline,
            "no temporary file appeared within 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn sigint_and_sigterm_remove_the_temporary_file_and_exit_130_or_143() {
    let sb = Sandbox::new();
    let out = sb.file("speech.wav", PREVIOUS);
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let mut child = generate_blocked_with_a_temporary_file(&sb, &out);
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "SIG{signal}: still running");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(stderr.contains("interrupted"), "SIG{signal}: {stderr}");
        let left: Vec<String> = listing(sb.root())
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "SIG{signal} left {left:?}");
        assert_eq!(fs::read(&out).unwrap(), PREVIOUS, "SIG{signal}");
    }
}

#[test]
fn sigterm_during_generation_removes_the_partial_wav() {
    let sb = Sandbox::new();
    let out = sb.file("speech.wav", PREVIOUS);
    // A long text with EOS disabled: every chunk runs to its maximum length.
    let text = "This sentence is spoken again and again to keep the model busy. ".repeat(60);
    let args = sb
        .generate()
        .set("--text", text)
        .set("--eos-threshold", "1e9")
        .set("--output-path", utf8(&out))
        .switch("-q");
    let mut child = sb.spawn(&args, Stdio::null());
    // Wait until audio is being written to the temporary file.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let temp = listing(sb.root())
            .into_iter()
            .find(|n| n.ends_with(".tmp"))
            .map(|n| sb.path(&n));
        if temp.is_some_and(|t| fs::metadata(t).is_ok_and(|m| m.len() > 44)) {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "generate ended before it could be signalled"
        );
        assert!(Instant::now() < deadline, "no audio written within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out_status = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out_status.stderr);
    assert_eq!(out_status.status.code(), Some(143), "{stderr}");
    assert!(
        !listing(sb.root()).iter().any(|n| n.ends_with(".tmp")),
        "a temporary file was left"
    );
    assert_eq!(fs::read(&out).unwrap(), PREVIOUS);
}

#[test]
fn a_voice_state_or_a_checkpoint_holding_nan_is_refused_naming_the_tensor() {
    let sb = Sandbox::new();
    let mut tensors = read_safetensors(&tiny("voice_state.safetensors"));
    let (name, cache) = tensors
        .iter_mut()
        .find(|(n, _)| n.ends_with("/cache"))
        .expect("a cache tensor");
    cache.data[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    let name = name.clone();
    let state = sb.path("nan.safetensors");
    write_safetensors(&state, &tensors);
    refused(
        &sb,
        "NaN voice state",
        sb.generate().set("--voice", utf8(&state)),
        &["nan.safetensors", &name, "non-finite"],
    );

    let mut weights = tiny_checkpoint();
    let i = non_square_matrix(&weights);
    weights[i].1.data[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes());
    let name = weights[i].0.clone();
    let path = sb.path("inf.safetensors");
    write_safetensors(&path, &weights);
    let config = sb.config_with("inf.yaml", &path, "");
    refused(
        &sb,
        "infinite weight",
        sb.generate().set("--config", utf8(&config)),
        &["inf.safetensors", &name, "non-finite"],
    );
}

#[test]
fn a_long_voice_prompt_is_cut_to_30_s_with_a_warning_unless_asked() {
    let sb = Sandbox::new();
    let excerpt = hound::WavReader::open(tiny("voice_excerpt.wav")).unwrap();
    let spec = excerpt.spec();
    let one: Vec<i16> = excerpt.into_samples::<i16>().map(Result::unwrap).collect();
    let rate = spec.sample_rate as usize * usize::from(spec.channels);
    let mut long = Vec::new();
    while long.len() < 32 * rate {
        long.extend_from_slice(&one);
    }
    let path = sb.path("long.wav");
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for s in &long {
        w.write_sample(*s).unwrap();
    }
    w.finalize().unwrap();
    let out = sb.run_ok(
        &sb.generate()
            .set("--voice", utf8(&path))
            .set("--output-path", utf8(&sb.path("a.wav"))),
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("WARN") && stderr.contains("first 30 s"),
        "{stderr}"
    );
    let out = sb.run_ok(
        &sb.generate()
            .set("--voice", utf8(&path))
            .switch("--no-truncate-voice")
            .set("--output-path", utf8(&sb.path("b.wav"))),
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("first 30 s"), "{stderr}");
    // Different prompts, different voice states: the positions logged differ.
    let a = read_output_wav(&sb.path("a.wav"));
    let b = read_output_wav(&sb.path("b.wav"));
    assert_ne!(
        a, b,
        "a 32 s prompt cut to 30 s should not give the whole prompt's speech"
    );
}

#[test]
fn generate_to_a_terminal_is_refused_and_a_broken_pipe_exits_0() {
    let sb = Sandbox::new();
    // `script` gives the command a pseudo-terminal as stdout.
    let args = sb.generate().set("--output-path", "-").switch("-q");
    let cmd = std::iter::once(BIN.to_string())
        .chain(args.to_vec())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(sb.root())
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("terminal"), "{text}");
    assert!(!text.contains("RIFF"), "binary was written to the terminal");

    // A reader that goes away after the header: a broken pipe stops quietly, status 0.
    let mut child = sb.spawn(&args, Stdio::piped());
    let mut stdout = child.stdout.take().unwrap();
    let mut header = [0u8; 44];
    stdout.read_exact(&mut header).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn small_cases_get_clear_errors() {
    let sb = Sandbox::new();
    let folder = sb.folder("weights-folder");
    let config = sb.config_with("folder.yaml", &folder, "");
    refused(
        &sb,
        "weights_path is a folder",
        sb.generate().set("--config", utf8(&config)),
        &["weights-folder", "folder"],
    );
    refused(
        &sb,
        "--temperature 1e30",
        sb.generate().set("--temperature", "1e30"),
        &["--temperature"],
    );
}

#[test]
fn export_voice_of_a_folder_converts_what_it_can_and_creates_nothing_for_nothing() {
    let sb = Sandbox::new();
    let export = |input: &Path, out: &Path| {
        Args::new("export-voice")
            .set("--config", utf8(&sb.config))
            .arg(utf8(input))
            .arg(utf8(out))
    };
    // An empty folder: an error, and no output folder.
    let empty = sb.folder("empty");
    let out = sb.path("voices-empty");
    refused(
        &sb,
        "empty folder",
        export(&empty, &out),
        &["no audio files"],
    );
    assert!(!out.exists(), "an output folder was made for nothing");
    // A folder as input with a file name as output.
    let input = sb.folder("in");
    fs::copy(tiny("voice_excerpt.wav"), input.join("good.wav")).unwrap();
    fs::write(input.join("bad.wav"), noise_bytes(4000, 3)).unwrap();
    let file_out = sb.path("f.safetensors");
    refused(
        &sb,
        "folder to a .safetensors name",
        export(&input, &file_out),
        &["EXPORT_PATH", "folder"],
    );
    assert!(!file_out.exists());
    // Mixed: the good file is converted, the bad one listed, status 1.
    let out = sb.path("voices");
    let run = sb.run(&export(&input, &out), b"");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 of 2"), "{stderr}");
    assert!(stderr.contains("bad.wav"), "{stderr}");
    assert_eq!(listing(&out), vec!["good.safetensors".to_string()]);
}
