//! End-to-end tests of Kyutai's streaming websocket (`GET /api/tts_streaming`) on the tiny
//! model: the server in process, spoken to with a websocket client (tokio-tungstenite)
//! that reads every message as unmute's client does (a MessagePack map whose `type` is
//! one of `Ready`, `Audio`, `Text`, `Error`, with exactly their fields).
//!
//! - Words sent one by one, then `Eos` → `Ready`, `Audio` blocks of 1920 samples (the
//!   same samples the library generates for the text), every word echoed once in order
//!   with increasing times within the audio, close 1000; a complete sentence is spoken
//!   before `Eos`.
//! - The legacy frames (a websocket text frame, the binary `\0`) and `format=Pcm` (raw
//!   little-endian `f32` blocks, nothing else).
//! - `format=OggOpusMessagePack` (`OggOpus` messages) and no `format` (raw Ogg pages, as
//!   moshi-server): one Ogg Opus stream as long as the blocks of the PCM formats.
//! - Auth by `kyutai-api-key` or `auth_id` (401 without); a bad `format` is 400; bad messages, a bad `Voice`, text over the limit get
//!   an `Error` and a close; a `Voice` of this model's latents speaks.
//! - With one slot, a second session is told "no free channels"; a client closing
//!   mid-sentence cancels its stream and the next session is served.
//! - The shutdown lets a session speak the text it has, then closes it (1001).
//! - The server pings every 10 s (the 30 s silence limit is not tested: too long).

use crate::common;

use std::time::{Duration, Instant};

use common::server::{Server, Setup};
use common::*;
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Longest wait for one message.
const WAIT: Duration = Duration::from_secs(60);

/// A server message, read strictly: unknown types and fields fail the test.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum Msg {
    Ready,
    Audio {
        pcm: Vec<f32>,
    },
    Text {
        text: String,
        start_s: f64,
        stop_s: f64,
    },
    Error {
        message: String,
    },
}

/// What a session received.
#[derive(Debug, Default)]
struct Received {
    ready: bool,
    audio: Vec<f32>,
    blocks: usize,
    words: Vec<(String, f64, f64)>,
    errors: Vec<String>,
    close: Option<(u16, String)>,
}

struct Client {
    rt: tokio::runtime::Runtime,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

fn ws_url(server: &Server, query: &str) -> String {
    format!(
        "{}/api/tts_streaming{query}",
        server.base.replacen("http", "ws", 1)
    )
}

/// Connects with `headers`; the HTTP status when the upgrade is refused.
fn try_connect(server: &Server, query: &str, headers: &[(&str, &str)]) -> Result<Client, u16> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut request = ws_url(server, query).into_client_request().unwrap();
    for (k, v) in headers {
        let name = tungstenite::http::HeaderName::from_bytes(k.as_bytes()).expect("a header name");
        request
            .headers_mut()
            .insert(name, v.parse().expect("a header value"));
    }
    match rt.block_on(tokio_tungstenite::connect_async(request)) {
        Ok((ws, _)) => Ok(Client { rt, ws }),
        Err(tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(e) => panic!("connect: {e}"),
    }
}

fn connect(server: &Server, query: &str) -> Client {
    try_connect(server, query, &[]).unwrap_or_else(|s| panic!("the upgrade got {s}"))
}

#[derive(Serialize)]
struct TextMsg<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    text: &'a str,
}

#[derive(Serialize)]
struct Tagged<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
}

impl Client {
    fn send(&mut self, message: Message) {
        self.rt.block_on(self.ws.send(message)).expect("send");
    }

    fn send_msgpack<T: Serialize>(&mut self, value: &T) {
        let bytes = rmp_serde::to_vec_named(value).unwrap();
        self.send(Message::Binary(bytes.into()));
    }

    fn text(&mut self, text: &str) {
        self.send_msgpack(&TextMsg { kind: "Text", text });
    }

    fn eos(&mut self) {
        self.send_msgpack(&Tagged { kind: "Eos" });
    }

