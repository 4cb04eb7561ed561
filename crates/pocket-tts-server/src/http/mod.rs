//! HTTP: the router (routes, the body limit, the API key check, CORS, the access log and
//! request metrics), the reference server's routes (`reference.rs`), the OpenAI-compatible
//! ones (`openai.rs`), and how a request error is answered (`error.rs`).

mod error;
mod openai;
mod reference;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::error::{ErrorKind, RequestError, ServerError};
use crate::state::{constant_time_eq, AppState};

/// Routes anyone may call without the API key.
const OPEN_ROUTES: &[&str] = &["/", "/health"];

/// Builds the application.
///
/// # Errors
/// [`ServerError::InvalidOption`] for a CORS origin that is not a valid header value.
pub fn router(state: Arc<AppState>, cors_origins: &[String]) -> Result<Router, ServerError> {
    let limit = state.limits.max_body_bytes;
    let mut app = Router::new()
        .route("/", get(reference::index))
        .route("/health", get(reference::health))
        .route("/tts", post(reference::tts))
        .route("/metrics", get(metrics))
        .route("/v1/models", get(openai::models))
        .route("/v1/audio/speech", post(openai::speech))
        .route(
            "/v1/audio/voices",
            get(openai::list_voices).post(openai::upload_voice),
        )
        .route(crate::kyutai::PATH, get(kyutai_streaming))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            authorize,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            access_log,
        ));
    if !cors_origins.is_empty() {
        app = app.layer(cors(cors_origins)?);
    }
    Ok(app.with_state(state))
}

fn cors(origins: &[String]) -> Result<CorsLayer, ServerError> {
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let values = origins
            .iter()
            .map(|o| {
                HeaderValue::from_str(o).map_err(|_| ServerError::InvalidOption {
                    option: "cors_origins",
                    message: format!("{o:?}: not a valid origin"),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(values)
    };
    Ok(CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION]))
}

/// Whether `path` answers in OpenAI's error shape.
fn is_openai(path: &str) -> bool {
    path.starts_with("/v1/")
}

fn error_for(path: &str, e: RequestError) -> Response {
    if is_openai(path) {
        error::openai(e)
    } else {
        error::reference(e)
    }
}

async fn not_found(req: Request) -> Response {
    let path = req.uri().path().to_string();
    error_for(
        &path,
        RequestError::new(
            ErrorKind::NotFound,
            format!(
                "{} {path}: no such route (routes: GET /, GET /health, POST /tts, GET /metrics, \
                 GET /v1/models, POST /v1/audio/speech, GET|POST /v1/audio/voices, \
                 GET /api/tts_streaming (websocket))",
                req.method()
            ),
        ),
    )
}

/// `GET /api/tts_streaming` (Kyutai's websocket): its refusals before the upgrade in
/// the reference server's shape.
async fn kyutai_streaming(
    state: State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
    query: Result<
        axum::extract::Query<std::collections::HashMap<String, String>>,
        axum::extract::rejection::QueryRejection,
    >,
    upgrade: Result<
        axum::extract::ws::WebSocketUpgrade,
        axum::extract::ws::rejection::WebSocketUpgradeRejection,
    >,
) -> Response {
    crate::kyutai::handler(state, headers, query, upgrade)
        .await
        .unwrap_or_else(error::reference)
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let (active, queued) = state.engine.load();
    state.metrics.active.set(active as i64);
    state.metrics.queued.set(queued as i64);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        state.metrics.render(),
    )
        .into_response()
}

/// The API key check: `Authorization: Bearer KEY` on every route but [`OPEN_ROUTES`]
/// (and CORS preflights).
async fn authorize(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let Some(key) = &state.api_key else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    // Kyutai's websocket checks its own headers (`kyutai-api-key`, `auth_id`).
    if OPEN_ROUTES.contains(&path) || path == crate::kyutai::PATH || req.method() == Method::OPTIONS
    {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), key.as_bytes())) {
        return next.run(req).await;
    }
    let path = path.to_string();
    let message = if given.is_some() {
        format!(
            "the API key is wrong: send the server's {} as `Authorization: Bearer KEY`",
            state.names.api_key
        )
    } else {
        "this server needs an API key: send `Authorization: Bearer KEY`".to_string()
    };
    error_for(&path, RequestError::new(ErrorKind::Unauthorized, message))
}

/// The access log (one `tracing` line per request: method, path, status, time to the
/// response head) and the request counter by route and status.
async fn access_log(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let t0 = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    // The route's template (bounded: one per route), not the path a client chose.
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let response = next.run(req).await;
    let status = response.status();
    state
        .metrics
        .requests
        .with_label_values(&[route.as_str(), method.as_str(), status.as_str()])
        .inc();
    tracing::info!(
        target: "access",
        "{method} {path} {} {:.1} ms",
        status.as_u16(),
        t0.elapsed().as_secs_f64() * 1000.0
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_whole() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!constant_time_eq(b"s3cret", b"s3cres"));
        assert!(!constant_time_eq(b"s3cret", b"s3cret!"));
        assert!(!constant_time_eq(b"", b"x"));
    }

    #[test]
    fn cors_origins_are_checked() {
        assert!(cors(&["http://a.example".into()]).is_ok());
        assert!(cors(&["*".into()]).is_ok());
        let e = cors(&["bad\norigin".into()]).unwrap_err();
        assert!(e.to_string().contains("cors_origins"), "{e}");
    }
}
