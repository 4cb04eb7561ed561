//! End-to-end tests of `pocket-tts-cli bench-streams` (the batched engine's throughput
//! benchmark) on the tiny random-weight model (`tests/fixtures/tiny`, run through the
//! sandbox of `common`).
//!
//! - `--streams 1,3`: one JSON line per count on stdout (`streams`, `audio_s_per_s`,
//!   `rtf_per_stream` and `ttfa_ms` p50/p95, `peak_rss_mb`), the same results in the
//!   `--stats-json` report, and one WAV per stream in `--output-dir` (created with its
//!   parents; the report may go into it).
//! - Every stream of a batch gets its solo audio: at temperature 0, each `stream_<i>.wav`
//!   has exactly the samples `generate` writes for that stream's text.
//! - `--texts`: non-empty lines given to the streams in turn.
//! - Bad `--streams`, `--texts`, `--stats-json` and `--voice` are refused, naming the
//!   flag, and create nothing (no output folder, WAV, report or temporary file).

use crate::common;

use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

/// A second text, different from [`TEXT`].
const OTHER_TEXT: &str = "Good morning, friend.";

/// `bench-streams` with [`Sandbox::generate`]'s model, voice, text and sampling.
fn bench(sb: &Sandbox, streams: &str) -> Args {
    sb.speak("bench-streams").set("--streams", streams)
}

/// The samples `generate` writes for `text` with the sandbox's settings.
fn solo(sb: &Sandbox, text: &str) -> Vec<i16> {
    sb.generate_samples(sb.generate().set("--text", text))
}

fn stream_wav(dir: &Path, i: usize) -> Vec<i16> {
    read_output_wav(&dir.join(format!("stream_{i}.wav")))
}

/// Checks one count's result: its keys, and figures that agree with each other and with
/// `speech_s`, the audio of each of its streams.
fn check_result(r: &Value, streams: u64, speech_s: f64) {
    let num = |path: &[&str]| {
        path.iter()
            .fold(r, |v, k| &v[*k])
            .as_f64()
            .unwrap_or_else(|| panic!("{path:?} is not a number: {r}"))
    };
    assert_eq!(r["streams"], streams, "{r}");
    let audio_s = num(&["audio_s"]);
    assert!(
        (audio_s - streams as f64 * speech_s).abs() < 1e-9,
        "audio_s is not {streams} x {speech_s} s: {r}"
    );
    let rate = num(&["audio_s_per_s"]);
    assert!(rate > 0.0, "{r}");
    assert!(
        (rate - audio_s / num(&["wall_s"])).abs() <= 1e-9 * rate,
        "{r}"
    );
    for k in ["rtf_per_stream", "ttfa_ms"] {
        let (p50, p95) = (num(&[k, "p50"]), num(&[k, "p95"]));
        assert!(0.0 < p50 && p50 <= p95, "{k}: p50 {p50}, p95 {p95}: {r}");
    }
    // VmHWM: always there on Linux.
    let peak = r["peak_rss_mb"].as_f64();
    if cfg!(target_os = "linux") || !r["peak_rss_mb"].is_null() {
        assert!(peak.is_some_and(|mb| mb > 1.0), "peak_rss_mb: {r}");
    }
}

#[test]
fn measures_each_count_and_gives_each_stream_its_solo_audio() {
    let sb = Sandbox::new();
    let dir = sb.path("run").join("wavs");
    let stats = dir.join("stats.json");
    let args = bench(&sb, "1,3")
        .set("--output-dir", utf8(&dir))
        .set("--stats-json", utf8(&stats));
    let out = sb.run_ok(&args, b"");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert_eq!(lines.len(), 2, "one JSON line per count:\n{stdout}");
    assert_eq!(listing(sb.root()), ["run", "tiny.yaml"]);
    let files = ["stats.json", "stream_0.wav", "stream_1.wav", "stream_2.wav"];
    assert_eq!(listing(&dir), files);

    // The last count's streams (3, batched) each have generate's audio.
    let expected = solo(&sb, TEXT);
    for i in 0..3 {
        assert!(
            stream_wav(&dir, i) == expected,
            "stream_{i}.wav differs from generate's audio of the same text"
        );
    }
    let speech_s = (expected.len() - TRAILING_SILENCE) as f64 / f64::from(SAMPLE_RATE);

    let text = fs::read_to_string(&stats).expect("read the --stats-json report");
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    let results = report["results"].as_array().expect("results is an array");
    assert_eq!(results, &lines, "the report's results are stdout's lines");
    for (r, n) in results.iter().zip([1, 3]) {
        check_result(r, n, speech_s);
    }
    assert_eq!(report["texts"], 1, "{text}");
    assert_eq!(report["backend"], "cpu", "{text}");
    assert!(report["threads"].as_u64().is_some_and(|t| t >= 1), "{text}");
}