    /// The next data message (pings are skipped), or the close code and reason (`None`
    /// when the connection ended without a close frame).
    fn next(&mut self) -> Result<Vec<u8>, Option<(u16, String)>> {
        loop {
            let next = self
                .rt
                .block_on(async { tokio::time::timeout(WAIT, self.ws.next()).await })
                .expect("a message within the wait");
            match next {
                Some(Ok(Message::Binary(b))) => return Ok(b.to_vec()),
                Some(Ok(Message::Close(frame))) => {
                    return Err(frame.map(|f| (u16::from(f.code), f.reason.to_string())))
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(other)) => panic!("unexpected frame {other:?}"),
                Some(Err(e)) => panic!("read: {e}"),
                None => return Err(None),
            }
        }
    }

    /// The next message, parsed strictly.
    fn recv(&mut self) -> Result<Msg, Option<(u16, String)>> {
        self.next().map(|bytes| {
            rmp_serde::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("not a protocol message ({e}): {bytes:x?}"))
        })
    }

    /// Reads until the close; every `Audio` must be 1920 samples.
    fn read_all(&mut self) -> Received {
        let mut r = Received::default();
        loop {
            match self.recv() {
                Ok(Msg::Ready) => {
                    assert!(!r.ready && r.blocks == 0, "Ready comes first, once");
                    r.ready = true;
                }
                Ok(Msg::Audio { pcm }) => {
                    assert_eq!(pcm.len(), FRAME_SAMPLES, "an Audio block");
                    r.blocks += 1;
                    r.audio.extend(pcm);
                }
                Ok(Msg::Text {
                    text,
                    start_s,
                    stop_s,
                }) => r.words.push((text, start_s, stop_s)),
                Ok(Msg::Error { message }) => r.errors.push(message),
                Err(close) => {
                    r.close = close;
                    return r;
                }
            }
        }
    }

    /// Sends `text` word by word (each with a leading space, as unmute does), then `Eos`.
    fn speak_words(&mut self, text: &str) {
        for word in text.split_whitespace() {
            self.text(&format!(" {word}"));
        }
        self.eos();
    }
}

/// The samples the library generates for `text` with the tests' settings.
fn library_samples(sb: &Sandbox, text: &str) -> Vec<f32> {
    let model = sb.model();
    let voice = model
        .voice_state(utf8(&tiny("voice_excerpt.wav")), true)
        .expect("the fixture voice");
    model
        .generate(&voice, text, &params(model.config()))
        .expect("generate")
}

/// Every word echoed in order, with times that increase and lie within the audio.
fn check_words(r: &Received, text: &str) {
    let sent: Vec<&str> = text.split_whitespace().collect();
    let echoed: Vec<&str> = r.words.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(echoed, sent, "every word echoed once, in order");
    let audio_s = r.audio.len() as f64 / f64::from(SAMPLE_RATE);
    let mut last_stop = 0.0;
    let mut last_start = -1.0;
    for (word, start, stop) in &r.words {
        assert!(
            *start > last_start && *start >= last_stop - 1e-9 && stop > start,
            "{word}: {start}..{stop} after {last_start}..{last_stop}"
        );
        assert!(*stop <= audio_s + 1e-9, "{word} ends after the audio");
        (last_start, last_stop) = (*start, *stop);
    }
}

#[test]
fn words_in_speech_and_word_times_out_then_close_1000() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let mut c = connect(&server, "?format=PcmMessagePack&cfg_alpha=1.5");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    c.speak_words(TEXT);
    let r = c.read_all();
    assert_eq!(r.close, Some((1000, String::new())), "{:?}", r.errors);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // "Hello there." is too short to be a sentence of its own: spoken at Eos, as one
    // stream, so its samples are the library's, padded to whole blocks.
    let expected = library_samples(&sb, TEXT);
    assert_eq!(r.blocks, expected.len().div_ceil(FRAME_SAMPLES));
    assert_eq!(&r.audio[..expected.len()], &expected[..]);
    assert!(r.audio[expected.len()..].iter().all(|&s| s == 0.0));
    check_words(&r, TEXT);
    let completed = r#"outcome="completed",protocol="kyutai""#;
    server.wait_metric("pocket_tts_streams_total", completed, 1.0);
    server.wait_log("kyutai #0 voice=\"voice_excerpt\" format=PcmMessagePack 2 words in, 2 echoed");
}

