//! One Wyoming connection: its events read and answered in order, audio streamed as
//! frames are generated. Reference: the `wyoming` Python package 1.10.2 (`wyoming/info.py`,
//! `wyoming/tts.py`, `wyoming/audio.py`, `wyoming/error.py`, `wyoming/ping.py`).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pocket_tts_core::audio::pcm16_le;
use pocket_tts_core::VoiceState;
use serde_json::{json, Map, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::proto::{Event, EventReader, ReadError};
use super::text::ready_prefix;
use crate::error::{ErrorKind, RequestError};
use crate::state::{AppState, SynthEvent, Synthesis, TextRequest};
use crate::voices::VoiceSource;

/// Bytes per sample (`width`: 16-bit PCM).
const SAMPLE_WIDTH: usize = 2;
/// Longest wait for one event to be written; past it the client is taken for gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of events read ahead (while audio is being sent) before reading pauses.
const READ_AHEAD_BYTES: usize = 1024 * 1024;
/// Longest wait for a client to close its side once we closed ours (after bad input, or
/// after refusing a plain `synthesize`).
const LINGER: Duration = Duration::from_secs(1);

/// Serves one connection until the client leaves, sends bytes that are not events, gets
/// an `error` for a plain `synthesize`, or the server stops.
pub(super) async fn run(
    stream: TcpStream,
    peer: SocketAddr,
    state: Arc<AppState>,
    stop: CancellationToken,
) {
    tracing::debug!("wyoming: {peer} connected");
    // Audio chunks go out as soon as they are generated.
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let max_body = state.limits.max_body_bytes;
    let mut conn = Connection {
        reader: EventReader::new(read, max_body),
        writer: write,
        state,
        peer,
        stop,
        pending: VecDeque::new(),
        pending_bytes: 0,
        input_closed: false,
        session: None,
    };
    let end = conn.serve().await;
    tracing::debug!("wyoming: {peer} disconnected ({end})");
}

/// Why a connection ends.
#[derive(Debug)]
enum End {
    /// The client closed its side, and every event it sent was served.
    ClientDone,
    /// The server is stopping.
    Stopping,
    /// The client sent bytes that are not events (it was sent an `error`).
    BadInput(String),
    /// A plain `synthesize` was answered with an `error`: a client waiting for
    /// `audio-stop` (Home Assistant) learns from the close that no audio comes.
    RefusedSynthesize,
    /// Reading failed (connection reset).
    ReadFailed(std::io::Error),
    /// Writing failed or timed out: the client is gone or does not read.
    WriteFailed(String),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::ClientDone => f.write_str("closed by the client"),
            End::Stopping => f.write_str("the server is stopping"),
            End::BadInput(m) => write!(f, "bad input: {m}"),
            End::RefusedSynthesize => f.write_str("closed after an error to a synthesize"),
            End::ReadFailed(e) => write!(f, "read failed: {e}"),
            End::WriteFailed(m) => write!(f, "write failed: {m}"),
        }
    }
}

/// A streaming synthesis in progress (`synthesize-start` … `synthesize-stop`).
struct Session {
    /// The voice and its name; `None` when it could not be resolved (the client got an
    /// `error`; the session's text is dropped until `synthesize-stop`).
    voice: Option<(String, Arc<VoiceState>)>,
    /// Text received and not spoken yet.
    text: String,
}

/// What a request to speak was answered with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Audio (`audio-start` … `audio-stop`).
    Audio,
    /// An `error` event.
    Error,
}

/// How a synthesis ended, for the log.
enum Outcome {
    Completed,
    Refused(RequestError),
    Failed(String),
    /// The connection broke while audio was being sent.
    Gone(String),
}

struct Connection {
    reader: EventReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    state: Arc<AppState>,
    peer: SocketAddr,
    stop: CancellationToken,
    /// Events read ahead while audio was being sent, served next (a read error last).
    pending: VecDeque<Result<Event, ReadError>>,
    pending_bytes: usize,
    /// The client closed its side, or sent bytes that are not events: read no more.
    input_closed: bool,
    session: Option<Session>,
}

