//! Every kernel on every ISA available on this machine, against the `f64`-accurate scalar
//! reference, on random data (deterministic PRNG) over many lengths and on edge values.

use pocket_tts_simd::{available, scalar, Isa};

/// Lengths (and row widths) exercised: every tail size for every vector width, plus a few
/// larger ones.
fn lengths() -> Vec<usize> {
    (1..=130).chain([512, 1024, 4097]).collect()
}

/// SplitMix64: tiny deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * u
    }

    fn vec(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// Distance in units in the last place between two finite floats (0 for equal values,
/// including +0/-0).
fn ulp_diff(a: f32, b: f32) -> u64 {
    fn key(x: f32) -> i64 {
        let bits = x.to_bits() as i32;
        if bits < 0 {
            i64::from(i32::MIN) - i64::from(bits)
        } else {
            i64::from(bits)
        }
    }
    (key(a) - key(b)).unsigned_abs()
}

/// Accepts `got` if both are NaN, they are equal (covers infinities), or
/// `|got − want| ≤ abs + rel·|want|`, or they are at most `ulps` apart.
#[derive(Copy, Clone, Debug)]
struct Tol {
    abs: f32,
    rel: f32,
    ulps: u64,
}

fn within(got: f32, want: f32, tol: Tol) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true;
    }
    if !got.is_finite() || !want.is_finite() {
        return false;
    }
    let err = (got as f64 - want as f64).abs();
    err <= tol.abs as f64 + tol.rel as f64 * (want as f64).abs() || ulp_diff(got, want) <= tol.ulps
}

fn assert_close(what: &str, isa: Isa, input: &[f32], got: &[f32], want: &[f32], tol: Tol) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            within(g, w, tol),
            "{what} on {isa}, len {}: element {i} (input {:e}): got {g:e}, want {w:e}, \
             |err| = {:e} ({} ulp); tolerance: |err| <= {:e} + {:e}·|want| or <= {} ulp",
            got.len(),
            input[i],
            (g as f64 - w as f64).abs(),
            if g.is_finite() && w.is_finite() {
                ulp_diff(g, w)
            } else {
                u64::MAX
            },
            tol.abs,
            tol.rel,
            tol.ulps
        );
    }
}

/// Edge values for the element-wise kernels.
const EDGES: &[f32] = &[
    0.0,
    -0.0,
    1e-30,
    -1e-30,
    1e-7,
    -1e-7,
    0.346_573_6, // ln2/2: range-reduction boundary
    -0.346_573_6,
    0.5,
    -0.5,
    1.0,
    -1.0,
    3.0,
    -3.0,
    10.0,
    -10.0,
    20.0,
    -20.0,
    87.0,
    -87.0,
    -87.5,
    88.0,
    -88.0,
    88.7,
    88.72,
    88.73,
    89.0,
    100.0,
    -100.0,
    -103.0,
    -103.97,
    -104.0,
    -150.0,
    1e4,
    -1e4,
    1e20,
    -1e20,
    f32::MAX,
    f32::MIN,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
];

/// Random inputs of length `n`: mostly the "typical" range `[-typ, typ]`, every 7th value
/// from `[-wide, wide]`.
fn mixed(rng: &mut Rng, n: usize, typ: f32, wide: f32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            if i % 7 == 3 {
                rng.uniform(-wide, wide)
            } else {
                rng.uniform(-typ, typ)
            }
        })
        .collect()
}