#[test]
fn a_complete_sentence_is_spoken_before_the_end_of_input() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let mut c = connect(&server, "?format=PcmMessagePack");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    let first = "Hello there my friend.";
    for word in first.split_whitespace() {
        c.text(word);
    }
    // Its audio and its words come without Eos.
    let mut words = Vec::new();
    let mut blocks = 0;
    while words.len() < 4 {
        match c.recv().expect("the first sentence") {
            Msg::Audio { .. } => blocks += 1,
            Msg::Text { text, .. } => words.push(text),
            other => panic!("{other:?}"),
        }
    }
    assert!(blocks > 0);
    assert_eq!(words, ["Hello", "there", "my", "friend."]);
    // A whole text in one message, as tts_rust_server.py sends it.
    c.text("How are you today? I am fine");
    c.eos();
    let r = c.read_all();
    assert_eq!(r.close.as_ref().map(|c| c.0), Some(1000), "{:?}", r.errors);
    let rest = "How are you today? I am fine";
    let echoed: Vec<&str> = r.words.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(echoed, rest.split_whitespace().collect::<Vec<_>>());
    let first_end = blocks as f64 * 0.08;
    assert!(
        r.words[0].1 >= first_end - 0.08,
        "{:?} after {first_end} s",
        r.words[0]
    );
    let completed = r#"outcome="completed",protocol="kyutai""#;
    server.wait_metric("pocket_tts_streams_total", completed, 3.0);
}

#[test]
fn legacy_frames_and_raw_pcm() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let mut c = connect(&server, "?format=Pcm");
    c.send(Message::Text(TEXT.into()));
    c.send(Message::Binary(vec![0u8].into()));
    let mut samples = Vec::new();
    let close = loop {
        match c.next() {
            Ok(bytes) => {
                assert_eq!(bytes.len(), FRAME_SAMPLES * 4, "raw f32 blocks only");
                samples.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
            }
            Err(close) => break close,
        }
    };
    assert_eq!(close.map(|c| c.0), Some(1000));
    let expected = library_samples(&sb, TEXT);
    assert_eq!(&samples[..expected.len()], &expected[..]);
}

/// The messages of `format=OggOpusMessagePack`, parsed strictly.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum OggMsg {
    Ready,
    OggOpus {
        data: Vec<u8>,
    },
    Text {
        text: String,
        start_s: f64,
        stop_s: f64,
    },
}

/// The audio length of an Ogg Opus stream in samples at 24 kHz: the last page's granule
/// position (48 kHz) less the pre-skip of the `OpusHead` header.
fn ogg_opus_samples_24k(ogg: &[u8]) -> u64 {
    assert!(ogg.starts_with(b"OggS"), "an Ogg stream");
    let head = ogg
        .windows(8)
        .position(|w| w == b"OpusHead")
        .expect("an OpusHead header");
    let pre_skip = u64::from(u16::from_le_bytes([ogg[head + 10], ogg[head + 11]]));
    let (mut at, mut granule) = (0, 0u64);
    while at + 27 <= ogg.len() {
        assert_eq!(&ogg[at..at + 4], b"OggS", "a page at {at}");
        granule = u64::from_le_bytes(ogg[at + 6..at + 14].try_into().unwrap());
        let segments = usize::from(ogg[at + 26]);
        let body: usize = ogg[at + 27..at + 27 + segments]
            .iter()
            .map(|&b| usize::from(b))
            .sum();
        at += 27 + segments + body;
    }
    assert_eq!(at, ogg.len(), "whole pages");
    (granule - pre_skip) / 2
}

