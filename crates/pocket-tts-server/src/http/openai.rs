//! The OpenAI-compatible routes: `POST /v1/audio/speech` (plain or streamed, `audio` or
//! `sse`), `GET /v1/models`, `GET` and `POST /v1/audio/voices`. Errors in OpenAI's shape.
//! Reference: OpenAI's API reference, "Create speech" (`/v1/audio/speech`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Multipart, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::error::{kind_of, multipart_error, OpenAiError};
use super::reference::{check_speed, stream_response, streamed_body};
use crate::encode::AudioFormat;
use crate::error::{ErrorKind, RequestError};
use crate::state::{AppState, TextRequest};
use crate::voices::valid_name;

/// The model id `/v1/models` lists (any `model` value is accepted).
pub const MODEL_ID: &str = "pocket-tts";
/// Whether a request with `instructions` was logged (once per process: the field is
/// accepted and ignored, the model has no way to follow it).
static INSTRUCTIONS_LOGGED: std::sync::Once = std::sync::Once::new();

/// `GET /v1/models`.
pub async fn models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{ "id": MODEL_ID, "object": "model", "created": 0, "owned_by": "kyutai" }],
    }))
}

/// `GET /v1/audio/voices`: `{"voices": [{"name", "source"}], "default": name}`.
pub async fn list_voices(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({
        "voices": state.voices.list(),
        "default": state.voices.default_name(),
    }))
}

/// A checked `/v1/audio/speech` request.
struct SpeechRequest {
    input: String,
    voice: Option<String>,
    format: AudioFormat,
    speed: f64,
    sse: bool,
    /// `normalize`, `markup` and `seed` (ours, not OpenAI's).
    text: TextRequest,
}

fn string_field(
    obj: &Map<String, Value>,
    name: &'static str,
) -> Result<Option<String>, RequestError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(RequestError::bad_request(
            name,
            format!("{name} must be a string, not {}", type_name(other)),
        )),
    }
}

fn bool_field(obj: &Map<String, Value>, name: &'static str) -> Result<Option<bool>, RequestError> {
    match obj.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(RequestError::bad_request(
            name,
            format!("{name} must be true or false, not {}", type_name(other)),
        )),
    }
}

/// `seed` (ours): an integer from 0 to 2^64 - 1.
fn seed_field(obj: &Map<String, Value>) -> Result<Option<u64>, RequestError> {
    match obj.get("seed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(other) => Err(RequestError::bad_request(
            "seed",
            format!(
                "seed must be an integer from 0 to 18446744073709551615, not {other}: the seed \
                 of the sampling noise (torch.manual_seed's)"
            ),
        )),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_speech(state: &AppState, body: &[u8]) -> Result<SpeechRequest, RequestError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        RequestError::bad_request(
            "body",
            format!("the body is not valid JSON ({e}): send {{\"model\", \"input\", \"voice\"}}"),
        )
    })?;
    let Value::Object(obj) = value else {
        return Err(RequestError::bad_request(
            "body",
            format!("the body must be a JSON object, not {}", type_name(&value)),
        ));
    };
    let _model = string_field(&obj, "model")?;
    let input = string_field(&obj, "input")?
        .ok_or_else(|| RequestError::bad_request("input", "input is missing: the text to speak"))?;
    state.check_text("input", &input)?;
    // A voice is a name, or (newer clients, custom voices) an object `{"id": name}`.
    let voice = match obj.get("voice") {
        Some(Value::Object(v)) => match v.get("id") {
            Some(Value::String(id)) => Some(id.clone()),
            _ => {
                return Err(RequestError::bad_request(
                    "voice",
                    "voice as an object needs a string \"id\" (a voice name)",
                ))
            }
        },
        _ => string_field(&obj, "voice")?,
    };
    // OpenAI's default is mp3 (WAV in a build without the MP3 encoder).
    let mp3 = pocket_tts_audio::Codec::Mp3;
    let format = match string_field(&obj, "response_format")?.as_deref() {
        None if mp3.is_built() => AudioFormat::Compressed(mp3),
        None => AudioFormat::Wav,
        Some(f) => AudioFormat::from_name(f).ok_or_else(|| {
            RequestError::bad_request(
                "response_format",
                format!(
                    "response_format {f:?} is unknown: use one of {} (pcm: 24 kHz, 16-bit, mono)",
                    AudioFormat::NAMES.join(", ")
                ),
            )
        })?,
    };
    if let AudioFormat::Compressed(codec) = format {
        if !codec.is_built() {
            return Err(RequestError::bad_request(
                "response_format",
                format!(
                    "response_format {codec:?}: this server was built without the {codec} \
                     encoder; use wav, pcm, opus or flac",
                    codec = codec.name()
                ),
            ));
        }
    }
    let speed = match obj.get("speed") {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => check_speed(n.as_f64().unwrap_or(f64::NAN))?,
        Some(other) => {
            return Err(RequestError::bad_request(
                "speed",
                format!(
                    "speed must be a number from 0.25 to 4.0, not {}",
                    type_name(other)
                ),
            ))
        }
    };
    if let Some(instructions) = string_field(&obj, "instructions")? {
        if !instructions.trim().is_empty() {
            INSTRUCTIONS_LOGGED.call_once(|| {
                tracing::info!(
                    "a request gave `instructions`: accepted and ignored (this model has no \
                     way to follow them; logged once)"
                )
            });
        }
    }
    let sse = match string_field(&obj, "stream_format")?.as_deref() {
        None | Some("audio") => false,
        Some("sse") => true,
        Some(f) => {
            return Err(RequestError::bad_request(
                "stream_format",
                format!("stream_format {f:?} is unknown: use \"audio\" or \"sse\""),
            ))
        }
    };
    let text = TextRequest {
        normalize: bool_field(&obj, "normalize")?,
        markup: bool_field(&obj, "markup")?,
        seed: seed_field(&obj)?,
    };
    Ok(SpeechRequest {
        input,
        voice,
        format,
        speed,
        sse,
        text,
    })
}

