//! The audio crate's integration tests: every codec decoded by an independent decoder
//! (symphonia; libopus's own decoder for Opus, which symphonia lacks) to the input's
//! length, and the time-stretch's durations and pitch.

mod codecs;
mod signal;
mod stretch;