#[test]
fn ogg_opus_with_and_without_messages() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let expected = library_samples(&sb, TEXT).len() as u64;
    let padded = expected.div_ceil(FRAME_SAMPLES as u64) * FRAME_SAMPLES as u64;
    // OggOpusMessagePack: Ready, OggOpus messages and the words, close 1000.
    let mut c = connect(&server, "?format=OggOpusMessagePack");
    c.speak_words(TEXT);
    let (mut ogg, mut words, mut ready) = (Vec::new(), 0, false);
    let close = loop {
        match c.next() {
            Ok(bytes) => match rmp_serde::from_slice::<OggMsg>(&bytes)
                .unwrap_or_else(|e| panic!("not a protocol message ({e})"))
            {
                OggMsg::Ready => ready = true,
                OggMsg::OggOpus { data } => {
                    assert!(ready, "Ready comes first");
                    assert!(!data.is_empty());
                    ogg.extend(data);
                }
                OggMsg::Text {
                    text,
                    start_s,
                    stop_s,
                } => {
                    assert!(!text.is_empty() && stop_s >= start_s);
                    words += 1;
                }
            },
            Err(close) => break close,
        }
    };
    assert_eq!(close.map(|c| c.0), Some(1000));
    assert_eq!(words, TEXT.split_whitespace().count());
    assert_eq!(ogg_opus_samples_24k(&ogg), padded);
    // No `format`: raw Ogg pages only, as moshi-server.
    let mut c = connect(&server, "");
    c.speak_words(TEXT);
    let mut raw = Vec::new();
    let close = loop {
        match c.next() {
            Ok(bytes) => raw.extend(bytes),
            Err(close) => break close,
        }
    };
    assert_eq!(close.map(|c| c.0), Some(1000));
    assert_eq!(ogg_opus_samples_24k(&raw), padded);
}

#[test]
fn the_api_key_format_and_bad_messages_are_checked() {
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.api_key = Some("s3cret".into());
    setup.options.limits.max_text_chars = 40;
    let server = setup.start(&sb);
    let q = "?format=PcmMessagePack";
    assert_eq!(try_connect(&server, q, &[]).err(), Some(401));
    assert_eq!(
        try_connect(&server, q, &[("kyutai-api-key", "wrong")]).err(),
        Some(401)
    );
    let mut c = try_connect(&server, q, &[("kyutai-api-key", "s3cret")]).expect("the header");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    drop(c);
    let mut c = connect(&server, &format!("{q}&auth_id=s3cret"));
    assert_eq!(c.recv(), Ok(Msg::Ready));
    drop(c);
    let key = "&auth_id=s3cret";
    assert_eq!(
        try_connect(&server, &format!("?format=Mp3{key}"), &[]).err(),
        Some(400)
    );
    // An unknown message type.
    let mut c = connect(&server, &format!("{q}{key}"));
    assert_eq!(c.recv(), Ok(Msg::Ready));
    c.send_msgpack(&Tagged { kind: "Shout" });
    let r = c.read_all();
    assert!(r.errors[0].contains("\"Shout\""), "{:?}", r.errors);
    assert_eq!(r.close.map(|c| c.0), Some(1008));
    // Text over the limit.
    let mut c = connect(&server, &format!("{q}{key}"));
    assert_eq!(c.recv(), Ok(Msg::Ready));
    c.text(&"word ".repeat(10));
    let r = c.read_all();
    assert!(r.errors[0].contains("max_text_chars"), "{:?}", r.errors);
    assert_eq!(r.close.map(|c| c.0), Some(1008));
    // A Voice that is not this model's latents.
    #[derive(Serialize)]
    struct Voice<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        embeddings: Vec<f32>,
        shape: Vec<usize>,
    }
    let mut c = connect(&server, &format!("{q}{key}"));
    assert_eq!(c.recv(), Ok(Msg::Ready));
    c.send_msgpack(&Voice {
        kind: "Voice",
        embeddings: vec![0.0; 512 * 4],
        shape: vec![1, 512, 4],
    });
    let r = c.read_all();
    assert!(r.errors[0].contains("[1, 512, 4]"), "{:?}", r.errors);
    assert_eq!(r.close.map(|c| c.0), Some(1008));
    let log = server.log();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_voice_message_of_latents_speaks_with_that_voice() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let model = sb.model();
    let (samples, rate) =
        pocket_tts_core::audio::read_audio(&tiny("voice_excerpt.wav")).expect("the voice");
    let samples = pocket_tts_core::audio::resample(&samples, rate, SAMPLE_RATE).unwrap();
    let latents = model.encode_audio(&samples).expect("latents");
    #[derive(Serialize)]
    struct Voice {
        #[serde(rename = "type")]
        kind: &'static str,
        embeddings: Vec<f32>,
        shape: Vec<usize>,
    }
    // An unknown voice name falls back to the default (a moshi-server voice path).
    let mut c = connect(&server, "?format=PcmMessagePack&voice=expresso/ex03.wav");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    c.send_msgpack(&Voice {
        kind: "Voice",
        embeddings: latents.values.clone(),
        shape: vec![1, latents.frames(), latents.dim],
    });
    c.speak_words(TEXT);
    let r = c.read_all();
    assert_eq!(r.close.map(|c| c.0), Some(1000), "{:?}", r.errors);
    let voice = model.voice_state_from_latents(&latents).unwrap();
    let expected = model
        .generate(&voice, TEXT, &params(model.config()))
        .unwrap();
    assert_eq!(&r.audio[..expected.len()], &expected[..]);
    server.wait_log("speaking with the default voice");
}

