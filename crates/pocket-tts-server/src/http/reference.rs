//! The reference server's routes (`main.py`: `GET /`, `GET /health`, `POST /tts`), so that
//! a client written for `pocket-tts serve` works unchanged.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::error::{kind_of, multipart_error, RefError};
use crate::encode::{AudioFormat, AudioOut};
use crate::error::{ErrorKind, RequestError};
use crate::state::{AppState, SynthEvent, Synthesis, TextRequest};

/// The web page (text box, voice picker, upload, streaming playback, download).
const INDEX_HTML: &str = include_str!("index.html");

/// `GET /`: the web page, with the language's default text (as the reference replaces
/// `DEFAULT_TEXT_PROMPT`) and the text options' checkboxes set to the server's
/// `normalize` and `markup` ([`crate::ServerOptions::params`]); the normalize box is
/// disabled when the model has no text language.
pub async fn index(State(state): State<Arc<AppState>>) -> Html<String> {
    Html(render_index(&state))
}

fn render_index(state: &AppState) -> String {
    let params = &state.params;
    let checked = |on: bool| if on { "checked" } else { "" };
    let (normalize_attrs, normalize_hint) = match params.text_language {
        Some(language) => (
            checked(params.normalize).to_string(),
            format!(
                "Digits and symbols become {} words. Off, the model reads the text as \
                 written, as the reference does.",
                capitalized(&language.to_string())
            ),
        ),
        None => (
            "disabled".to_string(),
            format!(
                "Unavailable: this server's model has no text language (start it with {}).",
                state.names.text_language
            ),
        ),
    };
    // The default text last: it may contain anything, and is not searched again.
    INDEX_HTML
        .replace("NORMALIZE_ATTRS", &normalize_attrs)
        .replace("NORMALIZE_HINT", &html_escape(&normalize_hint))
        .replace("MARKUP_ATTRS", checked(params.markup))
        .replace("DEFAULT_TEXT_PROMPT", &html_escape(&state.default_text))
}

/// `GET /health`.
pub async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "healthy" }))
}

/// The `/tts` form fields.
#[derive(Default)]
struct TtsForm {
    text: Option<String>,
    voice_url: Option<String>,
    voice_wav: Option<(String, Vec<u8>)>,
    /// `normalize`, `markup` and `seed` (ours, not the reference's).
    options: TextRequest,
    /// `speed` (ours, as OpenAI's): 0.25 to 4.0.
    speed: Option<f64>,
}

impl TtsForm {
    /// Takes one text field (`voice_wav`, a file, is read apart); unknown fields are
    /// ignored, as FastAPI does.
    fn set(&mut self, name: &str, value: String) -> Result<(), RequestError> {
        match name {
            "normalize" => self.options.normalize = form_switch("normalize", &value)?,
            "markup" => self.options.markup = form_switch("markup", &value)?,
            "speed" => self.speed = parse_speed(&value)?,
            "seed" => self.options.seed = form_seed(&value)?,
            "text" => self.text = Some(value),
            "voice_url" if !value.is_empty() => self.voice_url = Some(value),
            _ => {}
        }
        Ok(())
    }
}

/// A `speed` form field: a number from 0.25 to 4.0; empty leaves 1.
fn parse_speed(value: &str) -> Result<Option<f64>, RequestError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    let speed: f64 = value.parse().map_err(|_| {
        RequestError::bad_request(
            "speed",
            format!(
                "speed {value:?} is not a number: give a speed from 0.25 to 4.0 (1.0 is normal)"
            ),
        )
    })?;
    check_speed(speed)?;
    Ok(Some(speed))
}

/// Checks a requested `speed`: 0.25 to 4.0.
///
/// # Errors
/// A bad request naming `speed` and the range.
pub fn check_speed(speed: f64) -> Result<f64, RequestError> {
    pocket_tts_audio::check_speed(speed)
        .map_err(|e| RequestError::bad_request("speed", e.to_string()))?;
    Ok(speed)
}

/// A form field that is a switch: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` (what a
/// checked HTML checkbox sends); empty leaves the server's default.
fn form_switch(name: &'static str, value: &str) -> Result<Option<bool>, RequestError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "true" | "1" | "yes" | "on" => Ok(Some(true)),
        "false" | "0" | "no" | "off" => Ok(Some(false)),
        _ => Err(RequestError::bad_request(
            name,
            format!("{name} {value:?}: give true or false"),
        )),
    }
}

