//! The Wyoming protocol (Home Assistant's voice protocol).

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::state::AppState;

/// Accepts Wyoming connections until `stop` is cancelled.
pub async fn serve(listener: TcpListener, state: Arc<AppState>, stop: CancellationToken) {
    let _ = (listener, state);
    stop.cancelled().await;
}
