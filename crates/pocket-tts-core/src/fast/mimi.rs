//! Mimi decoder fast path (in progress).
