//! FlowLM fast path (in progress).
