//! SIMD kernels.
