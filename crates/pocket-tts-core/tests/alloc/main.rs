//! Steady-state generation allocates nothing: the FlowLM step and the Mimi decoder frame
//! under a counting global allocator (`counting.rs`, the only one of the crate's tests).
//!
//! This binary has no libtest harness (`harness = false` in Cargo.toml): the harness's own
//! thread allocates while a test runs (bookkeeping right after it spawns the test thread,
//! which a busy machine can delay into the counted window), and the counter is
//! process-wide. Here only the measured code and its team threads run. A failed check
//! panics, so the process exits non-zero and `cargo test` reports the failure.

#[path = "../common/mod.rs"]
mod common;
mod counting;
mod flow_lm;
mod mimi;

fn main() {
    counting::check_active();
    flow_lm::step_allocates_nothing_after_warm_up();
    println!("test step_allocates_nothing_after_warm_up ... ok (FlowLmFast::step: no allocation after warm-up)");
    mimi::decode_frame_allocates_nothing_after_warmup();
    println!("test decode_frame_allocates_nothing_after_warmup ... ok (MimiDecoderFast::decode_frame: no allocation after warm-up)");
}
