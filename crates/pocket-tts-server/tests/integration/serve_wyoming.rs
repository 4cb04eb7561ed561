//! End-to-end tests of the Wyoming listener on the tiny model: the server in process,
//! spoken to over TCP with a small Wyoming client written from the `wyoming` Python
//! package's framing (1.10.2, `wyoming/event.py`).
//!
//! - `describe` → `info`; `synthesize` → `audio-start`, one 16-bit `audio-chunk` per
//!   frame, `audio-stop` (data given after the header or inline in it).
//! - A refused plain `synthesize` (unknown voice, empty text) → `error`, then the server
//!   closes the connection (Home Assistant waits for `audio-stop` otherwise); a new
//!   connection works. `describe` and `ping` keep the connection.
//! - Streaming synthesis: a sentence is spoken as soon as it is complete, the plain
//!   `synthesize` sent alongside is ignored, `synthesize-stopped` ends it; an `error`
//!   within it keeps the connection.
//! - Bytes that are not events → `error`, then the connection is closed.
//! - A busy server answers `error` `busy` (and closes); a client leaving mid-stream cancels its
//!   stream (its slot is free again); the shutdown closes idle connections and the server
//!   stops.
//! - The server's `markup` applies to Wyoming requests: a pause is its zeros.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::server::{Server, Setup};
use common::*;
use serde_json::{json, Value};

/// The default voice's name (`…/voice_excerpt.wav`).
const VOICE: &str = "voice_excerpt";
/// Longest wait for one answer, or for the server to exit.
const WAIT: Duration = Duration::from_secs(60);

/// The tests' server ([`Setup::new`]) with the Wyoming listener on a free port.
fn wyoming_setup(sb: &Sandbox) -> Setup {
    Setup::new(sb).wyoming()
}

/// A client of `server`'s Wyoming listener.
fn connect(server: &Server) -> Client {
    Client::connect(server.wyoming_addr())
}

/// One event read: its header, its data (header data merged with the data after it) and
/// its payload.
#[derive(Debug)]
struct Ev {
    kind: String,
    header: Value,
    data: Value,
    payload: Vec<u8>,
}

