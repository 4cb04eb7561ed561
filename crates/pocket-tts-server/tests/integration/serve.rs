//! The HTTP server end to end on the tiny model, in process: every route's happy path
//! (the audio equals `generate`'s / `stream`'s), streaming, every bad input with its
//! status and field, 429 and cancellation, the API key, CORS, start-up failures and a
//! clean shutdown.

use crate::common;

use std::io::Read;
use std::time::Duration;

use base64::Engine as _;
use common::server::{get, get_with, open_form, post_form, post_json, Reply, Setup};
use common::*;

/// Text long enough that its audio (tens of MB) cannot fit in the socket buffers: a client
/// that stops reading keeps its stream running (serve with [`LONG_TEXT_LIMIT`]).
fn long_text() -> String {
    "This sentence is one of many that keep the stream busy for a while. ".repeat(800)
}

/// `max_text_chars` for [`long_text`].
const LONG_TEXT_LIMIT: usize = 100_000;

/// Checks the reference's streaming WAV header (`data/audio.py`, unseekable output:
/// 10⁹ frames) and returns the samples after it.
fn streaming_wav_samples(body: &[u8]) -> Vec<i16> {
    assert!(body.len() > WAV_HEADER_LEN, "{} bytes: no WAV", body.len());
    assert_eq!(&body[..4], b"RIFF");
    assert_eq!(&body[8..16], b"WAVEfmt ");
    assert_eq!(u32_at(body, 24), SAMPLE_RATE, "sample rate");
    assert_eq!(u32_at(body, 40), 2_000_000_000, "the streaming data size");
    i16s(&body[WAV_HEADER_LEN..])
}

