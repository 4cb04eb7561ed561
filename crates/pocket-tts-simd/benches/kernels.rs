//! Scalar reference vs SIMD kernels on the shapes Pocket TTS uses.
//!
//! `cargo bench -p pocket-tts-simd [-- FILTER]` prints, for every case and every ISA
//! available on this CPU, the median time per call and the speedup over the scalar
//! reference (`Isa::Scalar`, which computes in f64). "dispatch" is the public function
//! (ISA from `detected()`, honouring `POCKET_TTS_SIMD`); "naive f32 loop" is a plain f32
//! loop over `std` math functions, for context.
//!
//! A std-only harness (`harness = false`) rather than criterion keeps the crate free of
//! dependencies. Without `--bench` on the command line (e.g. `cargo test --all-targets`)
//! every case runs once as a smoke test.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pocket_tts_simd::{available, detected, Isa};

/// Deterministic inputs in `[lo, hi)` (SplitMix64).
fn data(n: usize, lo: f32, hi: f32, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            lo + (hi - lo) * ((z >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// Median time of one `run` call: `batches` batches, each `setup` (untimed) followed by
/// `reps` timed calls of `run`.
fn measure<T>(
    batches: usize,
    reps: usize,
    state: &mut T,
    mut setup: impl FnMut(&mut T),
    mut run: impl FnMut(&mut T),
) -> Duration {
    let mut samples: Vec<Duration> = (0..batches)
        .map(|_| {
            setup(state);
            let t = Instant::now();
            for _ in 0..reps {
                run(black_box(&mut *state));
            }
            t.elapsed() / reps as u32
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

/// What a row of the table measures.
#[derive(Copy, Clone)]
enum Imp {
    /// The kernel on an explicit ISA (`Isa::Scalar` is the f64 reference).
    Isa(Isa),
    /// The public dispatching function (ISA from `detected()`).
    Dispatch,
    /// A plain f32 loop over `std` math functions (what a straightforward port, or a
    /// generic tensor library's unary op, does); for context only.
    NaiveF32,
}

fn label(imp: Imp) -> String {
    match imp {
        Imp::Isa(isa) => isa.to_string(),
        Imp::Dispatch => format!("dispatch ({})", detected()),
        Imp::NaiveF32 => "naive f32 loop".into(),
    }
}

fn naive_gelu(x: &mut [f32]) {
    let k = (2.0f32 / std::f32::consts::PI).sqrt();
    for v in x.iter_mut() {
        *v = 0.5 * *v * (1.0 + (k * (*v + 0.044715 * *v * *v * *v)).tanh());
    }
}

fn naive_elu(x: &mut [f32]) {
    for v in x.iter_mut() {
        if *v <= 0.0 {
            *v = v.exp_m1();
        }
    }
}

fn naive_silu(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v /= 1.0 + (-*v).exp();
    }
}

fn naive_softmax(x: &mut [f32], cols: usize) {
    for row in x.chunks_exact_mut(cols) {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0f32;
        for v in row.iter_mut() {
            *v = (*v - m).exp();
            sum += *v;
        }
        let inv = 1.0 / sum;
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

fn naive_layer_norm(x: &[f32], out: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let n = x.len() as f32;
    let mean = x.iter().sum::<f32>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    let rstd = 1.0 / (var + eps).sqrt();
    for (((o, &v), &w), &b) in out.iter_mut().zip(x).zip(w).zip(b) {
        *o = (v - mean) * rstd * w + b;
    }
}

struct Case {
    name: &'static str,
    elems: usize,
    /// Returns the median time per call for `(implementation, batches)`.
    run: Box<dyn Fn(Imp, usize) -> Duration>,
}

/// In-place element-wise kernel over `[rows, cols]`; the input is restored before each
/// timed call (untimed), so every call sees the same data.
fn elementwise(name: &'static str, rows: usize, cols: usize, f: fn(Imp, &mut [f32])) -> Case {
    let n = rows * cols;
    Case {
        name,
        elems: n,
        run: Box::new(move |imp, batches| {
            let src = data(n, -6.0, 6.0, 1);
            let mut x = src.clone();
            measure(
                batches,
                1,
                &mut x,
                |x| x.copy_from_slice(&src),
                |x| f(imp, x),
            )
        }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|a| a == "--bench");
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let batches = |n: usize| if full { n } else { 1 };

    let cases = vec![
        elementwise("gelu_tanh [64 x 1920]", 64, 1920, |imp, x| match imp {
            Imp::Isa(isa) => isa.gelu_tanh(x),
            Imp::Dispatch => pocket_tts_simd::gelu_tanh(x),
            Imp::NaiveF32 => naive_gelu(x),
        }),
        elementwise("elu [64 x 1920]", 64, 1920, |imp, x| match imp {
            Imp::Isa(isa) => isa.elu(x, 1.0),
            Imp::Dispatch => pocket_tts_simd::elu(x, 1.0),
            Imp::NaiveF32 => naive_elu(x),
        }),
        elementwise("silu [64 x 1920]", 64, 1920, |imp, x| match imp {
            Imp::Isa(isa) => isa.silu(x),
            Imp::Dispatch => pocket_tts_simd::silu(x),
            Imp::NaiveF32 => naive_silu(x),
        }),
        Case {
            name: "softmax_rows [16 x 250]",
            elems: 16 * 250,
            run: Box::new(|imp, b| {
                let src = data(16 * 250, -8.0, 8.0, 2);
                let mut x = src.clone();
                // 20 calls per sample (inputs are probabilities after the first one,
                // which does not change the cost).
                measure(
                    b,
                    20,
                    &mut x,
                    |x| x.copy_from_slice(&src),
                    |x| match imp {
                        Imp::Isa(isa) => isa.softmax_rows(x, 250),
                        Imp::Dispatch => pocket_tts_simd::softmax_rows(x, 250),
                        Imp::NaiveF32 => naive_softmax(x, 250),
                    },
                )
            }),
        },
        Case {
            name: "layer_norm_rows [1 x 1024]",
            elems: 1024,
            run: Box::new(|imp, b| {
                let x = data(1024, -3.0, 5.0, 3);
                let w = data(1024, 0.5, 1.5, 4);
                let bias = data(1024, -1.0, 1.0, 5);
                let (wb, bb) = (Some(&w[..]), Some(&bias[..]));
                let mut out = vec![0.0f32; 1024];
                measure(
                    b,
                    100,
                    &mut out,
                    |_| {},
                    |out| match imp {
                        Imp::Isa(isa) => isa.layer_norm_rows(&x, out, 1024, wb, bb, 1e-5),
                        Imp::Dispatch => {
                            pocket_tts_simd::layer_norm_rows(&x, out, 1024, wb, bb, 1e-5)
                        }
                        Imp::NaiveF32 => naive_layer_norm(&x, out, &w, &bias, 1e-5),
                    },
                )
            }),
        },
    ];

    let mut imps: Vec<Imp> = available().into_iter().map(Imp::Isa).collect();
    imps.push(Imp::Dispatch);
    imps.push(Imp::NaiveF32);

    println!(
        "{:<28} {:<16} {:>12} {:>9} {:>8}",
        "case", "impl", "median", "ns/elem", "speedup"
    );
    for case in &cases {
        if filter.as_deref().is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        let mut scalar_time = None;
        for &imp in &imps {
            // Warm-up (page faults, frequency), then measure.
            (case.run)(imp, 1);
            let t = (case.run)(imp, batches(101));
            let base = *scalar_time.get_or_insert(t);
            println!(
                "{:<28} {:<16} {:>12.2?} {:>9.3} {:>7.1}x",
                case.name,
                label(imp),
                t,
                t.as_nanos() as f64 / case.elems as f64,
                base.as_secs_f64() / t.as_secs_f64()
            );
        }
    }

    // The memory-bound GEMV: f32 weights against 16-bit weights (`HalfRows`, f16 and bf16,
    // half the bytes), int8 weights (`QuantizedRows`, a quarter of the bytes) and 4-bit
    // blocks (`Q4Rows`, 4.5 bits a weight), on the
    // matrices of the FlowLM transformer's step, in order: 6 layers ×
    // (in_proj [3072, 1024], out_proj [1024, 1024], linear1 [4096, 1024], linear2
    // [1024, 4096]), 75.5 M weights (302 MB in f32, 75.5 MB in int8: larger than any
    // cache, like the real step), one thread, on every SIMD ISA of this CPU. The variants
    // are measured interleaved (one sample of each in turn, `ROUNDS` times), so that a
    // change of clock or of the neighbours' load hits them alike; medians and the spread
    // (min–max) of the per-pass times are printed.
    if filter
        .as_deref()
        .is_none_or(|f| "gemv f32 vs int8".contains(f))
    {
        flow_lm_layers(if full { 21 } else { 1 });
    }
}

/// One pass over the FlowLM layers with one kernel and weight format on one ISA.
type Pass<'a> = Box<dyn FnMut(&mut [f32]) + 'a>;

/// See the "gemv f32 vs int8" comment in `main`.
fn flow_lm_layers(rounds: usize) {
    use pocket_tts_simd::{HalfKind, HalfRows, Q4Rows, QuantizedRows, QuantizedVector};

    let shapes = [(3072, 1024), (1024, 1024), (4096, 1024), (1024, 4096)];
    let mats: Vec<(Vec<f32>, QuantizedRows)> = (0..6)
        .flat_map(|l| shapes.iter().enumerate().map(move |(i, &s)| (l * 4 + i, s)))
        .map(|(seed, (rows, cols))| {
            let w = data(rows * cols, -1.0, 1.0, 100 + seed as u64);
            let q = QuantizedRows::quantize(&w, rows, cols);
            (w, q)
        })
        .collect();
    let x = data(4096, -1.0, 1.0, 12);
    let mut y = vec![0f32; 4096];
    let weights: usize = mats.iter().map(|(w, _)| w.len()).sum();
    let q_bytes: usize = mats.iter().map(|(_, q)| q.bytes()).sum();
    let xq = [1024, 4096].map(|n| {
        let mut v = QuantizedVector::default();
        v.quantize(&x[..n]);
        v
    });
    let toks = [1024, 4096].map(|n| {
        (0..41u64)
            .map(|t| {
                let mut v = QuantizedVector::default();
                v.quantize(&data(n, -1.0, 1.0, 200 + t));
                v
            })
            .collect::<Vec<_>>()
    });
    let halves: Vec<[HalfRows; 2]> = mats
        .iter()
        .map(|(w, q)| {
            [HalfKind::F16, HalfKind::Bf16].map(|k| HalfRows::from_f32(w, q.rows(), q.cols(), k))
        })
        .collect();
    let q4s: Vec<Q4Rows> = mats
        .iter()
        .map(|(w, q)| Q4Rows::quantize(w, q.rows(), q.cols()))
        .collect();
    let q4_bytes: usize = q4s.iter().map(Q4Rows::bytes).sum();
    let isas: Vec<Isa> = available()
        .into_iter()
        .filter(|&i| i != Isa::Scalar)
        .collect();
    // (name, ISA, bytes of weights read per pass, pass)
    let mut variants: Vec<(&str, Isa, usize, Pass)> = Vec::new();
    for &isa in &isas {
        let (mats, x) = (&mats, &x);
        variants.push((
            "gemv f32",
            isa,
            4 * weights,
            Box::new(move |y| {
                for (w, q) in mats {
                    let (rows, cols) = (q.rows(), q.cols());
                    isa.gemv(w, &x[..cols], &mut y[..rows], None, false);
                }
            }),
        ));
        variants.push((
            "gemv_i8",
            isa,
            q_bytes,
            Box::new(move |y| {
                for (_, q) in mats {
                    let (rows, cols) = (q.rows(), q.cols());
                    isa.gemv_i8(q, 0, &x[..cols], &mut y[..rows], None, false);
                }
            }),
        ));
        for (k, name) in ["gemv_half f16", "gemv_half bf16"].into_iter().enumerate() {
            let halves = &halves;
            variants.push((
                name,
                isa,
                2 * weights,
                Box::new(move |y| {
                    for h in halves {
                        let h = &h[k];
                        let (rows, cols) = (h.rows(), h.cols());
                        isa.gemv_half(h, 0, &x[..cols], &mut y[..rows], None, false);
                    }
                }),
            ));
        }
        let xq = &xq;
        variants.push((
            "gemv_i8_q8",
            isa,
            q_bytes,
            Box::new(move |y| {
                for (_, q) in mats {
                    let xq = &xq[usize::from(q.cols() == 4096)];
                    isa.gemv_i8_q8(q, 0, xq, &mut y[..q.rows()], None, false);
                }
            }),
        ));
        let q4s = &q4s;
        variants.push((
            "gemv_q4",
            isa,
            q4_bytes,
            Box::new(move |y| {
                for q in q4s {
                    let xq = &xq[usize::from(q.cols() == 4096)];
                    isa.gemv_q4(q, 0, xq, &mut y[..q.rows()], None, false);
                }
            }),
        ));
        variants.push((
            "gemv_q4 in L2 (1024²)",
            isa,
            72 * q4s[1].bytes(),
            Box::new(move |y| {
                let q = &q4s[1];
                for _ in 0..72 {
                    isa.gemv_q4(q, 0, &xq[0], &mut y[..1024], None, false);
                }
            }),
        ));
        // The text prefill of `--quantize`: 41 tokens (the Python benchmark's text) through
        // every layer, 16 KiB of weight rows at a time as `fast/flow_lm/par.rs` drives it.
        let toks = &toks;
        variants.push((
            "gemv_i8_q8_tokens ×41",
            isa,
            q_bytes,
            Box::new(move |y| {
                for (_, q) in mats {
                    let xs = &toks[usize::from(q.cols() == 4096)];
                    let block = (16 * 1024 / q.cols()).max(1);
                    let mut r0 = 0;
                    while r0 < q.rows() {
                        let nr = block.min(q.rows() - r0);
                        isa.gemv_i8_q8_tokens(q, r0, nr, xs, &mut y[..xs.len() * nr]);
                        r0 += nr;
                    }
                }
            }),
        ));
        variants.push((
            "gemv_q4_tokens ×41",
            isa,
            q4_bytes,
            Box::new(move |y| {
                for q in q4s {
                    let xs = &toks[usize::from(q.cols() == 4096)];
                    let block = (2 * 16 * 1024 / q.cols()).max(1);
                    let mut r0 = 0;
                    while r0 < q.rows() {
                        let nr = block.min(q.rows() - r0);
                        isa.gemv_q4_tokens(q, r0, nr, xs, &mut y[..xs.len() * nr]);
                        r0 += nr;
                    }
                }
            }),
        ));
        // The compute side: one out_proj [1024, 1024] (1 MiB in int8, L2-resident) 72
        // times, the number of weights of the FlowLM layers (72 Mi).
        variants.push((
            "gemv_i8_q8 in L2 (1024²)",
            isa,
            72 * mats[1].1.bytes(),
            Box::new(move |y| {
                let q = &mats[1].1;
                for _ in 0..72 {
                    isa.gemv_i8_q8(q, 0, &xq[0], &mut y[..1024], None, false);
                }
            }),
        ));
    }
    // Warm-up (page faults, frequency), then `rounds` interleaved samples of 2 passes.
    let mut samples = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..=rounds {
        for (v, s) in variants.iter_mut().zip(&mut samples) {
            let t = measure(1, 2, &mut y, |_| {}, |y| (v.3)(y));
            if round > 0 {
                s.push(t);
            }
        }
    }
    println!(
        "{:<28} {:<8} {:>12} {:>22} {:>9}",
        "gemv (FlowLM layers, 1 thr)", "isa", "median", "min .. max", "GB/s"
    );
    for (v, s) in variants.iter().zip(&mut samples) {
        s.sort();
        let t = s[s.len() / 2];
        println!(
            "{:<28} {:<8} {:>12.2?} {:>22} {:>9.1}",
            v.0,
            v.1.name(),
            t,
            format!("{:.2?} .. {:.2?}", s[0], s[s.len() - 1]),
            v.2 as f64 / t.as_secs_f64() / 1e9
        );
    }
}
