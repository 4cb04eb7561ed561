//! Allocation-free inference paths for the hot loop.
//!
//! The Candle modules in [`crate::internals::modules`] and [`crate::internals::models`] define the model and are
//! the reference the parity tests check against the Python package. The runtimes here read
//! the same weights (the Candle tensors' CPU storage, no copy) and run one FlowLM step or
//! one Mimi decoder frame with pre-allocated buffers, run-time-dispatched SIMD kernels
//! (`pocket-tts-simd`) and `gemm`, so that steady-state generation allocates nothing.
//! Each runtime is tested against its Candle counterpart.
//!
//! The runtimes build themselves from the typed weight views of
//! [`crate::internals::modules::weights_view`] (`FlowLm::view`, `Mimi::view`), never from the Candle
//! modules' fields, which stay private to the model definition.
//!
//! - [`flow_lm`]: `FlowLmFast`, a FlowLM step (prefill and autoregressive steps, KV caches
//!   as plain buffers).
//! - [`mimi`] (a folder: decoder, encoder, SEANet, convs, transformer, GEMM, threads):
//!   `MimiDecoderFast`, one Mimi decoder frame (latent → 1920 samples), and
//!   `MimiEncoderFast`, a whole voice prompt to latents (multi-threaded).
//!
//! Parallel jobs write their outputs through disjoint pieces handed out by
//! [`pocket_tts_simd::SplitMut`] (row blocks, as slices) or, for the jobs that split a
//! matrix by columns, by the private `columns::ColumnSplit`.

mod columns;
pub mod flow_lm;
pub mod mimi;
