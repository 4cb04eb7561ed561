//! One test binary for the server's end-to-end tests: each starts the server in this
//! process on an ephemeral loopback port with the tiny model and speaks HTTP or Wyoming to
//! it; each file of this folder is a module, so they compile and link once.

#[path = "../common/mod.rs"]
mod common;

mod serve;
mod serve_formats;
mod serve_kyutai;
mod serve_seed;
mod serve_text;
mod serve_wyoming;