type Elementwise = (&'static str, fn(Isa, &mut [f32]), fn(&mut [f32]), Tol);

fn elementwise_kernels() -> Vec<Elementwise> {
    vec![
        (
            "exp",
            |isa, x| isa.exp(x),
            scalar::exp,
            Tol {
                abs: 0.0,
                rel: 0.0,
                ulps: 2,
            },
        ),
        (
            "gelu_tanh",
            |isa, x| isa.gelu_tanh(x),
            scalar::gelu_tanh,
            Tol {
                abs: 1e-6,
                rel: 0.0,
                ulps: 2,
            },
        ),
        (
            "silu",
            |isa, x| isa.silu(x),
            scalar::silu,
            Tol {
                abs: 1e-6,
                rel: 0.0,
                ulps: 2,
            },
        ),
        (
            "elu(alpha=1)",
            |isa, x| isa.elu(x, 1.0),
            |x| scalar::elu(x, 1.0),
            Tol {
                abs: 1e-6,
                rel: 0.0,
                ulps: 2,
            },
        ),
        (
            "elu(alpha=0.7)",
            |isa, x| isa.elu(x, 0.7),
            |x| scalar::elu(x, 0.7),
            Tol {
                abs: 1e-6,
                rel: 0.0,
                ulps: 2,
            },
        ),
    ]
}

#[test]
fn elementwise_random_all_lengths() {
    for (name, run, reference, tol) in elementwise_kernels() {
        for isa in available() {
            let mut rng = Rng(0x5EED ^ name.len() as u64);
            for n in lengths() {
                let (typ, wide) = if name == "exp" {
                    (20.0, 110.0)
                } else {
                    (8.0, 120.0)
                };
                let input = mixed(&mut rng, n, typ, wide);
                let mut want = input.clone();
                reference(&mut want);
                let mut got = input.clone();
                run(isa, &mut got);
                assert_close(name, isa, &input, &got, &want, tol);
            }
        }
    }
}

#[test]
fn elementwise_edge_values_in_every_lane() {
    for (name, run, reference, tol) in elementwise_kernels() {
        for isa in available() {
            // Rotate the edge list so that every value lands in every lane position, in
            // full vectors and in the tail.
            for shift in 0..17 {
                let mut input: Vec<f32> = EDGES.to_vec();
                input.rotate_left(shift % EDGES.len());
                input.truncate(EDGES.len() - shift % 5);
                let mut want = input.clone();
                reference(&mut want);
                let mut got = input.clone();
                run(isa, &mut got);
                assert_close(name, isa, &input, &got, &want, tol);
            }
        }
    }
}

#[test]
fn elementwise_dense_sweep() {
    // Dense sweep of the interesting ranges (all tails irrelevant here: one long slice).
    for (name, run, reference, tol) in elementwise_kernels() {
        let input: Vec<f32> = (0..200_001)
            .map(|i| -110.0 + 200.0 * i as f32 / 200_000.0)
            .chain((0..20_001).map(|i| -1.0 + 2.0 * i as f32 / 20_000.0))
            .collect();
        let mut want = input.clone();
        reference(&mut want);
        for isa in available() {
            let mut got = input.clone();
            run(isa, &mut got);
            assert_close(name, isa, &input, &got, &want, tol);
        }
    }
}

#[test]
fn special_values() {
    for isa in available() {
        let mut v = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            89.0,
            -104.0,
            -1e4,
        ];
        isa.exp(&mut v);
        assert!(v[0].is_nan(), "{isa}: exp(NaN) = {}", v[0]);
        assert_eq!(
            v[1..],
            [f32::INFINITY, 0.0, f32::INFINITY, 0.0, 0.0],
            "{isa} exp"
        );

        let mut v = [f32::NAN, 1e4, -1e4, 1e30, -1e30, f32::MAX, f32::MIN, 0.0];
        isa.gelu_tanh(&mut v);
        assert!(v[0].is_nan(), "{isa}: gelu(NaN) = {}", v[0]);
        assert_eq!(
            v[1..],
            [1e4, 0.0, 1e30, 0.0, f32::MAX, 0.0, 0.0],
            "{isa} gelu"
        );

        let mut v = [f32::NAN, 1e4, -1e4, f32::INFINITY, -1e30, 0.0];
        isa.silu(&mut v);
        assert!(v[0].is_nan(), "{isa}: silu(NaN) = {}", v[0]);
        assert_eq!(v[1..], [1e4, 0.0, f32::INFINITY, 0.0, 0.0], "{isa} silu");

        let mut v = [f32::NAN, 1e4, -1e4, f32::INFINITY, f32::NEG_INFINITY, 0.0];
        isa.elu(&mut v, 1.0);
        assert!(v[0].is_nan(), "{isa}: elu(NaN) = {}", v[0]);
        assert_eq!(v[1..], [1e4, -1.0, f32::INFINITY, -1.0, 0.0], "{isa} elu");
    }
}

