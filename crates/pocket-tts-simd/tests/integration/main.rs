//! One test binary for the SIMD crate's integration tests: each file of this folder is a module, so
//! they compile and link once. Tests that need a process of their own (process-wide
//! state: an allocation counter, environment variables, thread counts, signal handling)
//! stay separate files of `tests/`.

#[path = "../common/mod.rs"]
mod common;

mod gemm;
mod gemv;
mod gemv_half;
mod gemv_i8;
mod gemv_multi;
mod kernels;
mod split;
