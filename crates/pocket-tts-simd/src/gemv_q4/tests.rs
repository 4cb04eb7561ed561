//! Unit tests of the 4-bit kernel variants, including those the dispatch does not pick.

use super::*;

/// Every kernel variant this CPU has.
fn kernels() -> Vec<Q4Kernel> {
    let all = [
        Q4Kernel::Scalar,
        #[cfg(target_arch = "x86_64")]
        Q4Kernel::Avx2,
        #[cfg(target_arch = "x86_64")]
        Q4Kernel::Vnni,
        #[cfg(target_arch = "aarch64")]
        Q4Kernel::Neon,
        #[cfg(target_arch = "aarch64")]
        Q4Kernel::NeonDot,
    ];
    all.into_iter().filter(|k| k.is_supported()).collect()
}

/// Deterministic values in `[-1, 1)`.
fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn vector(x: &[f32]) -> QuantizedVector {
    let mut q = QuantizedVector::with_capacity(x.len());
    q.quantize(x);
    q
}

#[test]
fn quantize_keeps_the_largest_weight_and_bounds_the_error() {
    let (rows, cols) = (3, 96);
    let mut w = floats(rows * cols, 7);
    w[5] = -2.0; // block 0's largest magnitude
    w[32..64].fill(0.0); // block 1 of row 0 all zeros
    let q = Q4Rows::quantize(&w, rows, cols);
    assert_eq!(q.bytes(), rows * cols / 2 + rows * cols / 16);
    let d = q.dequantize();
    assert_eq!(d[5], -2.0, "the largest magnitude is exactly -8 d");
    for (b, (wb, db)) in w.chunks(32).zip(d.chunks(32)).enumerate() {
        // Half a step, except a value near the opposite extreme (`+8 d` clamped to 7).
        let step = wb.iter().fold(0f32, |m, v| m.max(v.abs())) / 8.0;
        for (a, e) in wb.iter().zip(db) {
            let bound = if a.abs() > 7.4 * step { 1.01 } else { 0.51 };
            assert!(
                (a - e).abs() <= step * bound + 1e-7,
                "block {b}: {a} vs {e}"
            );
        }
    }
    assert!(d[32..64].iter().all(|&v| v == 0.0));
    let again = Q4Rows::from_parts(
        SharedBytes::from_vec(q.values().to_vec()),
        SharedBytes::from_vec(q.scales().to_vec()),
        rows,
        cols,
    )
    .unwrap();
    assert_eq!(again, q);
    assert!(Q4Rows::from_parts(
        SharedBytes::from_vec(vec![0; 10]),
        SharedBytes::from_vec(vec![0; 2]),
        1,
        32
    )
    .is_err());
}

#[test]
fn every_q4_kernel_gives_the_scalar_bits_and_the_dequantized_product() {
    let ks = kernels();
    eprintln!("q4 kernels on this CPU: {ks:?}");
    for cols in [32, 64, 224, 256, 288, 512, 1024, 4096] {
        for rows in [1, 3, 8] {
            let w = floats(rows * cols, (rows * 31 + cols) as u64);
            let q = Q4Rows::quantize(&w, rows, cols);
            let x = vector(&floats(cols, cols as u64 + 5));
            let bias: Vec<f32> = (0..rows).map(|r| r as f32 - 1.5).collect();
            for (b, acc) in [(None, false), (Some(&bias[..]), true)] {
                let mut want = vec![0.25f32; rows];
                Q4Kernel::Scalar.run(q.rows_range(0, rows), &x, &mut want, b, acc);
                for &k in &ks {
                    let mut got = vec![0.25f32; rows];
                    k.run(q.rows_range(0, rows), &x, &mut got, b, acc);
                    assert_eq!(got, want, "{k:?} {rows}x{cols}");
                }
                // Against the dequantized matrix in f64.
                let dq = q.dequantize();
                for r in 0..rows {
                    let exact: f64 = (0..cols)
                        .map(|c| {
                            f64::from(dq[r * cols + c])
                                * f64::from(x.values()[c])
                                * f64::from(x.scale())
                        })
                        .sum::<f64>()
                        + b.map_or(0.0, |b| f64::from(b[r]))
                        + if acc { 0.25 } else { 0.0 };
                    assert!(
                        (f64::from(want[r]) - exact).abs() <= 1e-5 * (1.0 + exact.abs()),
                        "{rows}x{cols} row {r}: {} vs {exact}",
                        want[r]
                    );
                }
            }
        }
    }
}

#[test]
fn q4_kernels_do_not_overflow_at_the_extremes() {
    // Every weight at -8 d and every activation at ±127.
    let cols = 4096;
    let w = vec![-1.0f32; cols];
    let q = Q4Rows::quantize(&w, 1, cols);
    for sign in [1.0f32, -1.0] {
        let x = vector(&vec![sign; cols]);
        for k in kernels() {
            let mut y = [0f32];
            k.run(q.rows_range(0, 1), &x, &mut y, None, false);
            assert_eq!(y[0], -sign * cols as f32, "{k:?}");
        }
    }
}

#[test]
fn tokens_give_each_tokens_bits() {
    for (rows, cols) in [(5, 320), (4, 4096), (3, 32)] {
        let q = Q4Rows::quantize(&floats(rows * cols, 3), rows, cols);
        for n in 1..=9u64 {
            let xs: Vec<QuantizedVector> = (0..n).map(|t| vector(&floats(cols, 100 + t))).collect();
            for isa in [Isa::Scalar, detected()] {
                let mut out = vec![f32::NAN; xs.len() * 2];
                isa.gemv_q4_tokens(&q, 1, 2, &xs, &mut out);
                for (t, x) in xs.iter().enumerate() {
                    let mut y = [0f32; 2];
                    Isa::Scalar.gemv_q4(&q, 1, x, &mut y, None, false);
                    assert_eq!(
                        [out[2 * t].to_bits(), out[2 * t + 1].to_bits()],
                        y.map(f32::to_bits),
                        "{isa:?} {rows}x{cols}, {n} tokens, token {t}"
                    );
                }
            }
        }
    }
}

#[test]
fn simd_hosts_dispatch_to_the_best_q4_kernel() {
    let k = Q4Kernel::for_isa(detected());
    assert!(k.is_supported());
    eprintln!("q4 kernel here: {k:?}");
    #[cfg(target_arch = "x86_64")]
    if Isa::Avx512.is_supported() && Q4Kernel::Vnni.is_supported() {
        assert_eq!(Q4Kernel::for_isa(Isa::Avx512), Q4Kernel::Vnni);
    }
    assert_eq!(Q4Kernel::for_isa(Isa::Scalar), Q4Kernel::Scalar);
}
