//! A [`RequestError`] over HTTP: its status, and the two shapes it is sent in: the
//! reference server's (`{"detail": …}`, FastAPI's `HTTPException`) on its routes, OpenAI's
//! (`{"error": {"message", "type", "param", "code"}}`) on `/v1/…`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::error::{mib, ErrorKind, RequestError};

/// Seconds a client is told to wait (`Retry-After`) when every stream is busy: about one
/// short sentence of generation.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// The HTTP status of a failure class.
pub fn status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::BadRequest => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorKind::Busy => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The failure class of a status axum chose (a body it could not read).
pub fn kind_of(status: StatusCode) -> ErrorKind {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => ErrorKind::TooLarge,
        s if s.is_server_error() => ErrorKind::Internal,
        _ => ErrorKind::BadRequest,
    }
}

/// The error in the reference server's shape.
pub fn reference(e: RequestError) -> Response {
    let body = Json(json!({ "detail": e.message }));
    finish(e.kind, body.into_response())
}

/// The error in OpenAI's shape.
pub fn openai(e: RequestError) -> Response {
    let kind = match e.kind {
        ErrorKind::Unauthorized => "authentication_error",
        ErrorKind::Busy => "rate_limit_error",
        ErrorKind::Internal => "server_error",
        _ => "invalid_request_error",
    };
    let body = Json(json!({ "error": {
        "message": e.message,
        "type": kind,
        "param": e.param,
        "code": null,
    }}));
    finish(e.kind, body.into_response())
}

fn finish(kind: ErrorKind, mut response: Response) -> Response {
    *response.status_mut() = status(kind);
    match kind {
        ErrorKind::Busy => {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        ErrorKind::Unauthorized => {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        _ => {}
    }
    response
}

/// A [`RequestError`] answered in the reference server's shape (`/tts`, `/`, `/health`).
#[derive(Debug)]
pub struct RefError(pub RequestError);

impl From<RequestError> for RefError {
    fn from(e: RequestError) -> Self {
        Self(e)
    }
}

impl IntoResponse for RefError {
    fn into_response(self) -> Response {
        reference(self.0)
    }
}

/// A [`RequestError`] answered in OpenAI's shape (`/v1/…`).
#[derive(Debug)]
pub struct OpenAiError(pub RequestError);

impl From<RequestError> for OpenAiError {
    fn from(e: RequestError) -> Self {
        Self(e)
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        openai(self.0)
    }
}

/// A multipart body that cannot be read: too large past the size limit (`limit` bytes,
/// the setting `limit_name`), else a bad request.
pub fn multipart_error(
    e: &axum::extract::multipart::MultipartError,
    limit: usize,
    limit_name: &str,
) -> RequestError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        RequestError::new(
            ErrorKind::TooLarge,
            format!(
                "the request body is larger than the server's limit of {} ({limit_name}): \
                 send a shorter voice sample",
                mib(limit)
            ),
        )
    } else {
        RequestError::new(
            kind_of(e.status()),
            format!("the multipart form cannot be read: {}", e.body_text()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_statuses_and_shapes() {
        for (kind, code) in [
            (ErrorKind::BadRequest, 400),
            (ErrorKind::Unauthorized, 401),
            (ErrorKind::NotFound, 404),
            (ErrorKind::Conflict, 409),
            (ErrorKind::TooLarge, 413),
            (ErrorKind::Busy, 429),
            (ErrorKind::Internal, 500),
        ] {
            assert_eq!(status(kind).as_u16(), code, "{kind:?}");
            let r = openai(RequestError::new(kind, "m"));
            assert_eq!(r.status().as_u16(), code);
            assert_eq!(
                r.headers().contains_key(header::RETRY_AFTER),
                kind == ErrorKind::Busy
            );
            assert_eq!(
                r.headers().contains_key(header::WWW_AUTHENTICATE),
                kind == ErrorKind::Unauthorized
            );
            assert_eq!(
                reference(RequestError::new(kind, "m")).status(),
                status(kind)
            );
        }
        assert_eq!(kind_of(StatusCode::PAYLOAD_TOO_LARGE), ErrorKind::TooLarge);
        assert_eq!(kind_of(StatusCode::BAD_REQUEST), ErrorKind::BadRequest);
        assert_eq!(
            kind_of(StatusCode::UNSUPPORTED_MEDIA_TYPE),
            ErrorKind::BadRequest
        );
        assert_eq!(
            kind_of(StatusCode::INTERNAL_SERVER_ERROR),
            ErrorKind::Internal
        );
    }
}