/// A blocking Wyoming client.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect to the Wyoming port");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("send to the server");
    }

    /// Sends an event as the Python package does: data after the header line.
    fn send(&mut self, kind: &str, data: Value) {
        let data = serde_json::to_vec(&data).unwrap();
        let header = json!({ "type": kind, "version": "1.10.2", "data_length": data.len() });
        let mut bytes = serde_json::to_vec(&header).unwrap();
        bytes.push(b'\n');
        bytes.extend(data);
        self.send_raw(&bytes);
    }

    /// Sends an event with its data inline in the header line.
    fn send_inline(&mut self, kind: &str, data: Value) {
        let mut bytes = serde_json::to_vec(&json!({ "type": kind, "data": data })).unwrap();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// The next event; `None` when the server closed the connection.
    fn recv(&mut self) -> Option<Ev> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
            Err(e) => panic!("reading an event header failed: {e}"),
        }
        let header: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a header that is not JSON ({e}): {line:?}"));
        assert!(
            line.ends_with('\n'),
            "a header line without newline: {line:?}"
        );
        let length = |field: &str| header.get(field).and_then(Value::as_u64).unwrap_or(0);
        let mut data = header.get("data").cloned().unwrap_or_else(|| json!({}));
        let n = length("data_length") as usize;
        if n > 0 {
            let mut bytes = vec![0; n];
            self.reader.read_exact(&mut bytes).expect("read event data");
            let more: Value = serde_json::from_slice(&bytes).expect("event data is JSON");
            for (k, v) in more.as_object().expect("event data is an object") {
                data[k] = v.clone();
            }
        }
        let mut payload = vec![0; length("payload_length") as usize];
        self.reader
            .read_exact(&mut payload)
            .expect("read event payload");
        Some(Ev {
            kind: header["type"].as_str().expect("a type").to_string(),
            header,
            data,
            payload,
        })
    }

    fn expect(&mut self, kind: &str) -> Ev {
        let ev = self
            .recv()
            .unwrap_or_else(|| panic!("the server closed the connection; expected {kind}"));
        assert_eq!(ev.kind, kind, "expected {kind}, got {ev:?}");
        ev
    }

    /// Sends `describe`; returns the `info` data.
    fn describe(&mut self) -> Value {
        self.send("describe", json!({}));
        self.expect("info").data
    }

    /// Reads one audio stream (`first` may be its `audio-start`, already read); checks
    /// the format and returns the samples.
    fn audio(&mut self, first: Option<Ev>) -> Vec<i16> {
        let start = first.unwrap_or_else(|| self.expect("audio-start"));
        assert_eq!(start.kind, "audio-start", "{start:?}");
        check_format(&start.data);
        let mut pcm = Vec::new();
        let mut chunks = 0;
        loop {
            let ev = self.recv().expect("the connection closed during audio");
            match ev.kind.as_str() {
                "audio-stop" => break,
                "audio-chunk" => {
                    check_format(&ev.data);
                    assert_eq!(
                        ev.payload.len(),
                        FRAME_SAMPLES * 2,
                        "one chunk per frame of {FRAME_SAMPLES} 16-bit samples"
                    );
                    pcm.extend_from_slice(&ev.payload);
                    chunks += 1;
                }
                _ => panic!("expected audio-chunk or audio-stop, got {ev:?}"),
            }
        }
        assert!(chunks >= 1, "no audio-chunk");
        let samples = i16s(&pcm);
        assert!(samples.iter().any(|&s| s != 0), "silent audio");
        samples
    }

    /// Reads an `error`, then the end of the connection (the server closes it after an
    /// `error` to a plain `synthesize`); returns the error's data.
    fn error_then_close(&mut self, code: &str) -> Value {
        let data = self.error(code);
        let next = self.recv();
        assert!(
            next.is_none(),
            "the connection stays open after the error: {next:?}"
        );
        data
    }

    /// Reads an `error`; returns its data.
    fn error(&mut self, code: &str) -> Value {
        let ev = self.expect("error");
        assert_eq!(ev.data["code"], code, "{ev:?}");
        assert!(ev.data["text"].as_str().is_some_and(|t| !t.is_empty()));
        ev.data
    }
}

fn check_format(data: &Value) {
    assert_eq!(data["rate"], 24000, "{data}");
    assert_eq!(data["width"], 2, "{data}");
    assert_eq!(data["channels"], 1, "{data}");
}

fn voice_names(info: &Value) -> Vec<String> {
    info["tts"][0]["voices"]
        .as_array()
        .expect("a voice list")
        .iter()
        .map(|v| v["name"].as_str().expect("a voice name").to_string())
        .collect()
}

