//! One test binary for the text crate's integration tests: each file of this folder is a
//! module, so they compile and link once.

#[path = "../common/mod.rs"]
mod common;

mod chunking_parity;
mod prep;
mod tokenizer_parity;