#[test]
fn with_one_slot_a_second_session_is_refused_and_a_client_leaving_frees_it() {
    // No EOS: a piece runs to its maximum length (seconds on the tiny model); one slot.
    let sb = Sandbox::new();
    let mut setup = Setup::new(&sb);
    setup.options.params.eos_threshold = 100.0;
    setup.engine.max_streams = 1;
    setup.engine.max_queued = 0;
    let server = setup.start(&sb);
    let q = "?format=PcmMessagePack";
    let mut c = connect(&server, q);
    assert_eq!(c.recv(), Ok(Msg::Ready));
    for word in "hello hello hello hello hello hello hello hello hello hello.".split(' ') {
        c.text(word);
    }
    assert!(matches!(c.recv(), Ok(Msg::Audio { .. })));
    let mut other = connect(&server, q);
    let r = other.read_all();
    assert!(!r.ready);
    assert!(r.errors[0].contains("no free channels"), "{:?}", r.errors);
    assert_eq!(r.close.map(|c| c.0), Some(1013));
    // Closing mid-sentence cancels the stream at once.
    let t0 = Instant::now();
    c.rt.block_on(c.ws.close(None)).expect("close");
    drop(c);
    let cancelled = r#"outcome="cancelled",protocol="kyutai""#;
    server.wait_metric("pocket_tts_streams_total", cancelled, 1.0);
    server.wait_log("the client is gone");
    // The engine frees the slot at its next pass.
    server.wait_active(0.0);
    let freed = t0.elapsed();
    assert!(freed < Duration::from_secs(2), "freed after {freed:?}");
    // The next session is served (its place and the engine's slot are free).
    let mut next = connect(&server, q);
    let first = next.recv();
    assert_eq!(first, Ok(Msg::Ready), "freed after {freed:?}");
    next.text("hello.");
    assert!(matches!(next.recv(), Ok(Msg::Audio { .. })));
}

#[test]
fn the_shutdown_lets_a_session_speak_its_text_then_closes_it() {
    let sb = Sandbox::new();
    let mut server = Setup::new(&sb).start(&sb);
    let mut c = connect(&server, "?format=PcmMessagePack");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    let mut idle = connect(&server, "?format=PcmMessagePack");
    assert_eq!(idle.recv(), Ok(Msg::Ready));
    c.text("Hello there my friend. And");
    assert!(matches!(c.recv(), Ok(Msg::Audio { .. })));
    server.shutdown();
    // The sentence and the word waiting are spoken, then the session is closed.
    let r = c.read_all();
    let echoed: Vec<&str> = r.words.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(echoed, ["Hello", "there", "my", "friend.", "And"]);
    assert!(r.errors[0].contains("shutting down"), "{:?}", r.errors);
    assert_eq!(r.close.map(|c| c.0), Some(1001));
    // A session with nothing to say is closed at once.
    let r = idle.read_all();
    assert_eq!(r.close.map(|c| c.0), Some(1001));
    let status = server
        .wait_exit(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("the server did not stop:\n{}", server.log()));
    assert!(status.is_ok(), "{status:?}");
}

#[test]
fn the_server_pings_every_10_s() {
    let sb = Sandbox::new();
    let server = Setup::new(&sb).start(&sb);
    let mut c = connect(&server, "?format=PcmMessagePack");
    assert_eq!(c.recv(), Ok(Msg::Ready));
    let t0 = Instant::now();
    let frame =
        c.rt.block_on(async { tokio::time::timeout(Duration::from_secs(15), c.ws.next()).await })
            .expect("a frame within 15 s");
    assert!(matches!(frame, Some(Ok(Message::Ping(_)))), "{frame:?}");
    let after = t0.elapsed();
    assert!(after >= Duration::from_secs(9), "a ping after {after:?}");
}
