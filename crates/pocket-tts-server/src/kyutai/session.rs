//! One websocket session: words in, pieces spoken one after the other, audio blocks and
//! word times out, until the end of input, a failure, or the client leaving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use pocket_tts_core::{Latents, VoiceState};
use tokio::time::{interval_at, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use super::proto::{self, ClientMessage, Format, ServerMessage};
use super::timing::{Blocks, PieceFrames, BLOCK};
use super::words::Words;
use super::PROTOCOL;
use crate::error::{ErrorKind, RequestError};
use crate::sessions::SessionSlot;
use crate::state::{AppState, SynthEvent, Synthesis, TextRequest};

/// How often the server pings the client.
pub const PING_INTERVAL: Duration = Duration::from_secs(10);
/// A client that sends nothing (not even a pong) for this long is dropped.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(30);
/// Words that wait this long with no new text (and nothing being spoken) are spoken
/// even though their sentence is not complete: the text's writer has paused.
pub const IDLE_FLUSH: Duration = Duration::from_millis(1000);
/// Longest wait for one message to be written; past it the client is taken for gone.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// After our close frame, how long the client gets to answer with its own.
const LINGER: Duration = Duration::from_secs(1);
/// Longest voice given by a `Voice` message, in frames at 12.5 Hz (30 s, as voice
/// prompts are cut elsewhere); a longer one is cut.
const MAX_VOICE_FRAMES: usize = 375;

/// Close codes (RFC 6455, section 7.4.1).
mod code {
    pub const NORMAL: u16 = 1000;
    pub const GOING_AWAY: u16 = 1001;
    pub const POLICY: u16 = 1008;
    pub const INTERNAL: u16 = 1011;
    pub const TRY_LATER: u16 = 1013;
}

/// What a session is asked for.
pub struct Request {
    /// The audio format.
    pub format: Format,
    /// The voice's name (for the log) and state.
    pub voice: (String, Arc<VoiceState>),
    /// A number for the log.
    pub id: u64,
    /// The server's shutdown.
    pub stop: CancellationToken,
}

/// Why a session ended.
enum End {
    /// Every word was spoken; closed with 1000.
    Completed,
    /// The client closed the connection or it broke; generation was cancelled.
    Gone(String),
    /// The session was refused or failed: the client got an `Error` and a close.
    Failed(u16, String),
}

/// The piece being spoken.
struct Speaking {
    synthesis: Synthesis,
    words: Vec<String>,
    frames: PieceFrames,
}

struct Session {
    state: Arc<AppState>,
    format: Format,
    voice: Arc<VoiceState>,
    words: Words,
    /// Characters of text received.
    chars: usize,
    /// Words received.
    words_in: usize,
    /// The client sent `Eos`.
    eos: bool,
    /// The server is shutting down: no more text is taken.
    stopping: bool,
    /// No new text for [`IDLE_FLUSH`]: speak what waits.
    idle: bool,
    last_text: Instant,
    speaking: Option<Speaking>,
    /// Pieces started (the first is cut as short as a sentence allows).
    pieces: usize,
    blocks: Blocks,
    /// Samples generated so far: where the next frame starts on the timeline.
    timeline: u64,
    /// Words echoed.
    words_out: usize,
    /// The Ogg Opus encoder of the `OggOpus` formats (24 kHz, signalled in its header).
    opus: Option<pocket_tts_audio::Encoder>,
}

/// Serves a websocket until the session ends. `slot` holds the session's place among the
/// server's sessions until it returns (or says why it got none: the client is told so).
pub async fn run(
    mut socket: WebSocket,
    state: Arc<AppState>,
    request: Request,
    slot: Result<SessionSlot, String>,
) {
    let t0 = Instant::now();
    let Request {
        format,
        voice,
        id,
        stop,
    } = request;
    let mut session = Session {
        state: Arc::clone(&state),
        format,
        voice: voice.1,
        words: Words::default(),
        chars: 0,
        words_in: 0,
        eos: false,
        stopping: false,
        idle: false,
        last_text: Instant::now(),
        speaking: None,
        pieces: 0,
        blocks: Blocks::default(),
        timeline: 0,
        words_out: 0,
        opus: None,
    };
    let end = match &slot {
        Err(message) => End::Failed(code::TRY_LATER, message.clone()),
        Ok(_) => session.serve(&mut socket, &stop).await,
    };
    drop(session.speaking.take());
    match &end {
        End::Completed => close(&mut socket, code::NORMAL, "").await,
        End::Failed(code, message) => {
            if format.has_messages() {
                let error = ServerMessage::Error { message };
                let _ = send(&mut socket, Message::Binary(error.encode().into())).await;
            }
            close(&mut socket, *code, message).await;
        }
        End::Gone(_) => {}
    }
    drop(slot);
    let what = match &end {
        End::Completed => "ok".to_string(),
        End::Gone(m) => format!("the client is gone, generation cancelled ({m})"),
        End::Failed(code, m) => format!("closed with {code}: {}", proto::truncate(m, 300)),
    };
    let rate = state.engine.model().sample_rate() as f64;
    tracing::info!(
        target: "access",
        "{PROTOCOL} #{id} voice={:?} format={} {} words in, {} echoed → {:.2} s audio in {:.1} ms: \
         {what}",
        voice.0,
        format.name(),
        session.words_in,
        session.words_out,
        session.timeline as f64 / rate,
        t0.elapsed().as_secs_f64() * 1000.0
    );
}

/// Sends `message`, within [`WRITE_TIMEOUT`].
async fn send(socket: &mut WebSocket, message: Message) -> Result<(), End> {
    match timeout(WRITE_TIMEOUT, socket.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(End::Gone(format!("write failed: {e}"))),
        Err(_) => Err(End::Gone(format!(
            "the client read nothing for {} s",
            WRITE_TIMEOUT.as_secs()
        ))),
    }
}

/// Closes with `code` and `reason` (cut to the 123 bytes a close frame holds), then
/// waits up to [`LINGER`] for the client's close.
async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    let mut cut = reason.len().min(120);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    let frame = CloseFrame {
        code,
        reason: reason[..cut].into(),
    };
    if send(socket, Message::Close(Some(frame))).await.is_err() {
        return;
    }
    let _ = timeout(LINGER, async {
        while let Some(Ok(m)) = socket.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

impl Session {
    async fn serve(&mut self, socket: &mut WebSocket, stop: &CancellationToken) -> End {
        match self.serve_inner(socket, stop).await {
            Ok(()) => End::Completed,
            Err(end) => end,
        }
    }

    async fn serve_inner(
        &mut self,
        socket: &mut WebSocket,
        stop: &CancellationToken,
    ) -> Result<(), End> {
        if matches!(self.format, Format::OggOpus | Format::OggOpusMessagePack) {
            let rate = self.state.engine.model().sample_rate() as u32;
            let encoder = pocket_tts_audio::Encoder::new(pocket_tts_audio::Codec::Opus, rate)
                .map_err(|e| End::Failed(code::INTERNAL, format!("Ogg Opus encoder: {e}")))?;
            self.opus = Some(encoder);
        }
        if self.format.has_messages() {
            send(
                socket,
                Message::Binary(ServerMessage::Ready.encode().into()),
            )
            .await?;
        }
        let started = Instant::now();
        let deadline = started + self.state.limits.request_timeout;
        let mut ping = interval_at((started + PING_INTERVAL).into(), PING_INTERVAL);
        let mut last_seen = Instant::now();
        loop {
            if self.speaking.is_none() {
                self.start_next()?;
                let done = self.eos || self.stopping;
                if self.speaking.is_none() && done && self.words.is_empty() {
                    if let Some(last) = self.blocks.finish() {
                        self.send_audio(socket, last).await?;
                    }
                    self.finish_opus(socket).await?;
                    if !self.eos {
                        return Err(End::Failed(
                            code::GOING_AWAY,
                            "the server is shutting down: the text sent so far was spoken, \
                             no more is taken"
                                .into(),
                        ));
                    }
                    return Ok(());
                }
            }
            let flush_at = (self.speaking.is_none() && !self.words.is_empty() && !self.idle)
                .then(|| self.last_text + IDLE_FLUSH);
            tokio::select! {
                message = socket.recv() => {
                    last_seen = Instant::now();
                    match message {
                        None => return Err(End::Gone("the connection closed".into())),
                        Some(Err(e)) => return Err(End::Gone(format!("read failed: {e}"))),
                        Some(Ok(m)) => self.receive(m).await?,
                    }
                }
                event = next_event(&mut self.speaking) => self.on_event(socket, event).await?,
                _ = ping.tick() => send(socket, Message::Ping(Default::default())).await?,
                () = stop.cancelled(), if !self.stopping => self.stopping = true,
                () = sleep_until((last_seen + SILENCE_LIMIT).into()) => {
                    return Err(End::Failed(
                        code::GOING_AWAY,
                        format!("the client sent nothing for {} s", SILENCE_LIMIT.as_secs()),
                    ));
                }
                () = sleep_until(flush_at.unwrap_or(deadline).into()), if flush_at.is_some() => {
                    self.idle = true;
                }
                () = sleep_until(deadline.into()) => {
                    let names = &self.state.names;
                    return Err(End::Failed(
                        code::INTERNAL,
                        format!(
                            "the session ran past the server's time limit of {} s ({})",
                            self.state.limits.request_timeout.as_secs(),
                            names.request_timeout
                        ),
                    ));
                }
            }
        }
    }

    /// Handles one message from the client.
    async fn receive(&mut self, message: Message) -> Result<(), End> {
        let message = match message {
            Message::Text(text) => ClientMessage::Text(text.to_string()),
            Message::Binary(bytes) => {
                proto::decode(&bytes).map_err(|e| End::Failed(code::POLICY, e))?
            }
            Message::Close(_) => return Err(End::Gone("the client closed the websocket".into())),
            Message::Ping(_) | Message::Pong(_) => return Ok(()),
        };
        match message {
            ClientMessage::Text(text) => self.text(&text),
            ClientMessage::Voice { embeddings, shape } => self.set_voice(embeddings, shape).await,
            ClientMessage::Eos => {
                self.eos = true;
                Ok(())
            }
        }
    }

    fn text(&mut self, text: &str) -> Result<(), End> {
        if self.eos || self.stopping {
            tracing::debug!("{PROTOCOL}: Text after Eos or during the shutdown: ignored");
            return Ok(());
        }
        self.chars += text.chars().count();
        let limit = self.state.limits.max_text_chars;
        if self.chars > limit {
            return Err(End::Failed(
                code::POLICY,
                format!(
                    "the text of this session has {} characters, more than this server's limit \
                     of {limit} ({}): open a new connection for more",
                    self.chars, self.state.names.max_text_chars
                ),
            ));
        }
        let n = self.words.push(text);
        if n > 0 {
            self.words_in += n;
            self.last_text = Instant::now();
            self.idle = false;
        }
        Ok(())
    }

    /// A `Voice` message: Mimi latents of this model, `[frames, dim]` (leading sizes of 1
    /// allowed), prompted into the FlowLM as a voice prompt would be.
    async fn set_voice(&mut self, embeddings: Vec<f32>, shape: Vec<usize>) -> Result<(), End> {
        let refuse = |m: String| Err(End::Failed(code::POLICY, m));
        if self.words_in > 0 {
            return refuse("Voice: send it before the first Text".into());
        }
        let model = Arc::clone(self.state.engine.model());
        let dim = model.config().latent_dim();
        let sizes: Vec<usize> = shape.iter().copied().filter(|&s| s != 1).collect();
        let frames = match sizes.as_slice() {
            [frames, d] if *d == dim => *frames,
            [] if dim == 1 => 1,
            _ => {
                return refuse(format!(
                    "Voice: shape {shape:?} is not this model's voice latents [frames, {dim}] \
                     (Mimi latents of a voice prompt at 12.5 Hz; moshi's speaker embeddings \
                     do not apply to this model): use the voice query parameter instead"
                ))
            }
        };
        if embeddings.len() != frames * dim || frames == 0 {
            return refuse(format!(
                "Voice: {} values do not fill shape {shape:?}",
                embeddings.len()
            ));
        }
        if embeddings.iter().any(|v| !v.is_finite()) {
            return refuse("Voice: the embeddings hold NaN or infinite values".into());
        }
        let mut values = embeddings;
        if frames > MAX_VOICE_FRAMES {
            tracing::warn!(
                "{PROTOCOL}: a Voice of {frames} frames is cut to its first {MAX_VOICE_FRAMES}"
            );
            values.truncate(MAX_VOICE_FRAMES * dim);
        }
        let latents = Latents { values, dim };
        let voice = tokio::task::spawn_blocking(move || model.voice_state_from_latents(&latents))
            .await
            .map_err(|e| End::Failed(code::INTERNAL, format!("Voice: the server failed ({e})")))?
            .map_err(|e| {
                let e = RequestError::from_core("Voice", &e);
                End::Failed(close_code(e.kind), e.message)
            })?;
        self.voice = Arc::new(voice);
        Ok(())
    }

    /// Starts speaking the next piece, if one is ready.
    fn start_next(&mut self) -> Result<(), End> {
        let flush = self.eos || self.idle || self.stopping;
        let Some(words) = self.words.take(self.pieces == 0, flush) else {
            return Ok(());
        };
        let text = words.join(" ");
        let synthesis = self
            .state
            .synthesize(
                Arc::clone(&self.voice),
                &text,
                PROTOCOL,
                TextRequest::default(),
            )
            .map_err(|e| End::Failed(close_code(e.kind), e.message))?;
        self.pieces += 1;
        self.speaking = Some(Speaking {
            synthesis,
            words,
            frames: PieceFrames::default(),
        });
        Ok(())
    }

    async fn on_event(
        &mut self,
        socket: &mut WebSocket,
        event: Option<SynthEvent>,
    ) -> Result<(), End> {
        let Some(speaking) = self.speaking.as_mut() else {
            return Ok(());
        };
        match event {
            Some(SynthEvent::Frame(samples)) => {
                if let Some(info) = speaking.synthesis.last_frame {
                    let threshold = self.state.params.eos_threshold;
                    speaking
                        .frames
                        .record(info, self.timeline, samples.len(), threshold);
                }
                self.timeline += samples.len() as u64;
                for block in self.blocks.push(samples) {
                    self.send_audio(socket, block).await?;
                }
                Ok(())
            }
            Some(SynthEvent::Failed(m)) => Err(End::Failed(code::INTERNAL, m)),
            None => {
                let Speaking { words, frames, .. } = self.speaking.take().expect("speaking");
                let rate = self.state.engine.model().sample_rate() as f64;
                for (word, (start, stop)) in words.iter().zip(frames.word_spans(&words)) {
                    if self.format.has_messages() {
                        let text = ServerMessage::Text {
                            text: word,
                            start_s: start / rate,
                            stop_s: stop / rate,
                        };
                        send(socket, Message::Binary(text.encode().into())).await?;
                    }
                    self.words_out += 1;
                }
                Ok(())
            }
        }
    }

    async fn send_audio(&mut self, socket: &mut WebSocket, block: Vec<f32>) -> Result<(), End> {
        debug_assert_eq!(block.len(), BLOCK);
        let bytes = match self.format {
            Format::Pcm => block.iter().flat_map(|s| s.to_le_bytes()).collect(),
            Format::PcmMessagePack => ServerMessage::Audio { pcm: &block }.encode(),
            Format::OggOpus | Format::OggOpusMessagePack => {
                let Some(encoder) = self.opus.as_mut() else {
                    return Err(End::Failed(code::INTERNAL, "no Opus encoder".into()));
                };
                let pages = encoder
                    .encode(&block)
                    .map_err(|e| End::Failed(code::INTERNAL, format!("Ogg Opus encoder: {e}")))?;
                return send_ogg(self.format, socket, &pages).await;
            }
        };
        send(socket, Message::Binary(bytes.into())).await
    }

    /// Flushes the Opus encoder (the last pages, end of stream) for the `OggOpus` formats.
    async fn finish_opus(&mut self, socket: &mut WebSocket) -> Result<(), End> {
        let Some(encoder) = self.opus.take() else {
            return Ok(());
        };
        let pages = encoder
            .finish()
            .map_err(|e| End::Failed(code::INTERNAL, format!("Ogg Opus encoder: {e}")))?;
        send_ogg(self.format, socket, &pages).await
    }
}

/// Sends Ogg pages: raw with `OggOpus`, in an `OggOpus` message with
/// `OggOpusMessagePack`; nothing when the encoder has no whole page yet.
async fn send_ogg(format: Format, socket: &mut WebSocket, pages: &[u8]) -> Result<(), End> {
    if pages.is_empty() {
        return Ok(());
    }
    let bytes = match format {
        Format::OggOpusMessagePack => ServerMessage::OggOpus { data: pages }.encode(),
        _ => pages.to_vec(),
    };
    send(socket, Message::Binary(bytes.into())).await
}

/// The next event of the piece being spoken; never resolves when none is.
async fn next_event(speaking: &mut Option<Speaking>) -> Option<SynthEvent> {
    match speaking {
        Some(s) => s.synthesis.next().await,
        None => std::future::pending().await,
    }
}

/// The close code of a failure class.
fn close_code(kind: ErrorKind) -> u16 {
    match kind {
        ErrorKind::Busy => code::TRY_LATER,
        ErrorKind::Internal => code::INTERNAL,
        _ => code::POLICY,
    }
}
