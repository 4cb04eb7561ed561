//! End-to-end tests of `pocket-tts-cli stream` and of the flags it shares with
//! `generate` (`--stats-json`, `--threads`), on the tiny random-weight model
//! (`tests/fixtures/tiny`, run through the sandbox of `common`).
//!
//! - WAV, raw PCM16 and raw f32 on stdout, consistent with each other and with
//!   `generate`'s file; `--measure-first-chunk` with `--runs` and `--keep-audio`.
//! - The `--stats-json` report (keys, types, figures that agree) for both commands.
//! - `--threads 1` and `--threads 2` give the same audio.
//! - Bad `stream` and `--stats-json` flags are refused and create no file.

use crate::common;

use std::fs;
use std::path::Path;

use common::*;
use pocket_tts_core::audio::STREAMING_WAV_NFRAMES;

// ---------------------------------------------------------------------------------------
// stream, --stats-json, --threads
// ---------------------------------------------------------------------------------------

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
    assert_eq!(obj["backend"], "cpu", "the default backend");
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