/// `POST /v1/audio/speech`.
pub async fn speech(
    State(state): State<Arc<AppState>>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, OpenAiError> {
    let body = body.map_err(|e| match kind_of(e.status()) {
        ErrorKind::TooLarge => RequestError::new(
            ErrorKind::TooLarge,
            format!(
                "the body is larger than the server's limit ({})",
                state.names.max_body_bytes
            ),
        ),
        kind => RequestError::new(kind, format!("the body cannot be read: {}", e.body_text())),
    })?;
    let req = parse_speech(&state, &body)?;
    let voice = match &req.voice {
        Some(name) => state.voices.resolve(name, "voice").await?,
        None => state.voices.default_voice(),
    };
    let synthesis = state.synthesize(voice, &req.input, "openai", req.text)?;
    let rate = state.engine.model().sample_rate();
    if !req.sse {
        return Ok(stream_response(synthesis, req.format, rate, req.speed).await?);
    }
    let input_tokens = req.input.split_whitespace().count();
    let end = move |frames: usize, tail: Vec<u8>| {
        let mut out = if tail.is_empty() {
            Vec::new()
        } else {
            delta(&tail)
        };
        out.extend_from_slice(&sse_event(&json!({
            "type": "speech.audio.done",
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": frames,
                "total_tokens": input_tokens + frames,
            },
        })));
        out
    };
    let body = streamed_body(synthesis, req.format, rate, req.speed, delta, end).await?;
    let mut response = body.into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

fn delta(audio: &[u8]) -> Vec<u8> {
    sse_event(&json!({
        "type": "speech.audio.delta",
        "audio": base64::engine::general_purpose::STANDARD.encode(audio),
    }))
}

fn sse_event(v: &Value) -> Vec<u8> {
    format!("data: {v}\n\n").into_bytes()
}

/// `POST /v1/audio/voices` (multipart: `file`, the audio; `name`, optional): clones the
/// voice and keeps it under `name` (or `voice-N`), usable at once. Answers 201 with
/// `{"name", "source": "upload"}`.
pub async fn upload_voice(
    State(state): State<Arc<AppState>>,
    form: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, OpenAiError> {
    let mut form = form.map_err(|e| {
        RequestError::bad_request(
            "file",
            format!("POST /v1/audio/voices takes a multipart form (fields file, name): {e}"),
        )
    })?;
    let limit = state.limits.max_body_bytes;
    let limit_name = state.names.max_body_bytes.as_str();
    let (mut name, mut file) = (None, None);
    while let Some(field) = form
        .next_field()
        .await
        .map_err(|e| multipart_error(&e, limit, limit_name))?
    {
        match field.name().unwrap_or_default() {
            "name" => {
                name = Some(
                    field
                        .text()
                        .await
                        .map_err(|e| multipart_error(&e, limit, limit_name))?,
                )
            }
            "file" => {
                let file_name = field.file_name().unwrap_or_default().to_string();
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|e| multipart_error(&e, limit, limit_name))?;
                file = Some((file_name, bytes.to_vec()));
            }
            _ => {}
        }
    }
    let Some((file_name, bytes)) = file else {
        return Err(
            RequestError::bad_request("file", "file is missing: attach the voice's audio").into(),
        );
    };
    if bytes.is_empty() {
        return Err(
            RequestError::bad_request("file", "file is empty: attach the voice's audio").into(),
        );
    }
    let name = match name.filter(|n| !n.is_empty()) {
        Some(n) => n,
        None => {
            let stem = std::path::Path::new(&file_name)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            if valid_name(&stem) {
                stem
            } else {
                "uploaded-voice".to_string()
            }
        }
    };
    if !valid_name(&name) {
        return Err(RequestError::bad_request(
            "name",
            format!("name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.' (e.g. my-voice)"),
        )
        .into());
    }
    let voice = state.voices.from_upload(bytes, file_name, "file").await?;
    state.voices.add_upload(&name, voice)?;
    tracing::info!("voice {name:?} uploaded");
    let mut response = Json(json!({ "name": name, "source": "upload" })).into_response();
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}