impl Connection {
    async fn serve(&mut self) -> End {
        loop {
            let event = match self.next_event().await {
                Ok(Ok(event)) => event,
                Ok(Err(e)) => {
                    let message = match &e {
                        ReadError::OverLimit(m) => {
                            format!("{m} ({})", self.state.names.max_body_bytes)
                        }
                        _ => e.to_string(),
                    };
                    if self
                        .send(&error_event(&message, "bad-request"))
                        .await
                        .is_ok()
                    {
                        self.close_gently().await;
                    }
                    return End::BadInput(message);
                }
                Err(end) => return end,
            };
            match self.handle(event).await {
                Ok(()) => {}
                Err(End::RefusedSynthesize) => {
                    // Home Assistant's non-streaming path reads until `audio-stop`, skips
                    // `error` events and has no read timeout: only the close ends its wait.
                    tracing::debug!(
                        "wyoming: {} closing the connection after an error to a plain \
                         synthesize",
                        self.peer
                    );
                    self.close_gently().await;
                    return End::RefusedSynthesize;
                }
                Err(end) => return end,
            }
        }
    }

    /// Closes gently, once the last event is sent: our side first, then drops what the
    /// client still sends (for at most [`LINGER`]), so that the close does not reset the
    /// connection before the client has read that event.
    async fn close_gently(&mut self) {
        let _ = self.writer.shutdown().await;
        let _ = tokio::time::timeout(
            LINGER,
            self.reader.discard(self.state.limits.max_body_bytes),
        )
        .await;
    }

    /// The next event to serve: read ahead, else from the socket (or the end).
    async fn next_event(&mut self) -> Result<Result<Event, ReadError>, End> {
        if self.stop.is_cancelled() {
            return Err(End::Stopping);
        }
        if let Some(next) = self.pending.pop_front() {
            if let Ok(e) = &next {
                self.pending_bytes -= e.wire_len;
            }
            return Ok(next);
        }
        if self.input_closed {
            return Err(End::ClientDone);
        }
        tokio::select! {
            biased;
            () = self.stop.cancelled() => Err(End::Stopping),
            read = self.reader.next() => match read {
                Ok(Some(event)) => Ok(Ok(event)),
                Ok(None) => Err(End::ClientDone),
                Err(ReadError::Io(e)) => Err(End::ReadFailed(e)),
                Err(e) => Ok(Err(e)),
            },
        }
    }

    /// Keeps an event read while audio is being sent. A client gone with a reset ends
    /// the connection at once (and so cancels its stream); one that closed its side
    /// still gets the answers to what it sent.
    fn read_ahead(&mut self, read: Result<Option<Event>, ReadError>) -> Result<(), End> {
        match read {
            Ok(Some(event)) => {
                self.pending_bytes += event.wire_len;
                self.pending.push_back(Ok(event));
            }
            Ok(None) => self.input_closed = true,
            Err(ReadError::Io(e)) => return Err(End::ReadFailed(e)),
            Err(e) => {
                self.pending.push_back(Err(e));
                self.input_closed = true;
            }
        }
        Ok(())
    }

    fn can_read_ahead(&self) -> bool {
        !self.input_closed && self.pending_bytes < READ_AHEAD_BYTES
    }