#[test]
fn routes_answer_and_audio_equals_the_cli() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.default_text = "Hello world. I am Kyutai's Pocket TTS.".into();
    let server = setup.start(&sb);

    let (status, body) = get(&server.url("/health"));
    assert_eq!((status, body.as_str()), (200, r#"{"status":"healthy"}"#));
    let (status, page) = get(&server.url("/"));
    assert_eq!(status, 200);
    assert!(
        page.contains("Hello world. I am Kyutai"),
        "the default text: {page}"
    );
    assert!(!page.contains("DEFAULT_TEXT_PROMPT"));
    let models = get_with(&server.url("/v1/models"), &[]).json();
    assert_eq!(models["data"][0]["id"], "pocket-tts");
    let voices = get_with(&server.url("/v1/audio/voices"), &[]).json();
    assert_eq!(voices["default"], "voice_excerpt");
    assert_eq!(voices["voices"][0]["source"], "default");

    // /tts: the reference's streaming WAV with the samples `generate` writes.
    let (expected, speech) = sb.reference_audio();
    let r = post_form(&server.url("/tts"), &[("text", None, TEXT.as_bytes())]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.content_type, "audio/wav");
    let samples = streaming_wav_samples(&r.body);
    check_speech_layout(&samples, "/tts");
    assert_eq!(samples, expected, "/tts audio differs from generate's");

    // The default voice by name, and the same through /v1/audio/speech.
    let r = post_form(
        &server.url("/tts"),
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"voice_excerpt"),
        ],
    );
    assert_eq!(streaming_wav_samples(&r.body), expected);
    let body = format!(
        r#"{{"model":"tts-1","input":"{TEXT}","voice":"voice_excerpt","response_format":"wav"}}"#
    );
    let r = post_json(&server.url("/v1/audio/speech"), &body);
    assert_eq!((r.status, r.content_type.as_str()), (200, "audio/wav"));
    assert_eq!(streaming_wav_samples(&r.body), expected);

    // pcm: the speech without header and trailing silence, as `stream --format pcm-s16le`.
    let body = format!(r#"{{"model":"x","input":"{TEXT}","response_format":"pcm"}}"#);
    let r = post_json(&server.url("/v1/audio/speech"), &body);
    assert_eq!((r.status, r.content_type.as_str()), (200, "audio/pcm"));
    assert_eq!(i16s(&r.body), speech);

    // flac: lossless, the same samples once decoded.
    let body = format!(r#"{{"model":"x","input":"{TEXT}","response_format":"flac"}}"#);
    let r = post_json(&server.url("/v1/audio/speech"), &body);
    assert_eq!((r.status, r.content_type.as_str()), (200, "audio/flac"));
    assert_eq!(&r.body[..4], b"fLaC");
    let (decoded, rate, _) =
        pocket_tts_core::audio::read_audio_bytes(&r.body, "speech.flac", None).expect("FLAC");
    assert_eq!(rate, SAMPLE_RATE);
    let decoded: Vec<i16> = decoded.iter().map(|&x| (x * 32768.0) as i16).collect();
    assert_eq!(decoded, speech);

    // sse: OpenAI's delta events carry the same PCM, then a done event with usage.
    let body = format!(
        r#"{{"model":"x","input":"{TEXT}","response_format":"pcm","stream_format":"sse"}}"#
    );
    let r = post_json(&server.url("/v1/audio/speech"), &body);
    assert_eq!(
        (r.status, r.content_type.as_str()),
        (200, "text/event-stream")
    );
    let mut pcm = Vec::new();
    let mut done = None;
    for event in r.text().split("\n\n").filter(|e| !e.is_empty()) {
        let json: serde_json::Value =
            serde_json::from_str(event.strip_prefix("data: ").expect("an SSE data line"))
                .expect("JSON event");
        match json["type"].as_str() {
            Some("speech.audio.delta") => pcm.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(json["audio"].as_str().expect("audio"))
                    .expect("base64"),
            ),
            Some("speech.audio.done") => done = Some(json),
            other => panic!("unexpected event {other:?}"),
        }
    }
    assert_eq!(i16s(&pcm), speech);
    let done = done.expect("a speech.audio.done event");
    assert_eq!(
        done["usage"]["output_tokens"].as_u64(),
        Some((speech.len() / FRAME_SAMPLES) as u64)
    );

    // Metrics count what happened.
    assert_eq!(
        server.metric(
            "pocket_tts_http_requests_total",
            r#"route="/tts",status="200""#
        ),
        2.0
    );
    server.wait_metric("pocket_tts_streams_total", r#"outcome="completed""#, 6.0);
    server.wait_metric("pocket_tts_time_to_first_audio_seconds_count", "", 6.0);
}

#[test]
fn uploaded_voices_speak_like_the_file() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let wav = std::fs::read(tiny("voice_excerpt.wav")).unwrap();
    let (expected, _) = sb.reference_audio();

    // /tts voice_wav: decoded in memory, the same voice as the file.
    let r = post_form(
        &server.url("/tts"),
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_wav", Some("prompt.wav"), &wav),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(streaming_wav_samples(&r.body), expected);

    // POST /v1/audio/voices keeps it under a name, usable at once.
    let r = post_form(
        &server.url("/v1/audio/voices"),
        &[("name", None, b"mine"), ("file", Some("prompt.wav"), &wav)],
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["name"], "mine");
    let voices = get_with(&server.url("/v1/audio/voices"), &[]).json();
    assert!(
        voices["voices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "mine" && v["source"] == "upload"),
        "{voices}"
    );
    let body =
        format!(r#"{{"model":"x","input":"{TEXT}","voice":"mine","response_format":"wav"}}"#);
    let r = post_json(&server.url("/v1/audio/speech"), &body);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(streaming_wav_samples(&r.body), expected);
    let r = post_form(
        &server.url("/tts"),
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"mine"),
        ],
    );
    assert_eq!(streaming_wav_samples(&r.body), expected);

    // A name taken by a server voice is refused.
    let r = post_form(
        &server.url("/v1/audio/voices"),
        &[
            ("name", None, b"voice_excerpt"),
            ("file", Some("a.wav"), &wav),
        ],
    );
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(r.json()["error"]["param"], "name");
}

/// Asserts a reference-style error: `status` and a `detail` containing each needle.
fn assert_detail(r: &Reply, status: u16, needles: &[&str], case: &str) {
    assert_eq!(r.status, status, "{case}: {}", r.text());
    let detail = r.json()["detail"].as_str().unwrap_or_default().to_string();
    for n in needles {
        assert!(detail.contains(n), "{case}: {detail:?} lacks {n:?}");
    }
}

/// Asserts an OpenAI-style error: `status`, `param` and a message containing each needle.
fn assert_openai(r: &Reply, status: u16, param: &str, needles: &[&str], case: &str) {
    assert_eq!(r.status, status, "{case}: {}", r.text());
    let json = r.json();
    let err = &json["error"];
    assert_eq!(err["param"], param, "{case}: {json}");
    let message = err["message"].as_str().unwrap_or_default();
    for n in needles {
        assert!(message.contains(n), "{case}: {message:?} lacks {n:?}");
    }
}

#[test]
fn bad_requests_are_refused_naming_the_field() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.limits.max_text_chars = 50;
    setup.options.limits.max_body_bytes = 1024 * 1024;
    let server = setup.start(&sb);
    let tts = server.url("/tts");
    let wav = std::fs::read(tiny("voice_excerpt.wav")).unwrap();

    let r = post_form(&tts, &[("text", None, b"   ")]);
    assert_detail(&r, 400, &["text is empty"], "blank text");
    let r = post_form(&tts, &[("voice_url", None, b"voice_excerpt")]);
    assert_detail(&r, 400, &["text is missing"], "no text");
    let long = "word ".repeat(20);
    let r = post_form(&tts, &[("text", None, long.as_bytes())]);
    assert_detail(&r, 400, &["100 characters", "max_text_chars"], "long text");
    let r = post_form(
        &tts,
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"voice_excerpt"),
            ("voice_wav", Some("v.wav"), &wav),
        ],
    );
    assert_detail(&r, 400, &["both voice_url and voice_wav"], "both voices");
    let r = post_form(
        &tts,
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"nobody"),
        ],
    );
    assert_detail(
        &r,
        400,
        &["voice_url \"nobody\"", "voice_excerpt"],
        "unknown voice",
    );
    let r = post_form(
        &tts,
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"http://127.0.0.1:9/voice.wav"),
        ],
    );
    assert_detail(&r, 400, &["allow_urls"], "http voice without the option");
    let garbage = noise_bytes(4000, 3);
    let r = post_form(
        &tts,
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_wav", Some("voice.wav"), &garbage),
        ],
    );
    assert_detail(&r, 400, &["voice_wav", "voice.wav"], "garbage upload");
    let big = vec![0u8; 1024 * 1024 + 10];
    let r = post_form(
        &tts,
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_wav", Some("big.wav"), &big),
        ],
    );
    assert_detail(&r, 413, &["max_body_bytes"], "oversize upload");

    let speech = server.url("/v1/audio/speech");
    let cases: &[(&str, u16, &str, &[&str])] = &[
        ("{not json", 400, "body", &["not valid JSON"]),
        ("[1, 2]", 400, "body", &["JSON object"]),
        (r#"{"model":"x"}"#, 400, "input", &["input is missing"]),
        (
            r#"{"model":"x","input":""}"#,
            400,
            "input",
            &["input is empty"],
        ),
        (
            r#"{"model":"x","input":3}"#,
            400,
            "input",
            &["input must be a string"],
        ),
        (
            r#"{"model":"x","input":"Hi.","voice":7}"#,
            400,
            "voice",
            &["voice must be a string"],
        ),
        (
            r#"{"model":"x","input":"Hi.","voice":"nobody"}"#,
            400,
            "voice",
            &["\"nobody\""],
        ),
        (
            r#"{"model":"x","input":"Hi.","response_format":"ogg"}"#,
            400,
            "response_format",
            &["unknown", "mp3, opus, aac, flac, wav, pcm"],
        ),
        (
            r#"{"model":"x","input":"Hi.","speed":0.2}"#,
            400,
            "speed",
            &["0.25 to 4.0"],
        ),
        (
            r#"{"model":"x","input":"Hi.","instructions":7}"#,
            400,
            "instructions",
            &["instructions must be a string"],
        ),
        (
            r#"{"model":"x","input":"Hi.","speed":9}"#,
            400,
            "speed",
            &["0.25 to 4.0"],
        ),
        (
            r#"{"model":"x","input":"Hi.","speed":"fast"}"#,
            400,
            "speed",
            &["a number"],
        ),
        (
            r#"{"model":"x","input":"Hi.","stream_format":"chunks"}"#,
            400,
            "stream_format",
            &["\"audio\" or \"sse\""],
        ),
    ];
    for (body, status, param, needles) in cases {
        let r = post_json(&speech, body);
        assert_openai(&r, *status, param, needles, body);
    }
    let too_long = format!(r#"{{"model":"x","input":"{}"}}"#, "a".repeat(51));
    assert_openai(
        &post_json(&speech, &too_long),
        400,
        "input",
        &["51 characters"],
        "long",
    );
    let r = post_form(&server.url("/v1/audio/voices"), &[("name", None, b"x")]);
    assert_openai(&r, 400, "file", &["file is missing"], "upload without file");
    let r = post_form(
        &server.url("/v1/audio/voices"),
        &[("name", None, b"bad name!"), ("file", Some("v.wav"), &wav)],
    );
    assert_openai(&r, 400, "name", &["letters, digits"], "bad voice name");

    let r = get_with(&server.url("/v1/nothing"), &[]);
    assert_eq!(r.status, 404);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no such route"));
    // Nothing failed on the server's side, and it still works.
    assert_eq!(
        server.metric("pocket_tts_http_requests_total", r#"status="500""#),
        0.0
    );
    let r = post_form(&tts, &[("text", None, TEXT.as_bytes())]);
    assert_eq!(r.status, 200);
}

#[test]
fn audio_streams_and_a_disconnect_frees_the_slot() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.engine.max_streams = 1;
    setup.engine.max_queued = 0;
    setup.options.limits.max_text_chars = LONG_TEXT_LIMIT;
    let server = setup.start(&sb);
    let text = long_text();

    // The head and first frames arrive while the stream still runs: streamed, not
    // buffered (the client is not reading, so generation waits for it).
    let response = open_form(&server.url("/tts"), &[("text", None, text.as_bytes())]);
    let mut reader = response.into_reader();
    let mut head = vec![0u8; WAV_HEADER_LEN + 2 * FRAME_SAMPLES];
    reader.read_exact(&mut head).expect("the first frame");
    assert_eq!(&head[..4], b"RIFF");
    server.wait_active(1.0);

    // Full: the next request gets 429 with Retry-After, in OpenAI's shape on /v1.
    let r = post_form(&server.url("/tts"), &[("text", None, TEXT.as_bytes())]);
    assert_detail(&r, 429, &["busy"], "busy /tts");
    assert_eq!(r.retry_after.as_deref(), Some("1"));
    let r = post_json(
        &server.url("/v1/audio/speech"),
        &format!(r#"{{"model":"x","input":"{TEXT}"}}"#),
    );
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"]["type"], "rate_limit_error");
    assert_eq!(r.retry_after.as_deref(), Some("1"));

    // The client goes away: the stream is cancelled and the slot is free again.
    drop(reader);
    server.wait_active(0.0);
    server.wait_metric("pocket_tts_streams_total", r#"outcome="cancelled""#, 1.0);
    let r = post_form(&server.url("/tts"), &[("text", None, TEXT.as_bytes())]);
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn the_api_key_guards_every_route_but_the_page_and_health() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.api_key = Some("s3cret".into());
    setup.options.cors_origins = vec!["http://app.example".into()];
    let server = setup.start(&sb);
    assert_eq!(get(&server.url("/health")).0, 200);
    assert_eq!(get(&server.url("/")).0, 200);
    let r = get_with(&server.url("/v1/models"), &[]);
    assert_eq!(r.status, 401);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("API key"));
    let r = get_with(
        &server.url("/v1/models"),
        &[("Authorization", "Bearer wrong")],
    );
    assert_eq!(r.status, 401);
    let r = post_form(&server.url("/tts"), &[("text", None, TEXT.as_bytes())]);
    assert_eq!(r.status, 401);
    assert!(r.json()["detail"].is_string());
    assert_eq!(get(&server.url("/metrics")).0, 401);
    let ok = get_with(
        &server.url("/v1/models"),
        &[("Authorization", "Bearer s3cret")],
    );
    assert_eq!(ok.status, 200);

    // CORS: the allowed origin is echoed; a preflight needs no key.
    let r = ureq::get(&server.url("/health"))
        .set("Origin", "http://app.example")
        .call()
        .expect("GET /health");
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://app.example")
    );
    let r = ureq::request("OPTIONS", &server.url("/v1/audio/speech"))
        .set("Origin", "http://app.example")
        .set("Access-Control-Request-Method", "POST")
        .set(
            "Access-Control-Request-Headers",
            "authorization,content-type",
        )
        .call()
        .expect("preflight");
    assert_eq!(r.status(), 200);
    let r = ureq::get(&server.url("/health"))
        .set("Origin", "http://evil.example")
        .call()
        .expect("GET /health");
    assert_eq!(r.header("access-control-allow-origin"), None);
}

#[test]
fn shutdown_lets_streams_finish() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.shutdown_timeout = Duration::from_secs(30);
    let mut server = setup.start(&sb);
    let response = open_form(&server.url("/tts"), &[("text", None, TEXT.as_bytes())]);
    server.shutdown();
    // The stream in flight completes.
    let mut body = Vec::new();
    response
        .into_reader()
        .read_to_end(&mut body)
        .expect("the whole response");
    check_speech_layout(
        &streaming_wav_samples(&body),
        "response across the shutdown",
    );
    let status = server
        .wait_exit(Duration::from_secs(20))
        .unwrap_or_else(|| panic!("still running after the shutdown:\n{}", server.log()));
    assert!(status.is_ok(), "{status:?}:\n{}", server.log());
    assert!(server.log().contains("test shutdown"), "{}", server.log());
}

