//! Long-lived sessions (Kyutai's websocket, `kyutai/`): how many are open, a place per
//! session held until it closes, and the server's shutdown signal they follow.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The sessions open now, and the server's shutdown signal they follow.
#[derive(Debug, Default)]
pub struct Sessions {
    open: Arc<Open>,
    next_id: AtomicU64,
    stop: OnceLock<CancellationToken>,
}

/// How many sessions are open; notified when one closes.
#[derive(Debug, Default)]
struct Open {
    count: AtomicUsize,
    closed: Notify,
}

/// A session's place among [`Sessions`], held until it is dropped.
#[derive(Debug)]
pub struct SessionSlot {
    open: Arc<Open>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.open.count.fetch_sub(1, Ordering::AcqRel);
        self.open.closed.notify_waiters();
    }
}

impl Sessions {
    /// Sessions follow `stop`, the server's shutdown (set once, at start-up).
    pub fn follow(&self, stop: CancellationToken) {
        let _ = self.stop.set(stop);
    }

    /// The shutdown signal (never cancelled when none was given).
    pub fn stop(&self) -> CancellationToken {
        self.stop.get().cloned().unwrap_or_default()
    }

    /// A number for the next session (for the log).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A place, if fewer than `max` sessions are open.
    pub fn try_take(&self, max: usize) -> Option<SessionSlot> {
        self.open
            .count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| SessionSlot {
                open: Arc::clone(&self.open),
            })
    }

    /// Waits until every session has closed, for at most `limit`; returns how many are
    /// still open.
    pub async fn wait_closed(&self, limit: Duration) -> usize {
        let all_closed = async {
            loop {
                let closed = self.open.closed.notified();
                if self.open.count.load(Ordering::Acquire) == 0 {
                    return;
                }
                closed.await;
            }
        };
        let _ = tokio::time::timeout(limit, all_closed).await;
        self.open.count.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_and_given_back() {
        let s = Sessions::default();
        let a = s.try_take(2).expect("a place");
        let b = s.try_take(2).expect("a second place");
        assert!(s.try_take(2).is_none());
        drop(a);
        assert!(s.try_take(2).is_some(), "a place is given back on drop");
        drop(b);
    }
}
