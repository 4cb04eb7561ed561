//! Unit tests of the int8 kernel variants, including those the dispatch does not pick.

use super::*;

/// Every kernel variant this CPU has, including those the dispatch does not pick here
/// (e.g. AVX2 on an AVX-512 host).
fn kernels() -> Vec<Q8Kernel> {
    let all = [
        Q8Kernel::Scalar,
        #[cfg(target_arch = "x86_64")]
        Q8Kernel::Avx2,
        #[cfg(target_arch = "x86_64")]
        Q8Kernel::Avx512Vnni,
        #[cfg(target_arch = "aarch64")]
        Q8Kernel::Neon,
        #[cfg(target_arch = "aarch64")]
        Q8Kernel::NeonDot,
        #[cfg(target_arch = "wasm32")]
        Q8Kernel::Simd128,
    ];
    all.into_iter().filter(|k| k.is_supported()).collect()
}

/// Deterministic `i8` values in `[-127, 127]`.
fn values(n: usize, seed: u64) -> Vec<i8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (((s >> 32) % 255) as i32 - 127) as i8
        })
        .collect()
}

/// A quantized vector holding `q` (any values in `[-127, 127]`) with scale `scale`.
fn vector(q: Vec<i8>, scale: f32) -> QuantizedVector {
    QuantizedVector::from_parts(q, scale)
}

#[test]
fn every_q8_kernel_gives_the_scalar_bits() {
    let ks = kernels();
    eprintln!("q8 kernels on this CPU: {ks:?}");
    for cols in [
        1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 1024, 4096,
    ] {
        for rows in [1, 3, 8] {
            let q = values(rows * cols, (rows * 31 + cols) as u64);
            let x = values(cols, cols as u64 + 5);
            let scales: Vec<f32> = (0..rows).map(|r| 0.01 + r as f32 * 1e-3).collect();
            let bias: Vec<f32> = (0..rows).map(|r| r as f32 - 1.5).collect();
            for (b, acc) in [(None, false), (Some(&bias[..]), true)] {
                let mut want = vec![0.25f32; rows];
                scalar_q8(&q, &scales, &x, 0.03, &mut want, b, acc);
                for &k in &ks {
                    let mut got = vec![0.25f32; rows];
                    k.run(&q, &scales, &x, sum_i8(&x), 0.03, &mut got, b, acc);
                    assert_eq!(got, want, "{k:?} {rows}x{cols}");
                }
            }
        }
    }
}

#[test]
fn q8_kernels_do_not_overflow_at_the_extremes() {
    // |q|, |x| = 127 everywhere: 4096 · 127² = 66 064 384 per row, in either sign.
    let cols = 4096;
    let x: Vec<i8> = (0..cols)
        .map(|i| if i % 3 == 0 { -127 } else { 127 })
        .collect();
    let mut q = vec![127i8; cols];
    q.extend(x.iter().map(|&v| -v));
    q.extend(x.iter().copied());
    let scales = [1.0f32; 3];
    for k in kernels() {
        let mut y = [0f32; 3];
        k.run(&q, &scales, &x, sum_i8(&x), 1.0, &mut y, None, false);
        let xs: i64 = x.iter().map(|&v| i64::from(v) * 127).sum();
        assert_eq!(y, [xs as f32, -66_064_384.0, 66_064_384.0], "{k:?}");
        // The same through the multi-token kernels, for the tokens x, −x and x (out is
        // `[token, row]`).
        let neg: Vec<i8> = x.iter().map(|&v| -v).collect();
        let tokens = [
            vector(x.clone(), 1.0),
            vector(neg, 1.0),
            vector(x.clone(), 1.0),
        ];
        let mut out = [0f32; 9];
        k.run_tokens(&q, &scales, cols, &tokens, &mut out);
        let (a, b) = (xs as f32, 66_064_384.0);
        assert_eq!(out, [a, -b, b, -a, b, -b, a, -b, b], "{k:?} tokens");
    }
}