#[test]
fn shutdown_cancels_streams_past_the_shutdown_timeout() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.shutdown_timeout = Duration::from_secs(1);
    setup.options.limits.max_text_chars = LONG_TEXT_LIMIT;
    let mut server = setup.start(&sb);
    let text = long_text();
    let response = open_form(&server.url("/tts"), &[("text", None, text.as_bytes())]);
    let mut reader = response.into_reader();
    let mut head = vec![0u8; WAV_HEADER_LEN];
    reader.read_exact(&mut head).expect("the head");
    server.wait_active(1.0);
    server.shutdown();
    let status = server
        .wait_exit(Duration::from_secs(20))
        .unwrap_or_else(|| panic!("still running after the shutdown:\n{}", server.log()));
    assert!(status.is_ok(), "{status:?}:\n{}", server.log());
    assert!(server.log().contains("cancelled"), "{}", server.log());
    // The cut response does not end like a complete one (the 200 ms of silence a finished
    // WAV ends with), whether the client library reports the missing last chunk or not.
    let mut rest = Vec::new();
    if reader.read_to_end(&mut rest).is_ok() {
        let samples = i16s(&rest[..rest.len() / 2 * 2]);
        let tail = &samples[samples.len().saturating_sub(TRAILING_SILENCE)..];
        assert!(
            tail.iter().any(|&s| s != 0),
            "the cut response ends with the silence of a complete one"
        );
    }
}

