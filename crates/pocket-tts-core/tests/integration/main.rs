//! One test binary for the core crate's integration tests: each file of this folder is a module, so
//! they compile and link once. Tests that need a process of their own (process-wide
//! state: an allocation counter, environment variables, thread counts, signal handling)
//! stay separate files of `tests/`.

#[path = "../common/mod.rs"]
mod common;

mod audio;
mod batch_flow_lm;
mod checkpoint_errors;
mod config_validation;
mod copy_state;
mod dtype;
mod engine;
mod fast_flow_lm;
mod fast_mimi;
mod fuzz_regressions;
mod layers;
mod model_text;
mod output;
mod parity_seeded;
mod parity_tiny;
mod quantize;
mod split_model;
mod torch_rng;
mod tts_model_api;
mod voice_state;
mod weights;