    async fn send(&mut self, event: &Event) -> Result<(), End> {
        let bytes = event.encode();
        match tokio::time::timeout(WRITE_TIMEOUT, self.writer.write_all(&bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(End::WriteFailed(e.to_string())),
            Err(_) => Err(End::WriteFailed(format!(
                "the client read nothing for {} s",
                WRITE_TIMEOUT.as_secs()
            ))),
        }
    }

    async fn send_error(&mut self, e: &RequestError) -> Result<(), End> {
        self.send(&error_event(&e.message, error_code(e.kind)))
            .await
    }

    async fn handle(&mut self, event: Event) -> Result<(), End> {
        match event.kind.as_str() {
            "describe" => {
                let info = self.info();
                self.send(&info).await
            }
            "ping" => {
                let text = event.data.get("text").cloned().unwrap_or(Value::Null);
                self.send(&Event::new("pong", json!({ "text": text })))
                    .await
            }
            "synthesize" if self.session.is_some() => {
                // wyoming/tts.py: a streaming client also sends the whole text as a plain
                // `synthesize`, for servers without streaming; it is spoken already.
                tracing::debug!("wyoming: {} synthesize within a stream: ignored", self.peer);
                Ok(())
            }
            "synthesize" => match self.synthesize(&event.data).await? {
                Answer::Audio => Ok(()),
                Answer::Error => Err(End::RefusedSynthesize),
            },
            "synthesize-start" => self.start_session(&event.data).await,
            "synthesize-chunk" => self.session_chunk(&event.data).await,
            "synthesize-stop" => self.stop_session().await,
            other => {
                // The README: servers drop events they do not know (select-program, …).
                tracing::debug!("wyoming: {} sent {other:?}: ignored", self.peer);
                Ok(())
            }
        }
    }

    /// The `info` event: one `tts` program with the server's voices.
    fn info(&self) -> Event {
        let languages = language_codes(self.state.engine.model().language());
        let voices: Vec<Value> = self
            .state
            .voices
            .list()
            .into_iter()
            // OpenAI's voice names are for OpenAI's clients: Home Assistant lists voices.
            .filter(|v| v.source != VoiceSource::Alias)
            .map(|v| {
                let description = match v.source {
                    VoiceSource::Default => format!("{} (default)", v.name),
                    VoiceSource::Upload => format!("{} (uploaded)", v.name),
                    VoiceSource::Folder | VoiceSource::Builtin | VoiceSource::Alias => {
                        v.name.clone()
                    }
                };
                json!({
                    "name": v.name,
                    "attribution": attribution(),
                    "installed": true,
                    "description": description,
                    "version": null,
                    "languages": languages,
                    "speakers": null,
                })
            })
            .collect();
        let program = json!({
            "name": "pocket-tts",
            "attribution": attribution(),
            "installed": true,
            "description": "Kyutai Pocket TTS (pocket-tts-rs), streaming speech on the CPU",
            "version": env!("CARGO_PKG_VERSION"),
            "voices": voices,
            "supports_synthesize_streaming": true,
        });
        Event::new(
            "info",
            json!({
                "asr": [], "tts": [program], "handle": [], "intent": [],
                "wake": [], "mic": [], "snd": [],
            }),
        )
    }

    /// The voice of a request's `voice` field: its `name`, or the default voice (no
    /// field, no name: `language` and `speaker` select nothing on this server).
    async fn voice_of(
        &self,
        data: &Map<String, Value>,
    ) -> Result<(String, Arc<VoiceState>), RequestError> {
        let default = || {
            (
                self.state.voices.default_name().to_string(),
                self.state.voices.default_voice(),
            )
        };
        let name = match data.get("voice") {
            None | Some(Value::Null) => return Ok(default()),
            Some(Value::Object(v)) => match v.get("name") {
                None | Some(Value::Null) => return Ok(default()),
                Some(Value::String(name)) => name,
                Some(_) => {
                    return Err(RequestError::bad_request(
                        "voice",
                        "voice.name is not a string: give a voice name from info",
                    ))
                }
            },
            Some(_) => {
                return Err(RequestError::bad_request(
                    "voice",
                    "voice is not an object: give {\"name\": NAME} with a voice from info",
                ))
            }
        };
        let voice = self.state.voices.resolve(name, "voice").await?;
        Ok((name.clone(), voice))
    }

    /// `synthesize`: the whole text in one audio stream.
    async fn synthesize(&mut self, data: &Map<String, Value>) -> Result<Answer, End> {
        let t0 = Instant::now();
        let Some(text) = data.get("text").and_then(Value::as_str) else {
            let e = RequestError::bad_request("text", "synthesize needs data.text, a string");
            self.log("synthesize", "-", 0, &Outcome::Refused(e.clone()), 0, t0);
            self.send_error(&e).await?;
            return Ok(Answer::Error);
        };
        match self.voice_of(data).await {
            Ok((name, voice)) => self.speak(&name, voice, text, "synthesize").await,
            Err(e) => {
                let (name, chars) = (requested_voice(data), text.chars().count());
                self.log(
                    "synthesize",
                    &name,
                    chars,
                    &Outcome::Refused(e.clone()),
                    0,
                    t0,
                );
                self.send_error(&e).await?;
                Ok(Answer::Error)
            }
        }
    }

    /// `synthesize-start`: a new streaming session (replacing an unfinished one).
    async fn start_session(&mut self, data: &Map<String, Value>) -> Result<(), End> {
        if self.session.is_some() {
            tracing::debug!(
                "wyoming: {} synthesize-start before synthesize-stop: the unspoken text \
                 is dropped",
                self.peer
            );
        }
        let voice = match self.voice_of(data).await {
            Ok(v) => Some(v),
            Err(e) => {
                let name = requested_voice(data);
                let outcome = Outcome::Refused(e.clone());
                self.log("synthesize-start", &name, 0, &outcome, 0, Instant::now());
                self.send_error(&e).await?;
                None
            }
        };
        self.session = Some(Session {
            voice,
            text: String::new(),
        });
        Ok(())
    }

    /// `synthesize-chunk`: more text; every complete sentence is spoken at once.
    async fn session_chunk(&mut self, data: &Map<String, Value>) -> Result<(), End> {
        let Some(session) = self.session.as_mut() else {
            tracing::debug!(
                "wyoming: {} synthesize-chunk without synthesize-start: ignored",
                self.peer
            );
            return Ok(());
        };
        let Some(text) = data.get("text").and_then(Value::as_str) else {
            let e = RequestError::bad_request("text", "synthesize-chunk needs data.text, a string");
            return self.send_error(&e).await;
        };
        let Some((name, voice)) = session.voice.clone() else {
            return Ok(());
        };
        session.text.push_str(text);
        let limit = self.state.limits.max_text_chars;
        while let Some(piece) = self.take_ready_text(limit, false) {
            self.speak(&name, Arc::clone(&voice), &piece, "synthesize-chunk")
                .await?;
        }
        Ok(())
    }

    /// `synthesize-stop`: speaks the rest of the text, then `synthesize-stopped`.
    async fn stop_session(&mut self) -> Result<(), End> {
        if let Some(Session {
            voice: Some((name, voice)),
            ..
        }) = &self.session
        {
            let (name, voice) = (name.clone(), Arc::clone(voice));
            let limit = self.state.limits.max_text_chars;
            while let Some(piece) = self.take_ready_text(limit, true) {
                self.speak(&name, Arc::clone(&voice), &piece, "synthesize-stop")
                    .await?;
            }
        }
        self.session = None;
        self.send(&Event::new("synthesize-stopped", Value::Null))
            .await
    }

    /// Takes the session's text that is ready to be spoken: complete sentences, or a
    /// piece within the text limit, or (`all`) everything. Blank pieces are dropped.
    fn take_ready_text(&mut self, limit: usize, all: bool) -> Option<String> {
        let session = self.session.as_mut()?;
        loop {
            let end = match ready_prefix(&session.text, limit) {
                Some(end) => end,
                None if all && !session.text.is_empty() => session.text.len(),
                None => return None,
            };
            let rest = session.text.split_off(end);
            let piece = std::mem::replace(&mut session.text, rest);
            if !piece.trim().is_empty() {
                return Some(piece);
            }
        }
    }

    /// Speaks `text` as one audio stream (`audio-start`, `audio-chunk`…, `audio-stop`),
    /// or answers an `error`. Only a broken connection is an `Err`.
    async fn speak(
        &mut self,
        voice_name: &str,
        voice: Arc<VoiceState>,
        text: &str,
        request: &str,
    ) -> Result<Answer, End> {
        let t0 = Instant::now();
        let chars = text.chars().count();
        let started = self.state.check_text("text", text).and_then(|()| {
            // The server's text options (`normalize`, `markup`) apply.
            self.state
                .synthesize(voice, text, "wyoming", TextRequest::default())
        });
        let synthesis = match started {
            Ok(s) => s,
            Err(e) => {
                self.log(
                    request,
                    voice_name,
                    chars,
                    &Outcome::Refused(e.clone()),
                    0,
                    t0,
                );
                self.send_error(&e).await?;
                return Ok(Answer::Error);
            }
        };
        let mut samples = 0;
        let result = self.stream_audio(synthesis, &mut samples).await;
        match &result {
            Ok(outcome) => self.log(request, voice_name, chars, outcome, samples, t0),
            Err(end) => {
                let outcome = Outcome::Gone(end.to_string());
                self.log(request, voice_name, chars, &outcome, samples, t0);
            }
        }
        match result? {
            Outcome::Completed | Outcome::Gone(_) => Ok(Answer::Audio),
            Outcome::Refused(e) => self.send_error(&e).await.map(|()| Answer::Error),
            Outcome::Failed(m) => self
                .send(&error_event(&m, "failed"))
                .await
                .map(|()| Answer::Error),
        }
    }

    /// Sends the audio of `synthesis` as it comes (`audio-start` with the first frame),
    /// reading ahead meanwhile so that a reset connection cancels the stream at once.
    /// Returns how it ended (failures are for the caller to answer); `samples_sent`
    /// counts the samples sent.
    async fn stream_audio(
        &mut self,
        mut synthesis: Synthesis,
        samples_sent: &mut usize,
    ) -> Result<Outcome, End> {
        let rate = self.state.engine.model().sample_rate();
        let audio_format = json!({ "rate": rate, "width": SAMPLE_WIDTH, "channels": 1 });
        let mut started = false;
        let ms = |samples: usize| (samples as u64).saturating_mul(1000) / rate.max(1) as u64;
        loop {
            let next = tokio::select! {
                next = synthesis.next() => next,
                read = self.reader.next(), if self.can_read_ahead() => {
                    self.read_ahead(read)?;
                    continue;
                }
            };
            match next {
                Some(SynthEvent::Frame(samples)) => {
                    if !started {
                        started = true;
                        let mut start = audio_format.clone();
                        start["timestamp"] = json!(0);
                        self.send(&Event::new("audio-start", start)).await?;
                    }
                    let mut pcm = Vec::with_capacity(samples.len() * SAMPLE_WIDTH);
                    pcm16_le(&samples, &mut pcm);
                    let mut chunk = audio_format.clone();
                    chunk["timestamp"] = json!(ms(*samples_sent));
                    self.send(&Event::new("audio-chunk", chunk).with_payload(pcm))
                        .await?;
                    *samples_sent += samples.len();
                }
                Some(SynthEvent::Failed(m)) => return Ok(Outcome::Failed(m)),
                None if !started => {
                    return Ok(Outcome::Failed("the generation ended without audio".into()))
                }
                None => {
                    // Also where a stream cancelled at shutdown ends: `Synthesis` does not
                    // tell the two apart (as for HTTP responses).
                    let stop = json!({ "timestamp": ms(*samples_sent) });
                    self.send(&Event::new("audio-stop", stop)).await?;
                    return Ok(Outcome::Completed);
                }
            }
        }
    }

    /// The access log line of one synthesis.
    fn log(
        &self,
        request: &str,
        voice: &str,
        chars: usize,
        outcome: &Outcome,
        samples: usize,
        t0: Instant,
    ) {
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        let audio_s = samples as f64 / self.state.engine.model().sample_rate() as f64;
        let what = match outcome {
            Outcome::Completed => "ok".to_string(),
            Outcome::Refused(e) => format!("refused ({}): {}", e.kind.as_str(), e.message),
            Outcome::Failed(m) => format!("failed: {m}"),
            Outcome::Gone(m) => format!("the client is gone, stream cancelled ({m})"),
        };
        let what = truncate(&what, 300);
        tracing::info!(
            target: "access",
            "wyoming {} {request} voice={voice:?} {chars} chars → {audio_s:.2} s audio in \
             {ms:.1} ms: {what}",
            self.peer
        );
    }
}

/// The voice name a request asks for, for the log.
fn requested_voice(data: &Map<String, Value>) -> String {
    match data.get("voice").and_then(|v| v.get("name")) {
        Some(Value::String(name)) => truncate(name, 80),
        Some(other) => truncate(&other.to_string(), 80),
        None => "-".into(),
    }
}

/// `s` cut to `max` characters (a client's text in the log).
fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

/// The `code` of the `error` event answering a failure of `kind`: `busy` (try again
/// later), `bad-request` (the request is at fault) or `failed` (the server is).
fn error_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Busy => "busy",
        k if k.is_client_error() => "bad-request",
        _ => "failed",
    }
}