#[test]
fn start_up_failures_name_the_option_and_never_listen() {
    let sb = Sandbox::new();
    let missing = sb.path("missing.wav");
    let setups: Vec<(Setup, Vec<&str>)> = vec![
        (
            Setup {
                voice: utf8(&missing).to_string(),
                ..Setup::new(&sb)
            },
            vec!["default voice", "missing.wav"],
        ),
        (
            Setup {
                voices_dir: Some(sb.path("nodir")),
                ..Setup::new(&sb)
            },
            vec!["voices folder", "nodir", "cannot read the folder"],
        ),
        {
            let mut s = Setup::new(&sb);
            s.options.limits.max_body_bytes = 0;
            (s, vec!["max_body_bytes"])
        },
        {
            let mut s = Setup::new(&sb);
            s.options.cors_origins = vec!["bad\norigin".into()];
            (s, vec!["cors_origins", "not a valid origin"])
        },
        {
            let mut s = Setup::new(&sb);
            s.options.host = "256.1.1.1".into();
            (s, vec!["HTTP listener on 256.1.1.1"])
        },
    ];
    for (setup, needles) in setups {
        let e = match setup.try_start(&sb) {
            Ok(server) => panic!("started on {}", server.base),
            Err(e) => e,
        };
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message += &format!(": {s}");
            source = s.source();
        }
        for n in needles {
            assert!(message.contains(n), "{message:?} lacks {n:?}");
        }
    }
}

