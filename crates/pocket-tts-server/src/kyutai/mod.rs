//! Kyutai's streaming TTS websocket, `GET /api/tts_streaming`, as moshi-server serves it
//! to Kyutai's voice agent (unmute) and to `scripts/tts_rust_server.py` of
//! delayed-streams-modeling: a language model's answer streams in word by word, speech
//! streams out. Reference, for understanding only: kyutai-labs/moshi
//! `rust/moshi-server/src/tts.rs` and `py_module.rs`; kyutai-labs/unmute
//! `unmute/tts/text_to_speech.py` (the strictest client).
//!
//! - **Connection**: auth by the `kyutai-api-key` header or the `auth_id` query
//!   parameter (or `Authorization: Bearer`), checked against the server's API key (open
//!   when it has none; 401 before the upgrade otherwise). Query `voice` (a voice name of
//!   the server; one it does not know, such as a moshi-server voice path, falls back to
//!   the default voice with a warning in the log, as moshi-server does) and `format`
//!   (`Pcm`, `PcmMessagePack`, `OggOpus`, `OggOpusMessagePack`; absent: `OggOpus`, as
//!   theirs; another value: 400 before the upgrade). Other keys are ignored (unmute sends
//!   `cfg_alpha`).
//! - **Client messages** (MessagePack maps tagged by `type`, [`proto`]): `Text {text}`
//!   (whole words, split on whitespace), `Voice {embeddings, shape}` (Mimi latents of
//!   this model, `[frames, 32]`, before the first `Text`; moshi's speaker embeddings do
//!   not apply to this model and are refused), `Eos`. A websocket text frame counts as
//!   `Text`, the binary frame `\0` as `Eos`.
//! - **Server messages**: `Ready` once the session holds a place, `Audio {pcm}` with
//!   exactly 1920 samples (80 ms at 24 kHz; a pause from markup is regrouped into such
//!   blocks, the last block padded with silence), `Text {text, start_s, stop_s}` for each
//!   word once its piece is spoken (after the piece's last `Audio`), `Error {message}`
//!   before a close for any failure. Nothing else. With `Pcm` only the raw little-endian
//!   `f32` blocks are sent; a failure's message is then the close frame's reason. The
//!   Ogg Opus formats encode the same blocks as one Ogg Opus stream (libopus at 24 kHz,
//!   signalled in its header, [`pocket_tts_audio`]): `OggOpus` sends only the Ogg pages
//!   as binary frames, `OggOpusMessagePack` sends them in `OggOpus {data}` messages in
//!   place of `Audio` (the first carry the stream's headers; `data` an array of bytes,
//!   as moshi-server's), the control messages as with `PcmMessagePack`.
//! - **Pieces** ([`words`]): each sentence is spoken as soon as its last word arrives
//!   (at least 3 words, so that "Dr." ends nothing); the first piece is one sentence,
//!   later ones every complete sentence waiting when the previous piece ends (at most
//!   30 words); 30 words without a sentence end are spoken up to their last clause end;
//!   words left waiting 1 s with no new text (the writer paused) are spoken; `Eos`
//!   speaks the rest. Each piece is one stream of the engine, one after the other.
//! - **Word times** ([`timing`]): the model gives no alignment, so a piece's words share
//!   its speech frames (pauses and the frames generated after EOS left out) in
//!   proportion to their lengths in characters. Times are seconds on the output
//!   timeline (samples sent / 24000), strictly increasing.
//! - **End**: after `Eos` and the last piece, the last `Text`s and `Audio`, then a close
//!   with code 1000. A client that closes (or whose connection breaks) cancels its
//!   generation at once: its engine slot is free at the next pass. On the server's
//!   shutdown a session speaks the text it has (later text is ignored) within the grace
//!   period, then closes: 1000 if the client had sent `Eos`, else `Error` and 1001.
//! - **Limits**: a session takes a place among `max_streams` (the engine's stream count)
//!   from `Ready` to its close; with every place taken, or the engine full, the client
//!   gets `Error` ("no free channels…") and close 1013 right after the upgrade, as
//!   moshi-server answers. The session's text may hold `max_text_chars` characters in all
//!   and last `request_timeout` (`Error` and close 1008 / 1011 past them); messages above
//!   `max_body_bytes` close the connection (1009). The server pings every 10 s; a client
//!   silent (not even a pong) for 30 s is dropped (close 1001). Metrics: each piece is
//!   a stream of protocol `kyutai` (`streams_total`, time to first audio, real-time
//!   factor); the upgrade is a request of route `/api/tts_streaming` (status 101).