/// The `seed` field (ours): an integer from 0 to 2^64 - 1; empty leaves the server's.
fn form_seed(value: &str) -> Result<Option<u64>, RequestError> {
    let value = value.trim();
    if value.is_empty() {
        return Ok(None);
    }
    value.parse().map(Some).map_err(|_| {
        RequestError::bad_request(
            "seed",
            format!(
                "seed {value:?}: give an integer from 0 to 18446744073709551615 (the seed of \
                 the sampling noise, torch.manual_seed's)"
            ),
        )
    })
}

async fn read_form(
    mut form: Multipart,
    limit: usize,
    limit_name: &str,
) -> Result<TtsForm, RequestError> {
    let mut out = TtsForm::default();
    while let Some(field) = form
        .next_field()
        .await
        .map_err(|e| multipart_error(&e, limit, limit_name))?
    {
        let name = field.name().unwrap_or_default().to_string();
        if name == "voice_wav" {
            let file_name = field.file_name().unwrap_or_default().to_string();
            let bytes = field
                .bytes()
                .await
                .map_err(|e| multipart_error(&e, limit, limit_name))?;
            // A browser sends an empty part for a file input left empty.
            if !(bytes.is_empty() && file_name.is_empty()) {
                out.voice_wav = Some((file_name, bytes.to_vec()));
            }
        } else if matches!(
            name.as_str(),
            "text" | "voice_url" | "normalize" | "markup" | "speed" | "seed"
        ) {
            let value = field
                .text()
                .await
                .map_err(|e| multipart_error(&e, limit, limit_name))?;
            out.set(&name, value)?;
        }
    }
    Ok(out)
}

/// Reads a url-encoded form (what `requests.post(url, data={...})` and an HTML form
/// without a file send): the same fields but `voice_wav`.
fn read_urlencoded(body: &[u8]) -> Result<TtsForm, RequestError> {
    let mut out = TtsForm::default();
    for (name, value) in form_urlencoded::parse(body) {
        if name == "voice_wav" {
            return Err(RequestError::bad_request(
                "voice_wav",
                "voice_wav is a file: send it in a multipart form (multipart/form-data)",
            ));
        }
        out.set(&name, value.into_owned())?;
    }
    Ok(out)
}

/// The `/tts` form, multipart or url-encoded, by the request's `Content-Type`.
async fn read_tts_form(state: &Arc<AppState>, request: Request) -> Result<TtsForm, RequestError> {
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let limit = state.limits.max_body_bytes;
    let limit_name = state.names.max_body_bytes.as_str();
    if content_type.starts_with("application/x-www-form-urlencoded") {
        let body = Bytes::from_request(request, state)
            .await
            .map_err(|e| body_error(e.status(), &e.body_text(), limit_name))?;
        return read_urlencoded(&body);
    }
    let form = Multipart::from_request(request, state).await.map_err(|e| {
        RequestError::bad_request(
            "text",
            format!(
                "POST /tts takes a form, multipart (fields text, voice_url, voice_wav) or \
                 url-encoded (fields text, voice_url): {e}"
            ),
        )
    })?;
    read_form(form, limit, limit_name).await
}

/// A body that cannot be read: too large (naming the limit's setting) or cut.
fn body_error(status: axum::http::StatusCode, text: &str, limit_name: &str) -> RequestError {
    match kind_of(status) {
        ErrorKind::TooLarge => RequestError::new(
            ErrorKind::TooLarge,
            format!("the body is larger than the server's limit ({limit_name})"),
        ),
        kind => RequestError::new(kind, format!("the body cannot be read: {text}")),
    }
}

/// `POST /tts` (a multipart or url-encoded form: `text`, optional `voice_url` or
/// `voice_wav` (multipart only), and ours: `normalize`, `markup`, `true` or `false`, the
/// server's by default, `speed`, 0.25 to 4.0, 1 by default, and `seed`, an integer):
/// streaming WAV,
/// sent as frames are generated. Errors as the reference's (`{"detail": …}`); the voice
/// and the first frame are ready before the status is sent, so a failure before any audio
/// is a proper error status.
pub async fn tts(
    State(state): State<Arc<AppState>>,
    request: Request,
) -> Result<Response, RefError> {
    let form = read_tts_form(&state, request).await?;
    let Some(text) = form.text else {
        return Err(
            RequestError::bad_request("text", "text is missing: add the form field text").into(),
        );
    };
    state.check_text("text", &text)?;
    let voice = match (form.voice_url, form.voice_wav) {
        (Some(_), Some(_)) => {
            return Err(RequestError::bad_request(
                "voice_url",
                "Cannot provide both voice_url and voice_wav",
            )
            .into())
        }
        (Some(url), None) => state.voices.resolve(&url, "voice_url").await?,
        (None, Some((name, bytes))) => state.voices.from_upload(bytes, name, "voice_wav").await?,
        (None, None) => state.voices.default_voice(),
    };
    let synthesis = state.synthesize(voice, &text, "http", form.options)?;
    let response = stream_response(
        synthesis,
        AudioFormat::Wav,
        state.engine.model().sample_rate(),
        form.speed.unwrap_or(1.0),
    )
    .await
    .map_err(RefError)?;
    Ok(with_headers(
        response,
        &[(
            header::CONTENT_DISPOSITION,
            "attachment; filename=generated_speech.wav",
        )],
    ))
}