#[test]
fn voices_dir_voices_are_named_by_their_stem() {
    let sb = Sandbox::new();
    let dir = sb.folder("voices");
    std::fs::copy(tiny("voice_excerpt.wav"), dir.join("anna.wav")).unwrap();
    std::fs::write(dir.join("README.txt"), "not a voice").unwrap();
    let server = Setup {
        voices_dir: Some(dir.clone()),
        ..Setup::new(&sb)
    }
    .start(&sb);
    let voices = get_with(&server.url("/v1/audio/voices"), &[]).json();
    let names: Vec<&str> = voices["voices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["source"] != "alias")
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["voice_excerpt", "anna"]);
    let (expected, _) = sb.reference_audio();
    let r = post_form(
        &server.url("/tts"),
        &[
            ("text", None, TEXT.as_bytes()),
            ("voice_url", None, b"anna"),
        ],
    );
    assert_eq!(streaming_wav_samples(&r.body), expected);

    // A folder with two files of one stem is refused at start-up.
    std::fs::copy(tiny("voice_excerpt.wav"), dir.join("anna.flac")).unwrap();
    let setup = Setup {
        voices_dir: Some(dir),
        ..Setup::new(&sb)
    };
    let e = setup.try_start(&sb).err().expect("refused");
    assert!(e.to_string().contains("both be the voice \"anna\""), "{e}");
}