/// An `error` event (`wyoming/error.py`: `text`, `code`).
fn error_event(text: &str, code: &str) -> Event {
    Event::new("error", json!({ "text": text, "code": code }))
}

fn attribution() -> Value {
    json!({ "name": "Kyutai", "url": "https://kyutai.org" })
}

/// The language codes of a built-in model's language (`english` → `en`); none for a
/// custom model.
fn language_codes(language: Option<&str>) -> Vec<&'static str> {
    const CODES: &[(&str, &str)] = &[
        ("english", "en"),
        ("french", "fr"),
        ("german", "de"),
        ("italian", "it"),
        ("portuguese", "pt"),
        ("spanish", "es"),
        ("dutch", "nl"),
    ];
    let Some(language) = language.map(str::to_ascii_lowercase) else {
        return Vec::new();
    };
    CODES
        .iter()
        .filter(|(name, _)| language.contains(name))
        .map(|&(_, code)| code)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_classes_map_to_error_codes() {
        assert_eq!(error_code(ErrorKind::Busy), "busy");
        assert_eq!(error_code(ErrorKind::Internal), "failed");
        for kind in [
            ErrorKind::BadRequest,
            ErrorKind::NotFound,
            ErrorKind::TooLarge,
            ErrorKind::Conflict,
            ErrorKind::Unauthorized,
        ] {
            assert_eq!(error_code(kind), "bad-request", "{kind:?}");
        }
    }

    #[test]
    fn language_names_map_to_codes() {
        assert_eq!(language_codes(Some("english")), vec!["en"]);
        assert_eq!(language_codes(Some("french_24l")), vec!["fr"]);
        assert!(language_codes(None).is_empty());
        assert!(language_codes(Some("klingon")).is_empty());
    }
}
