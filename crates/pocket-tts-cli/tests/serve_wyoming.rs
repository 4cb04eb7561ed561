//! End-to-end tests of `pocket-tts-cli serve --wyoming-port` on the tiny model: the real
//! binary, spoken to over TCP with a small Wyoming client written from the `wyoming`
//! Python package's framing (1.10.2, `wyoming/event.py`).
//!
//! - `describe` → `info`; `synthesize` → `audio-start`, one 16-bit `audio-chunk` per
//!   frame, `audio-stop` (data given after the header or inline in it).
//! - Refused requests (unknown voice, empty text) → `error`, the connection still works.
//! - Streaming synthesis: a sentence is spoken as soon as it is complete, the plain
//!   `synthesize` sent alongside is ignored, `synthesize-stopped` ends it.
//! - Bytes that are not events → `error`, then the connection is closed.
//! - A busy server answers `error` `busy`; a client leaving mid-stream cancels its
//!   stream (its slot is free again); SIGTERM closes idle connections and the server
//!   exits.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// The default voice's name (`--voice …/voice_excerpt.wav`).
const VOICE: &str = "voice_excerpt";
/// Longest wait for the server (start-up, one answer).
const WAIT: Duration = Duration::from_secs(60);

/// A running server, killed when dropped (also when a test panics).
struct Server {
    child: Child,
    http: SocketAddr,
    wyoming: SocketAddr,
    log: Arc<Mutex<String>>,
    _sandbox: Sandbox,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `serve` on free ports with the tiny model, deterministic sampling and
    /// `extra` flags; returns once both addresses are printed.
    fn start(extra: &[(&str, &str)]) -> Server {
        let sb = Sandbox::new();
        let mut args = Args::new("serve")
            .set("--config", utf8(&sb.config))
            .set("--voice", utf8(&tiny("voice_excerpt.wav")))
            .set("--port", "0")
            .set("--wyoming-port", "0")
            .set("--temperature", "0")
            .set("--seed", "1")
            .set("--eos-threshold", "-12.56");
        for (flag, value) in extra {
            args = args.set(flag, *value);
        }
        let mut child = sb.spawn(&args, Stdio::null());
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        {
            // Reads stderr to the end (the server must never block on a full pipe).
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    for (prefix, which) in [
                        ("wyoming listening on tcp://", "wyoming"),
                        ("listening on http://", "http"),
                    ] {
                        if let Some(addr) = line.strip_prefix(prefix) {
                            let _ = tx.send((which, addr.trim().to_string()));
                        }
                    }
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            });
        }
        let (mut http, mut wyoming) = (None, None);
        let deadline = Instant::now() + WAIT;
        while http.is_none() || wyoming.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(("http", a)) => http = Some(a.parse().expect("an http address")),
                Ok((_, a)) => wyoming = Some(a.parse().expect("a wyoming address")),
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "the server did not print both addresses:\n{}",
                        log.lock().unwrap()
                    );
                }
            }
        }
        Server {
            child,
            http: http.unwrap(),
            wyoming: wyoming.unwrap(),
            log,
            _sandbox: sb,
        }
    }

    fn connect(&self) -> Client {
        Client::connect(self.wyoming)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `GET /metrics`' body.
    fn metrics(&self) -> String {
        let mut s = TcpStream::connect(self.http).expect("connect to the HTTP port");
        s.set_read_timeout(Some(WAIT)).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).expect("read /metrics");
        body
    }
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
fn describe_then_synthesize_then_refusals_keep_the_connection() {
    let server = Server::start(&[]);
    let mut c = server.connect();

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
    let e = c.error("bad-request");
    assert!(e["text"].as_str().unwrap().contains("nobody"), "{e}");
    assert_eq!(voice_names(&c.describe()), vec![VOICE.to_string()]);

    c.send("synthesize", json!({ "text": "   " }));
    c.error("bad-request");
    c.send("synthesize", json!({ "voice": { "name": VOICE } }));
    c.error("bad-request");

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
    let server = Server::start(&[]);
    let mut c = server.connect();
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

    // A voice the server does not have: an error at once, no audio, still a stop.
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
    let server = Server::start(&[("--max-upload-mb", "1")]);
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
        let mut c = server.connect();
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
        voice_names(&server.connect().describe()),
        vec![VOICE.to_string()]
    );
    let log = server.log();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_client_leaving_mid_stream_cancels_its_stream_and_frees_its_slot() {
    // No EOS: a stream runs to its maximum length (seconds on the tiny model); one slot.
    let server = Server::start(&[
        ("--eos-threshold", "100"),
        ("--max-streams", "1"),
        ("--max-queued", "0"),
    ]);
    let mut c = server.connect();
    let text = vec!["hello"; 200].join(" ") + ".";
    c.send("synthesize", json!({ "text": text }));
    c.expect("audio-start");
    c.expect("audio-chunk");
    // The only slot is taken: another client is told the server is busy.
    let mut other = server.connect();
    other.send("synthesize", json!({ "text": TEXT }));
    other.error("busy");
    drop(c);
    let deadline = Instant::now() + WAIT;
    let cancelled = "pocket_tts_streams_total{outcome=\"cancelled\",protocol=\"wyoming\"} 1";
    loop {
        let metrics = server.metrics();
        if metrics.contains(cancelled) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stream was not cancelled:\n{metrics}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        server.log().contains("the client is gone"),
        "{}",
        server.log()
    );
    // The slot is free again (at the engine's next pass) for the client turned away.
    loop {
        other.send("synthesize", json!({ "text": TEXT }));
        let ev = other.recv().expect("an answer");
        if ev.kind == "error" && ev.data["code"] == "busy" && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        other.audio(Some(ev));
        break;
    }
}

#[test]
fn sigterm_closes_idle_connections_and_the_server_exits() {
    let mut server = Server::start(&[]);
    let mut idle = server.connect();
    idle.describe();
    let t0 = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    assert!(idle.recv().is_none(), "an idle connection stays open");
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status}:\n{}", server.log());
            break;
        }
        assert!(
            t0.elapsed() < WAIT,
            "the server did not exit:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // New connections are refused.
    assert!(TcpStream::connect(server.wyoming).is_err());
}