/// Softmax tolerance for element `i` of a row with maximum `m`: relative
/// `1e-6 + |x_i − m|·2^-24` (the second term is the rounding of `x_i − m` in f32, which
/// PyTorch's f32 kernel has too; it only exceeds 1e-6 for probabilities below ~1e-7 of the
/// largest), plus 1e-37 absolute for probabilities that underflow towards denormals.
fn assert_softmax_close(
    what: &str,
    isa: Isa,
    input: &[f32],
    cols: usize,
    got: &[f32],
    want: &[f32],
) {
    for (r, row) in input.chunks(cols).enumerate() {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for (j, &x) in row.iter().enumerate() {
            let i = r * cols + j;
            let rel = 1e-6 + ((x as f64 - m as f64).abs() * 2f64.powi(-24)) as f32;
            let tol = Tol {
                abs: 1e-37,
                rel,
                ulps: 0,
            };
            assert_close(
                &format!("{what}, row {r} (max {m:e}), column {j}"),
                isa,
                &input[i..=i],
                &got[i..=i],
                &want[i..=i],
                tol,
            );
        }
    }
}

#[test]
fn softmax_random_all_lengths() {
    let mut rng = Rng(42);
    for cols in lengths() {
        let rows = if cols > 1000 { 2 } else { 3 };
        for scale in [1.0f32, 30.0] {
            let mut input = rng.vec(rows * cols, -scale, scale);
            // Row 0: attention-style -inf mask on ~1/4 of the entries (never all of them).
            for j in (1..cols).step_by(4) {
                input[j] = f32::NEG_INFINITY;
            }
            let mut want = input.clone();
            scalar::softmax_rows(&mut want, cols);
            for isa in available() {
                let mut got = input.clone();
                isa.softmax_rows(&mut got, cols);
                assert_softmax_close("softmax_rows", isa, &input, cols, &got, &want);
                for (r, row) in got.chunks(cols).enumerate() {
                    let s: f64 = row.iter().map(|&v| v as f64).sum();
                    assert!(
                        (s - 1.0).abs() < 1e-5,
                        "softmax_rows on {isa}: row {r} of width {cols} sums to {s} (tolerance 1e-5)"
                    );
                }
                for j in (1..cols).step_by(4) {
                    assert_eq!(got[j], 0.0, "softmax_rows on {isa}: masked entry {j} not 0");
                }
            }
        }
    }
}

#[test]
fn softmax_edge_rows() {
    let cols = 23;
    let rows: Vec<Vec<f32>> = vec![
        vec![0.0; cols],
        vec![-1e30; cols],
        (0..cols).map(|i| i as f32 * 10.0).collect(), // huge spread: most underflow
        (0..cols)
            .map(|i| if i == 5 { 100.0 } else { -100.0 })
            .collect(),
        (0..cols)
            .map(|i| if i % 2 == 0 { 1e4 } else { -1e4 })
            .collect(),
        (0..cols).map(|i| 88.0 - i as f32 * 1e-30).collect(),
        (0..cols).map(|i| -88.0 + (i % 3) as f32).collect(),
        (0..cols)
            .map(|i| if i == 0 { 1e-30 } else { -1e-30 })
            .collect(),
        // Sums dominated by a few values; remaining ones land in the denormal range.
        (0..cols).map(|i| -(i as f32) * 4.0).collect(),
    ];
    for row in &rows {
        let mut want = row.clone();
        scalar::softmax_rows(&mut want, cols);
        for isa in available() {
            let mut got = row.clone();
            isa.softmax_rows(&mut got, cols);
            assert_softmax_close("softmax_rows (edge row)", isa, row, cols, &got, &want);
        }
    }
    // Degenerate rows become NaN like torch.softmax; other rows are unaffected.
    for isa in available() {
        let mut x = vec![0.5f32; 3 * cols];
        x[..cols].fill(f32::NEG_INFINITY);
        x[cols + 7] = f32::NAN;
        x[2 * cols + 3] = f32::INFINITY;
        let mut clean = vec![0.5f32; cols];
        isa.softmax_rows(&mut clean, cols);
        isa.softmax_rows(&mut x, cols);
        assert!(
            x.iter().all(|v| v.is_nan()),
            "{isa}: degenerate rows must be NaN"
        );
        assert!(
            clean.iter().all(|&v| (v - 1.0 / cols as f32).abs() < 1e-7),
            "{isa}: uniform row"
        );
        // Single column: always exactly 1.
        let mut one = vec![3.0f32, -1e30, 0.0, 88.9];
        isa.softmax_rows(&mut one, 1);
        assert_eq!(one, [1.0; 4], "{isa}: softmax over one column");
    }
}

