//! Helpers shared by the GEMV test files: seeded data and the f32 summation tolerance.

/// SplitMix64 values uniform in `[-1, 1)`.
pub fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Tolerance for a sum of `n` products bounded by `mag`: f32 summation error of a
/// blocked sum, `n · 2⁻²⁴ · mag` is a generous bound for `n` up to a few thousand.
pub fn tol(n: usize, mag: f64) -> f64 {
    (n as f64 + 8.0) * 2f64.powi(-23) * mag + 1e-30
}