#[test]
fn describe_then_synthesize_then_refusals_close_the_connection() {
    let sb = Sandbox::new();
    let server = wyoming_setup(&sb).start(&sb);
    let mut c = connect(&server);

    c.send("describe", json!({}));
    let info = c.expect("info");
    assert_eq!(info.header["version"], "1.10.2");
    let program = &info.data["tts"][0];
    assert_eq!(program["name"], "pocket-tts");
    assert_eq!(program["installed"], true);
    assert_eq!(program["supports_synthesize_streaming"], true);
    assert_eq!(program["attribution"]["name"], "Kyutai");
    assert_eq!(voice_names(&info.data), vec![VOICE.to_string()]);
    let voice = &program["voices"][0];
    assert_eq!(voice["installed"], true);
    assert_eq!(
        voice["languages"],
        json!([]),
        "the tiny model has no language"
    );
    for key in ["asr", "handle", "intent", "wake", "mic", "snd"] {
        assert_eq!(info.data[key], json!([]), "{key}");
    }

    c.send("synthesize", json!({ "text": TEXT }));
    let default = c.audio(None);
    // Data inline in the header, the voice by name: the same deterministic audio.
    c.send_inline(
        "synthesize",
        json!({ "text": TEXT, "voice": { "name": VOICE } }),
    );
    assert_eq!(c.audio(None), default);

    c.send(
        "synthesize",
        json!({ "text": TEXT, "voice": { "name": "nobody" } }),
    );
    let e = c.error_then_close("bad-request");
    assert!(e["text"].as_str().unwrap().contains("nobody"), "{e}");
    // A new connection works.
    let mut c = connect(&server);
    assert_eq!(voice_names(&c.describe()), vec![VOICE.to_string()]);

    c.send("synthesize", json!({ "text": "   " }));
    c.error_then_close("bad-request");
    let mut c = connect(&server);
    c.send("synthesize", json!({ "voice": { "name": VOICE } }));
    c.error_then_close("bad-request");
    let mut c = connect(&server);

    // Events the server does not serve are dropped; ping is answered.
    c.send("select-program", json!({ "name": "pocket-tts" }));
    c.send("ping", json!({ "text": "are you there" }));
    assert_eq!(c.expect("pong").data["text"], "are you there");
    c.send("synthesize", json!({ "text": TEXT }));
    assert_eq!(c.audio(None), default);

    let log = server.log();
    assert!(log.contains("wyoming ") && log.contains(" ok"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn streaming_speaks_each_sentence_and_ignores_the_plain_synthesize() {
    let sb = Sandbox::new();
    let server = wyoming_setup(&sb).start(&sb);
    let mut c = connect(&server);
    let pieces = ["Hello there, ", "my friend. How are ", "you today?"];
    c.send("synthesize-start", json!({ "voice": { "name": VOICE } }));
    c.send("synthesize-chunk", json!({ "text": pieces[0] }));
    c.send("synthesize-chunk", json!({ "text": pieces[1] }));
    // The first sentence is complete: its audio comes before the stream ends.
    let first = c.audio(None);
    c.send("synthesize-chunk", json!({ "text": pieces[2] }));
    // As Home Assistant: the whole text as a plain synthesize, then the stop.
    c.send(
        "synthesize",
        json!({ "text": pieces.concat(), "voice": { "name": VOICE } }),
    );
    c.send("synthesize-stop", json!({}));
    let second = c.audio(None);
    c.expect("synthesize-stopped");
    assert!(!first.is_empty() && !second.is_empty());
    // Nothing was sent for the plain synthesize: the next answer is describe's.
    c.describe();

    // A voice the server does not have: an error at once, no audio, still a stop, and
    // the connection stays open.
    c.send("synthesize-start", json!({ "voice": { "name": "nobody" } }));
    c.error("bad-request");
    c.send(
        "synthesize-chunk",
        json!({ "text": "Some words to say. And more" }),
    );
    c.send("synthesize-stop", json!({}));
    c.expect("synthesize-stopped");

    // Without a voice: the default one; text without a sentence end is spoken at the stop.
    c.send("synthesize-start", json!({}));
    c.send("synthesize-chunk", json!({ "text": "Hello there" }));
    c.send("synthesize-stop", json!({}));
    c.audio(None);
    c.expect("synthesize-stopped");
}

#[test]
fn bad_input_gets_an_error_and_the_connection_is_closed() {
    let sb = Sandbox::new();
    let mut setup = wyoming_setup(&sb);
    setup.options.limits.max_body_bytes = 1024 * 1024;
    let server = setup.start(&sb);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not JSON", b"hello\n".to_vec(), "not valid JSON"),
        ("no type", b"{\"data\": {}}\n".to_vec(), "type"),
        (
            "a header line over 64 KiB",
            vec![b'x'; 64 * 1024 + 1],
            "longer than 64 KiB",
        ),
        (
            "data over the body limit",
            b"{\"type\": \"synthesize\", \"data_length\": 2000000}\n".to_vec(),
            "limit",
        ),
        (
            "a payload over the body limit",
            b"{\"type\": \"audio-chunk\", \"payload_length\": 1048577}\n".to_vec(),
            "limit",
        ),
        (
            "data that is not JSON",
            b"{\"type\": \"synthesize\", \"data_length\": 5}\nabcde".to_vec(),
            "not valid JSON",
        ),
    ];
    for (case, bytes, needle) in cases {
        let mut c = connect(&server);
        c.send_raw(&bytes);
        let e = c.error("bad-request");
        assert!(
            e["text"].as_str().unwrap().contains(needle),
            "{case}: {e} lacks {needle:?}"
        );
        assert!(c.recv().is_none(), "{case}: the connection stays open");
    }
    // The server is fine.
    assert_eq!(
        voice_names(&connect(&server).describe()),
        vec![VOICE.to_string()]
    );
    let log = server.log();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_client_leaving_mid_stream_cancels_its_stream_and_frees_its_slot() {
    // No EOS: a stream runs to its maximum length (seconds on the tiny model); one slot.
    let sb = Sandbox::new();
    let mut setup = wyoming_setup(&sb);
    setup.options.params.eos_threshold = 100.0;
    setup.engine.max_streams = 1;
    setup.engine.max_queued = 0;
    let server = setup.start(&sb);
    let mut c = connect(&server);
    let text = vec!["hello"; 200].join(" ") + ".";
    c.send("synthesize", json!({ "text": text }));
    c.expect("audio-start");
    c.expect("audio-chunk");
    // The only slot is taken: another client is told the server is busy (and is
    // disconnected).
    let mut other = connect(&server);
    other.send("synthesize", json!({ "text": TEXT }));
    other.error_then_close("busy");
    drop(c);
    let cancelled = r#"outcome="cancelled",protocol="wyoming""#;
    server.wait_metric("pocket_tts_streams_total", cancelled, 1.0);
    let deadline = Instant::now() + WAIT;
    server.wait_log("the client is gone");
    // The slot is free again (at the engine's next pass) for the client turned away,
    // on a new connection each try.
    loop {
        let mut other = connect(&server);
        other.send("synthesize", json!({ "text": TEXT }));
        let ev = other.recv().expect("an answer");
        if ev.kind == "error" && ev.data["code"] == "busy" && Instant::now() < deadline {
            assert!(other.recv().is_none(), "busy: the connection stays open");
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        other.audio(Some(ev));
        break;
    }
}

#[test]
fn the_shutdown_closes_idle_connections_and_the_server_stops() {
    let sb = Sandbox::new();
    let mut server = wyoming_setup(&sb).start(&sb);
    let mut idle = connect(&server);
    idle.describe();
    server.shutdown();
    assert!(idle.recv().is_none(), "an idle connection stays open");
    let status = server
        .wait_exit(WAIT)
        .unwrap_or_else(|| panic!("the server did not stop:\n{}", server.log()));
    assert!(status.is_ok(), "{status:?}:\n{}", server.log());
    // New connections are refused.
    assert!(TcpStream::connect(server.wyoming_addr()).is_err());
}

#[test]
fn the_servers_markup_applies_to_wyoming() {
    let sb = Sandbox::new();
    let mut setup = wyoming_setup(&sb);
    setup.options.params.max_tokens = 4;
    setup.options.params.markup = true;
    let server = setup.start(&sb);
    let mut c = connect(&server);
    // Two chunks at max_tokens 4, with or without the pause between them.
    c.send("synthesize", json!({ "text": "Hello there. Well done." }));
    let plain = c.audio(None);
    // 160 ms: two whole frames of silence (the client checks one chunk per frame).
    c.send(
        "synthesize",
        json!({ "text": "Hello there. [pause 160ms] Well done." }),
    );
    let with = c.audio(None);
    let pause = 2 * FRAME_SAMPLES;
    assert_eq!(with.len(), plain.len() + pause);
    let found = (FRAME_SAMPLES..plain.len())
        .step_by(FRAME_SAMPLES)
        .any(|k| {
            with[..k] == plain[..k]
                && with[k..k + pause].iter().all(|&x| x == 0)
                && with[k + pause..] == plain[k..]
        });
    assert!(found, "not the plain audio with the pause inserted");
}