/// LayerNorm tolerance for well-conditioned rows (|mean| ≲ 10·std).
const LN_TOL: Tol = Tol {
    abs: 2e-6,
    rel: 2e-6,
    ulps: 0,
};

#[test]
fn layer_norm_random_all_lengths() {
    let mut rng = Rng(7);
    for cols in lengths() {
        let rows = if cols > 1000 { 2 } else { 3 };
        let w = rng.vec(cols, 0.5, 1.5);
        let b = rng.vec(cols, -1.0, 1.0);
        for (offset, spread) in [(0.0f32, 1.0f32), (3.0, 2.0), (-50.0, 10.0), (1e-3, 1e-3)] {
            let input: Vec<f32> = rng
                .vec(rows * cols, -1.0, 1.0)
                .into_iter()
                .map(|v| offset + spread * v)
                .collect();
            for (weight, bias) in [
                (None, None),
                (Some(&w[..]), None),
                (None, Some(&b[..])),
                (Some(&w[..]), Some(&b[..])),
            ] {
                for eps in [1e-5f32, 1e-6] {
                    let mut want = vec![0.0; input.len()];
                    scalar::layer_norm_rows(&input, &mut want, cols, weight, bias, eps);
                    for isa in available() {
                        let mut got = vec![f32::NAN; input.len()];
                        isa.layer_norm_rows(&input, &mut got, cols, weight, bias, eps);
                        assert_close(
                            &format!(
                                "layer_norm_rows(cols={cols}, offset={offset}, spread={spread}, \
                                 weight={}, bias={}, eps={eps})",
                                weight.is_some(),
                                bias.is_some()
                            ),
                            isa,
                            &input,
                            &got,
                            &want,
                            LN_TOL,
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn layer_norm_edge_rows() {
    for isa in available() {
        for cols in [1usize, 7, 16, 33] {
            let bias: Vec<f32> = (0..cols).map(|i| i as f32 - 2.5).collect();
            // Constant rows (variance 0) give exactly the bias.
            for c in [0.0f32, 1e-30, -88.0, 1e4, -1e4] {
                let x = vec![c; 2 * cols];
                let mut out = vec![f32::NAN; 2 * cols];
                isa.layer_norm_rows(&x, &mut out, cols, None, Some(&bias), 1e-5);
                assert_eq!(
                    &out[..cols],
                    &bias[..],
                    "{isa}: constant row {c}, cols {cols}"
                );
                assert_eq!(
                    &out[cols..],
                    &bias[..],
                    "{isa}: constant row {c}, cols {cols}"
                );
            }
        }
        // Large offset relative to the spread: still close to the f64 reference.
        let cols = 1024;
        let x: Vec<f32> = (0..cols).map(|i| 1e4 + (i % 17) as f32 * 0.25).collect();
        let mut want = vec![0.0; cols];
        scalar::layer_norm_rows(&x, &mut want, cols, None, None, 1e-6);
        let mut got = vec![0.0; cols];
        isa.layer_norm_rows(&x, &mut got, cols, None, None, 1e-6);
        let tol = Tol {
            abs: 5e-4,
            rel: 0.0,
            ulps: 0,
        };
        assert_close("layer_norm_rows (offset 1e4)", isa, &x, &got, &want, tol);
    }
}

#[test]
fn dispatching_functions_match_detected_isa_bitwise() {
    let isa = pocket_tts_simd::detected();
    let mut rng = Rng(99);
    let input = rng.vec(1000, -10.0, 10.0);
    let check = |name: &str, a: Vec<f32>, b: Vec<f32>| {
        let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{name}: free function differs from {isa}");
    };
    let (mut a, mut b) = (input.clone(), input.clone());
    pocket_tts_simd::gelu_tanh(&mut a);
    isa.gelu_tanh(&mut b);
    check("gelu_tanh", a, b);
    let (mut a, mut b) = (input.clone(), input.clone());
    pocket_tts_simd::silu(&mut a);
    isa.silu(&mut b);
    check("silu", a, b);
    let (mut a, mut b) = (input.clone(), input.clone());
    pocket_tts_simd::elu(&mut a, 1.0);
    isa.elu(&mut b, 1.0);
    check("elu", a, b);
    let (mut a, mut b) = (input.clone(), input.clone());
    pocket_tts_simd::exp(&mut a);
    isa.exp(&mut b);
    check("exp", a, b);
    let (mut a, mut b) = (input.clone(), input.clone());
    pocket_tts_simd::softmax_rows(&mut a, 250);
    isa.softmax_rows(&mut b, 250);
    check("softmax_rows", a, b);
    let (mut a, mut b) = (vec![0.0; 1000], vec![0.0; 1000]);
    pocket_tts_simd::layer_norm_rows(&input, &mut a, 100, None, None, 1e-5);
    isa.layer_norm_rows(&input, &mut b, 100, None, None, 1e-5);
    check("layer_norm_rows", a, b);
}

#[test]
fn empty_inputs_are_no_ops() {
    for isa in Isa::ALL {
        let mut e: [f32; 0] = [];
        isa.gelu_tanh(&mut e);
        isa.silu(&mut e);
        isa.elu(&mut e, 1.0);
        isa.exp(&mut e);
        isa.softmax_rows(&mut e, 0);
        isa.softmax_rows(&mut e, 5);
        isa.layer_norm_rows(&[], &mut [], 0, None, None, 1e-5);
        isa.layer_norm_rows(&[], &mut [], 4, Some(&[1.0; 4]), None, 1e-5);
    }
}

#[test]
fn unsupported_isa_requests_fall_back() {
    // Running every ISA (supported or not) must work and agree with the reference.
    let input: Vec<f32> = (0..37).map(|i| i as f32 * 0.3 - 5.0).collect();
    let mut want = input.clone();
    scalar::gelu_tanh(&mut want);
    for isa in Isa::ALL {
        let mut got = input.clone();
        isa.gelu_tanh(&mut got);
        let tol = Tol {
            abs: 1e-6,
            rel: 0.0,
            ulps: 2,
        };
        assert_close(
            "gelu_tanh (fallback)",
            isa.resolve(),
            &input,
            &got,
            &want,
            tol,
        );
    }
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "not a multiple of cols")]
fn softmax_panics_on_ragged_buffer() {
    let mut x = vec![0.0; 10];
    pocket_tts_simd::softmax_rows(&mut x, 3);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "cols == 0")]
fn softmax_panics_on_zero_cols_with_data() {
    let mut x = vec![0.0; 2];
    pocket_tts_simd::softmax_rows(&mut x, 0);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "out has")]
fn layer_norm_panics_on_out_length() {
    let x = vec![0.0; 8];
    let mut out = vec![0.0; 4];
    pocket_tts_simd::layer_norm_rows(&x, &mut out, 4, None, None, 1e-5);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "weight has")]
fn layer_norm_panics_on_weight_length() {
    let x = vec![0.0; 8];
    let mut out = vec![0.0; 8];
    pocket_tts_simd::layer_norm_rows(&x, &mut out, 4, Some(&[1.0; 3]), None, 1e-5);
}

#[test]
#[cfg_attr(
    target_family = "wasm",
    ignore = "a panic aborts a WebAssembly test binary"
)]
#[should_panic(expected = "bias has")]
fn scalar_layer_norm_panics_on_bias_length() {
    let x = vec![0.0; 8];
    let mut out = vec![0.0; 8];
    scalar::layer_norm_rows(&x, &mut out, 4, None, Some(&[0.0; 5]), 1e-5);
}

#[test]
fn expected_isas_are_exercised() {
    let isas = available();
    println!(
        "available ISAs: {isas:?}; dispatching to {}",
        pocket_tts_simd::detected()
    );
    assert_eq!(isas[0], Isa::Scalar);
    #[cfg(target_arch = "aarch64")]
    assert!(isas.contains(&Isa::Neon), "NEON is baseline on aarch64");
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        assert!(isas.contains(&Isa::Avx512) && isas.contains(&Isa::Avx2));
    }
}