#[test]
fn a_generation_past_the_time_limit_is_cut_and_ends_incomplete() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.limits.request_timeout = Duration::from_secs(1);
    setup.options.limits.max_text_chars = LONG_TEXT_LIMIT;
    let server = setup.start(&sb);
    let text = long_text();
    let response = open_form(&server.url("/tts"), &[("text", None, text.as_bytes())]);
    let mut body = Vec::new();
    let complete = response.into_reader().read_to_end(&mut body).is_ok();
    server.wait_metric("pocket_tts_streams_total", r#"outcome="timeout""#, 1.0);
    server.wait_log("request_timeout");
    // Whatever the client library makes of the missing last chunk, the audio does not end
    // like a complete WAV (200 ms of silence) and is far from the whole text's.
    let samples = streaming_wav_samples(&body);
    let tail = &samples[samples.len().saturating_sub(TRAILING_SILENCE)..];
    assert!(
        !complete || tail.iter().any(|&s| s != 0),
        "a cut response ends like a complete one"
    );
}

#[test]
fn voice_urls_are_fetched_only_when_allowed() {
    use std::io::Write;
    // A one-file HTTP server on loopback, answering every request with the voice WAV.
    let wav = std::fs::read(tiny("voice_excerpt.wav")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/voice.wav", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = std::io::Read::read(&mut s, &mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: audio/wav\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                wav.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&wav);
        }
    });
    let sb = Sandbox::new();
    let (expected, _) = sb.reference_audio();
    let form = [
        ("text", None, TEXT.as_bytes()),
        ("voice_url", None, url.as_bytes()),
    ];

    let refusing = Setup::new(&sb).start(&sb);
    let r = post_form(&refusing.url("/tts"), &form);
    assert_detail(&r, 400, &["allow_urls"], "a URL without the option");
    drop(refusing);

    let mut setup = Setup::new(&sb);
    setup.voice_options.allow_urls = true;
    let server = setup.start(&sb);
    let r = post_form(&server.url("/tts"), &form);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(streaming_wav_samples(&r.body), expected);
    // Fetched once, then cached: the same URL again needs no server.
    let r = post_form(&server.url("/tts"), &form);
    assert_eq!(streaming_wav_samples(&r.body), expected);
    // An address nothing answers is a 400 naming the field.
    let form = [
        ("text", None, TEXT.as_bytes()),
        ("voice_url", None, b"http://127.0.0.1:9/none.wav".as_slice()),
    ];
    let r = post_form(&server.url("/tts"), &form);
    assert_detail(
        &r,
        400,
        &["voice_url", "cannot fetch"],
        "an unreachable URL",
    );
}
