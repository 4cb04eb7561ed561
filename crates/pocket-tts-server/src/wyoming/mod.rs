//! The Wyoming protocol (Home Assistant's voice protocol) over TCP: `describe` → `info`,
//! `synthesize` → `audio-start`, `audio-chunk`…, `audio-stop`, and streaming synthesis
//! (`synthesize-start`, `synthesize-chunk`…, `synthesize-stop` → audio per sentence, then
//! `synthesize-stopped`). Reference: the `wyoming` Python package 1.10.2 (`wyoming/event.py`
//! for the framing, `wyoming/info.py`, `wyoming/tts.py`, `wyoming/audio.py`,
//! `wyoming/error.py`, `wyoming/ping.py` for the events, its README for the event flows).
//!
//! Every connection is a task; its requests are served one after the other, each one
//! stream of the batched engine, with audio sent as frames are generated. A failed request
//! (unknown voice, empty text, busy server, failed generation) is answered with an `error`
//! event. After an `error` to a plain `synthesize` the connection is then closed (gently:
//! our side first, so that the client reads the error): Home Assistant's non-streaming
//! path (`homeassistant/components/wyoming/tts.py`) reads until `audio-stop`, skipping
//! `error` events, without a read timeout, and only a close ends its wait. Within a
//! streaming session (`synthesize-start` … `synthesize-stop`) an `error` keeps the
//! connection, as the session still ends with `synthesize-stopped`; `describe` and `ping`
//! always keep it. Bytes that are not Wyoming events get an `error` and the connection is
//! closed.

mod connection;
mod proto;
mod text;

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::state::AppState;

/// Accepts Wyoming connections until `stop` is cancelled, then waits for every connection
/// to end: idle ones are closed at once, running syntheses finish (or are cancelled by
/// the shutdown's grace period).
pub async fn serve(listener: TcpListener, state: Arc<AppState>, stop: CancellationToken) {
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            Some(done) = tasks.join_next(), if !tasks.is_empty() => reap(done),
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let (state, stop) = (Arc::clone(&state), stop.clone());
                    tasks.spawn(connection::run(stream, peer, state, stop));
                }
                Err(e) => {
                    // Out of file descriptors, a connection reset before it was accepted:
                    // wait a little rather than spin.
                    tracing::warn!("wyoming: cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
    drop(listener);
    if !tasks.is_empty() {
        tracing::info!("wyoming: waiting for {} connections to end", tasks.len());
    }
    while let Some(done) = tasks.join_next().await {
        reap(done);
    }
    tracing::debug!("wyoming: stopped");
}

fn reap(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        if e.is_panic() {
            tracing::error!("wyoming: a connection task panicked: {e}");
        }
    }
}
