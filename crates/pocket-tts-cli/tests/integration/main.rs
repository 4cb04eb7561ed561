//! One test binary for the CLI's end-to-end tests (each spawns the built binary): each file of this folder is a module, so
//! they compile and link once. Tests that need a process of their own (process-wide
//! state: an allocation counter, environment variables, thread counts, signal handling)
//! stay separate files of `tests/`.

#[path = "../common/mod.rs"]
mod common;

mod backend;
mod bench_streams;
mod cli_errors;
mod dtype;
mod export_voice;
mod formats;
mod generate;
mod normalize_markup;
mod output_safety;
mod prepare_text;
mod quantize;
mod serve;
mod stream;