#[test]
fn every_tokens_kernel_gives_each_tokens_scalar_bits() {
    let ks = kernels();
    for cols in [1, 2, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 129, 1024] {
        for rows in [1, 2, 5] {
            let q = values(rows * cols, (rows * 17 + cols) as u64);
            let scales: Vec<f32> = (0..rows).map(|r| 0.02 + r as f32 * 1e-3).collect();
            for n in 1..=9 {
                let xs: Vec<QuantizedVector> = (0..n)
                    .map(|t| vector(values(cols, (cols * 10 + t) as u64), 0.01 + t as f32))
                    .collect();
                let mut want = vec![0f32; n * rows];
                for (x, y) in xs.iter().zip(want.chunks_exact_mut(rows)) {
                    scalar_q8(&q, &scales, &x.q, x.scale, y, None, false);
                }
                for &k in &ks {
                    let mut out = vec![f32::NAN; n * rows];
                    k.run_tokens(&q, &scales, cols, &xs, &mut out);
                    assert_eq!(out, want, "{k:?}: {rows} rows × {cols} columns, {n} tokens");
                }
            }
        }
    }
}

/// Blocks of 16 rows or more and 64-column multiples: the AMX tiles where the CPU has
/// them (the rows past a multiple of 16 through VNNI), VNNI or the other kernels
/// elsewhere. Several passes of 48 tokens, a partial last token tile, a zero token and
/// the extremes ±127 of both operands.
#[test]
fn long_token_blocks_give_each_tokens_scalar_bits() {
    let ks = kernels();
    #[cfg(target_arch = "x86_64")]
    eprintln!("AMX int8 tiles here: {}", amx_int8_available());
    for cols in [64, 128, 1024] {
        for rows in [16, 17, 33, 48] {
            let mut q = values(rows * cols, (rows * 31 + cols) as u64);
            q[0] = 127;
            q[1] = -127;
            q[cols] = -127;
            let scales: Vec<f32> = (0..rows).map(|r| 0.02 + r as f32 * 1e-3).collect();
            for n in [2, 3, 16, 17, 41, 48, 49, 100] {
                let xs: Vec<QuantizedVector> = (0..n)
                    .map(|t| {
                        let mut v = values(cols, (cols * 7 + t) as u64);
                        if t == 1 {
                            v.iter_mut().for_each(|v| *v = 0);
                        }
                        v[0] = if t % 2 == 0 { 127 } else { -127 };
                        vector(v, 0.01 + t as f32)
                    })
                    .collect();
                let mut want = vec![0f32; n * rows];
                for (x, y) in xs.iter().zip(want.chunks_exact_mut(rows)) {
                    scalar_q8(&q, &scales, &x.q, x.scale, y, None, false);
                }
                #[cfg(target_arch = "x86_64")]
                assert_eq!(tokens_amx::takes(n, rows, cols), amx_int8_available());
                for &k in &ks {
                    let mut out = vec![f32::NAN; n * rows];
                    k.run_tokens(&q, &scales, cols, &xs, &mut out);
                    assert_eq!(out, want, "{k:?}: {rows} rows × {cols} columns, {n} tokens");
                }
            }
        }
    }
}

#[test]
fn simd_hosts_dispatch_to_the_best_q8_kernel() {
    let k = Q8Kernel::for_isa(Isa::Avx512.resolve());
    assert!(k.is_supported());
    #[cfg(target_arch = "x86_64")]
    {
        if Isa::Avx512.is_supported() && is_x86_feature_detected!("avx512vnni") {
            assert_eq!(k, Q8Kernel::Avx512Vnni);
        }
        if Isa::Avx2.is_supported() {
            assert_eq!(Q8Kernel::for_isa(Isa::Avx2), Q8Kernel::Avx2);
        }
    }
    #[cfg(target_arch = "aarch64")]
    if Isa::Neon.is_supported() {
        let best = if std::arch::is_aarch64_feature_detected!("dotprod") {
            Q8Kernel::NeonDot
        } else {
            Q8Kernel::Neon
        };
        eprintln!("q8 kernel of NEON hosts here: {best:?}");
        assert_eq!(k, best);
        assert_eq!(Q8Kernel::for_isa(Isa::Neon), best);
    }
    #[cfg(target_arch = "wasm32")]
    assert_eq!(Q8Kernel::for_isa(Isa::Simd128), Q8Kernel::Simd128);
    assert_eq!(Q8Kernel::for_isa(Isa::Scalar), Q8Kernel::Scalar);
}
