//! Request errors and the two shapes they are sent in: the reference server's
//! (`{"detail": …}`, FastAPI's `HTTPException`) on its routes, OpenAI's
//! (`{"error": {"message", "type", "param", "code"}}`) on `/v1/…`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use pocket_tts_core::Error as CoreError;
use serde_json::json;

/// Seconds a client is told to wait (`Retry-After`) when every stream is busy: about one
/// short sentence of generation.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// A failed request: its status, a message naming the field or value at fault and saying
/// what to do, and the field (`param` in OpenAI's shape).
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong and what to do.
    pub message: String,
    /// The request field at fault, if one is.
    pub param: Option<&'static str>,
}

impl ApiError {
    /// A 400 naming `param`.
    pub fn bad_request(param: &'static str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            param: Some(param),
        }
    }

    /// An error with `status` and no field.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            param: None,
        }
    }

    /// A core error met while serving `param` (a voice or the text): the caller's fault
    /// (400) for bad input, 429 when busy, 500 otherwise.
    pub fn from_core(param: &'static str, e: &CoreError) -> Self {
        let status = match e {
            CoreError::InvalidArgument(_)
            | CoreError::InvalidData(_)
            | CoreError::NotFound(_)
            | CoreError::Unsupported(_) => StatusCode::BAD_REQUEST,
            CoreError::Busy(_) => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let message = if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::error!("{param}: {e}");
            format!("{param}: the server failed ({e}); see its log")
        } else {
            format!("{param}: {e}")
        };
        Self {
            status,
            message,
            param: Some(param),
        }
    }

    /// The error in the reference server's shape.
    pub fn reference(self) -> Response {
        let body = Json(json!({ "detail": self.message }));
        self.finish(body.into_response())
    }

    /// The error in OpenAI's shape.
    pub fn openai(self) -> Response {
        let kind = match self.status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            s if s.is_server_error() => "server_error",
            _ => "invalid_request_error",
        };
        let body = Json(json!({ "error": {
            "message": self.message,
            "type": kind,
            "param": self.param,
            "code": null,
        }}));
        self.finish(body.into_response())
    }

    fn finish(self, mut response: Response) -> Response {
        *response.status_mut() = self.status;
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// An [`ApiError`] answered in the reference server's shape (`/tts`, `/`, `/health`).
#[derive(Debug)]
pub struct RefError(pub ApiError);

impl From<ApiError> for RefError {
    fn from(e: ApiError) -> Self {
        Self(e)
    }
}

impl IntoResponse for RefError {
    fn into_response(self) -> Response {
        self.0.reference()
    }
}

/// An [`ApiError`] answered in OpenAI's shape (`/v1/…`).
#[derive(Debug)]
pub struct OpenAiError(pub ApiError);

impl From<ApiError> for OpenAiError {
    fn from(e: ApiError) -> Self {
        Self(e)
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        self.0.openai()
    }
}

/// A multipart body that cannot be read: 413 past the size limit, else 400.
pub fn multipart_error(e: &axum::extract::multipart::MultipartError, limit: usize) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is larger than the server's limit of {} (--max-upload-mb): \
                 send a shorter voice sample",
                mib(limit)
            ),
        )
    } else {
        ApiError::new(
            e.status(),
            format!("the multipart form cannot be read: {}", e.body_text()),
        )
    }
}

/// `n` bytes in MiB, for messages.
pub fn mib(n: usize) -> String {
    format!("{:.0} MiB", n as f64 / (1024.0 * 1024.0))
}