fn with_headers(mut r: Response, headers: &[(header::HeaderName, &'static str)]) -> Response {
    for (k, v) in headers {
        r.headers_mut()
            .insert(k.clone(), header::HeaderValue::from_static(v));
    }
    r
}

/// Waits for the first frame, then answers 200 with the audio streamed as it comes. A
/// failure after the first frame ends the body abruptly (the client sees an incomplete
/// transfer, never a short file that looks whole).
pub async fn stream_response(
    synthesis: Synthesis,
    format: AudioFormat,
    sample_rate: usize,
    speed: f64,
) -> Result<Response, RequestError> {
    let body = streamed_body(
        synthesis,
        format,
        sample_rate,
        speed,
        <[u8]>::to_vec,
        |_, tail| tail,
    )
    .await?;
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(format.content_type()),
    );
    Ok(response)
}

/// The body of a streamed response: once the first frame is there (else its error), the
/// audio (time-stretched when `speed` is not 1) encoded piece by piece as frames come, each piece wrapped by `piece` (as it is,
/// or as an SSE event), then `end(frames, tail)` with the encoder's last bytes. A stream
/// that fails, is cut or whose encoder fails ends the body with an error instead of
/// `end`, so that the transfer is incomplete.
///
/// # Errors
/// The stream's failure before its first frame, or the encoder's (500).
pub async fn streamed_body(
    mut synthesis: Synthesis,
    format: AudioFormat,
    sample_rate: usize,
    speed: f64,
    piece: fn(&[u8]) -> Vec<u8>,
    end: impl FnOnce(usize, Vec<u8>) -> Vec<u8> + Send + 'static,
) -> Result<Body, RequestError> {
    let internal = |m: String| RequestError::new(ErrorKind::Internal, m);
    let mut encoder = AudioOut::new(format, sample_rate as u32, speed).map_err(internal)?;
    let first = synthesis.first_frame().await?;
    // An empty piece (the codec or the time-stretch still filling) is sent as nothing.
    let piece = move |b: &[u8]| if b.is_empty() { Vec::new() } else { piece(b) };
    let head = piece(&encoder.frame(&first).map_err(internal)?);
    let stream = futures_util::stream::unfold(
        (Some(synthesis), Some(encoder), Some(head), Some(end)),
        move |(mut synthesis, mut encoder, mut head, mut end)| async move {
            if let Some(bytes) = head.take() {
                return Some((Ok(bytes), (synthesis, encoder, None, end)));
            }
            let s = synthesis.as_mut()?;
            match s.next().await {
                Some(SynthEvent::Frame(f)) => match encoder.as_mut()?.frame(&f) {
                    Ok(bytes) => Some((Ok(piece(&bytes)), (synthesis, encoder, None, end))),
                    Err(m) => {
                        tracing::error!("{m}");
                        Some((Err(std::io::Error::other(m)), (None, None, None, None)))
                    }
                },
                Some(SynthEvent::Failed(m)) => {
                    tracing::warn!("a response ends incomplete: {m}");
                    Some((Err(std::io::Error::other(m)), (None, None, None, None)))
                }
                None => {
                    let frames = s.frames;
                    let last = match encoder.take()?.finish() {
                        Ok(tail) => Ok(end.take()?(frames, tail)),
                        Err(m) => {
                            tracing::error!("{m}");
                            Err(std::io::Error::other(m))
                        }
                    };
                    Some((last, (None, None, None, None)))
                }
            }
        },
    );
    Ok(Body::from_stream(stream))
}

/// Escapes text for an HTML text node or attribute.
/// `english` → `English`.
fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