mod proto;
mod session;
mod timing;
mod words;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};

use crate::error::{ErrorKind, RequestError};
use crate::sessions::SessionSlot;
use crate::state::{constant_time_eq, AppState};

use proto::Format;

/// The route's path.
pub const PATH: &str = "/api/tts_streaming";
/// The protocol's label in the metrics and the log.
pub const PROTOCOL: &str = "kyutai";
/// The header carrying the API key (moshi-server's).
const KEY_HEADER: &str = "kyutai-api-key";

/// Takes a place for a new session if one is free and the engine can take a stream;
/// else the refusal's message.
fn admit(state: &AppState) -> Result<SessionSlot, String> {
    let max = state.engine.options().max_streams;
    let Some(slot) = state.kyutai.try_take(max) else {
        return Err(format!(
            "no free channels: {max} streaming sessions are open (this server's \
             max_streams): retry later"
        ));
    };
    let (active, queued) = state.engine.load();
    let options = state.engine.options();
    if queued >= options.max_streams.saturating_sub(active) + options.max_queued {
        drop(slot);
        return Err(format!(
            "no free channels: {active} streams are generating and {queued} requests wait: \
             retry later"
        ));
    }
    Ok(slot)
}

/// `GET /api/tts_streaming`: checks the key and the query, then upgrades to the session.
///
/// # Errors
/// Before the upgrade (the router answers them in the reference server's shape):
/// unauthorized without the API key, a bad request for a query that cannot be read, a
/// request that is not a websocket upgrade, or an unknown `format`.
pub async fn handler(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, RequestError> {
    let Query(query) = query.map_err(|e| {
        RequestError::new(
            ErrorKind::BadRequest,
            format!("the query string cannot be read: {e}"),
        )
    })?;
    authorize(&state, &headers, &query)?;
    let upgrade = upgrade.map_err(|e| {
        RequestError::new(
            ErrorKind::BadRequest,
            format!(
                "{PATH} is a websocket: connect with a websocket client (ws://HOST:PORT{PATH}) \
                 ({e})"
            ),
        )
    })?;
    let format = match query.get("format").map(|f| Format::parse(f)) {
        None => Format::OggOpus,
        Some(Ok(f)) => f,
        Some(Err(m)) => return Err(RequestError::bad_request("format", m)),
    };
    let voice = resolve_voice(&state, query.get("voice")).await;
    let id = state.kyutai.next_id();
    let max_message = state.limits.max_body_bytes;
    Ok(upgrade
        .max_message_size(max_message)
        .max_frame_size(max_message)
        .on_upgrade(move |socket| async move {
            let slot = admit(&state);
            let stop = state.kyutai.stop();
            let request = session::Request {
                format,
                voice,
                id,
                stop,
            };
            session::run(socket, state, request, slot).await;
        })
        .into_response())
}

/// The server's API key, if it has one, from the `kyutai-api-key` header, the `auth_id`
/// query parameter or `Authorization: Bearer`.
fn authorize(
    state: &AppState,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
) -> Result<(), RequestError> {
    let Some(key) = &state.api_key else {
        return Ok(());
    };
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let given = [
        header(KEY_HEADER),
        query.get("auth_id").map(String::as_str),
        header("authorization").and_then(|v| v.strip_prefix("Bearer ")),
    ];
    let given: Vec<&str> = given.into_iter().flatten().collect();
    if given
        .iter()
        .any(|g| constant_time_eq(g.as_bytes(), key.as_bytes()))
    {
        return Ok(());
    }
    let message = if given.is_empty() {
        format!("this server needs an API key: send the {KEY_HEADER} header or the auth_id query parameter")
    } else {
        format!(
            "the API key is wrong: send the server's {} in the {KEY_HEADER} header or the \
             auth_id query parameter",
            state.names.api_key
        )
    };
    Err(RequestError::new(ErrorKind::Unauthorized, message))
}

/// The voice a session asks for; one the server cannot give falls back to the default
/// voice (a client of moshi-server names voices by its paths), with a warning.
async fn resolve_voice(
    state: &Arc<AppState>,
    name: Option<&String>,
) -> (String, Arc<pocket_tts_core::VoiceState>) {
    let default = || {
        (
            state.voices.default_name().to_string(),
            state.voices.default_voice(),
        )
    };
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return default();
    };
    match state.voices.resolve(name, "voice").await {
        Ok(voice) => (name.clone(), voice),
        Err(e) => {
            tracing::warn!(
                "{PROTOCOL}: {}; speaking with the default voice {:?}",
                e.message,
                state.voices.default_name()
            );
            default()
        }
    }
}