#[test]
fn texts_file_lines_go_to_the_streams_in_turn() {
    let sb = Sandbox::new();
    let texts = sb.file("texts.txt", format!("{TEXT}\n\n{OTHER_TEXT}\n"));
    let dir = sb.path("wavs");
    let args = bench(&sb, "3")
        .unset("--text")
        .set("--texts", utf8(&texts))
        .set("--output-dir", utf8(&dir));
    let out = sb.run_ok(&args, b"");
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON line on stdout");
    assert_eq!(line["streams"], 3, "{line}");

    let streams: Vec<Vec<i16>> = (0..3).map(|i| stream_wav(&dir, i)).collect();
    assert!(
        streams[0] == solo(&sb, TEXT),
        "stream_0 is not text 1 alone"
    );
    assert!(
        streams[1] == solo(&sb, OTHER_TEXT),
        "stream_1 is not text 2 alone"
    );
    assert!(streams[2] == streams[0], "stream_2 is not text 1 again");
    assert!(
        streams[0] != streams[1],
        "the two texts give the same audio"
    );
}

/// Runs a `bench-streams` that must be refused and checks that it created nothing in the
/// sandbox. Our own checks exit as every refusal does ([`check_refusal`], also with
/// `-q`: the same line); clap's (a bad number, conflicting flags) with status 2, an
/// `error:` line naming the flag, then the usage.
fn refused(sb: &Sandbox, case: &str, args: Args, needles: &[&str], by_clap: bool) {
    let before = listing(sb.root());
    let out = sb.run(&args, b"");
    if by_clap {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(out.stdout.is_empty(), "{case}: output on stdout");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with("error: "), "{case}: {stderr}");
        for needle in needles {
            assert!(first.contains(needle), "{case}: no {needle:?} in {first}");
        }
    } else {
        let line = check_refusal(case, &out, needles, true);
        let quiet = check_refusal(case, &sb.run(&args.switch("-q"), b""), needles, false);
        assert_eq!(line, quiet, "{case}: the error differs with -q");
    }
    assert_eq!(listing(sb.root()), before, "{case}: files were created");
}

#[test]
fn refuses_bad_flags_and_creates_nothing() {
    let sb = Sandbox::new();
    let blank = sb.file("blank.txt", "\n  \n\t\n");
    let texts = sb.file("texts.txt", format!("{TEXT}\n"));
    let missing = sb.path("missing.txt");
    let args = bench(&sb, "1,2")
        .set("--output-dir", utf8(&sb.path("run").join("wavs")))
        .set("--stats-json", utf8(&sb.path("stats.json")));
    let with_texts = |path: &Path| args.clone().unset("--text").set("--texts", utf8(path));

    for value in ["0", "1,0"] {
        let case = format!("--streams {value}");
        let needles = ["--streams 0", "between 1 and 256"];
        refused(
            &sb,
            &case,
            args.clone().set("--streams", value),
            &needles,
            false,
        );
    }
    refused(
        &sb,
        "--streams abc",
        args.clone().set("--streams", "abc"),
        &["--streams", "abc"],
        true,
    );
    refused(
        &sb,
        "--texts of blank lines",
        with_texts(&blank),
        &["--texts", "blank.txt", "no text"],
        false,
    );
    refused(
        &sb,
        "--texts missing",
        with_texts(&missing),
        &["--texts", "missing.txt", "cannot read"],
        false,
    );
    refused(
        &sb,
        "--texts with --text",
        with_texts(&texts).set("--text", TEXT),
        &["--texts", "cannot be used with '--text "],
        true,
    );
    let stats = sb.path("no_such_folder").join("stats.json");
    refused(
        &sb,
        "--stats-json in a missing folder",
        args.clone().set("--stats-json", utf8(&stats)),
        &["--stats-json", "no_such_folder", "does not exist"],
        false,
    );
    // Refused after the output folder is made: it is removed again.
    refused(
        &sb,
        "--voice missing",
        args.set("--voice", utf8(&sb.path("nonexistent.wav"))),
        &["--voice", "nonexistent.wav", "does not exist"],
        false,
    );
}
