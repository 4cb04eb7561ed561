//! `gemv` / `gemv_t` on every ISA available on this machine against `f64` sums, over
//! shapes that exercise every row-block and column-tail path, and `Team` row splits.

use crate::common;

use common::{data, tol};
use pocket_tts_simd::{available, split_range, Isa, Team};

const SHAPES: &[(usize, usize)] = &[
    (1, 1),
    (1, 17),
    (3, 5),
    (4, 16),
    (7, 31),
    (8, 64),
    (9, 15),
    (13, 33),
    (16, 100),
    (31, 129),
    (64, 224),
    (37, 1024),
    (12, 4096),
];

#[test]
fn gemv_matches_f64_on_every_isa() {
    for isa in available() {
        for &(rows, cols) in SHAPES {
            let w = data(rows * cols, 1 + rows as u64);
            let x = data(cols, 2 + cols as u64);
            let b = data(rows, 3);
            let y0 = data(rows, 4);
            for (bias, acc) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut y = y0.clone();
                isa.gemv(&w, &x, &mut y, bias.then_some(&b[..]), acc);
                for r in 0..rows {
                    let mut want: f64 = (0..cols)
                        .map(|c| f64::from(w[r * cols + c]) * f64::from(x[c]))
                        .sum();
                    let mag: f64 = (0..cols)
                        .map(|c| (f64::from(w[r * cols + c]) * f64::from(x[c])).abs())
                        .sum::<f64>()
                        + 2.0;
                    if bias {
                        want += f64::from(b[r]);
                    }
                    if acc {
                        want += f64::from(y0[r]);
                    }
                    let err = (f64::from(y[r]) - want).abs();
                    assert!(
                        err <= tol(cols, mag),
                        "{isa} gemv {rows}x{cols} bias {bias} acc {acc} row {r}: {} vs {want} (err {err:e})",
                        y[r]
                    );
                }
            }
        }
    }
}

#[test]
fn gemv_t_matches_f64_on_every_isa() {
    for isa in available() {
        for &(rows, cols) in SHAPES.iter().chain(&[(600, 64), (5, 80), (2, 48)]) {
            let m = data(rows * cols, 5 + rows as u64);
            let a = data(rows, 6);
            let y0 = data(cols, 7);
            for acc in [false, true] {
                let mut y = y0.clone();
                isa.gemv_t(&a, &m, &mut y, acc);
                for c in 0..cols {
                    let mut want: f64 = (0..rows)
                        .map(|r| f64::from(a[r]) * f64::from(m[r * cols + c]))
                        .sum();
                    let mag: f64 = (0..rows)
                        .map(|r| (f64::from(a[r]) * f64::from(m[r * cols + c])).abs())
                        .sum::<f64>()
                        + 1.0;
                    if acc {
                        want += f64::from(y0[c]);
                    }
                    let err = (f64::from(y[c]) - want).abs();
                    assert!(
                        err <= tol(rows, mag),
                        "{isa} gemv_t {rows}x{cols} acc {acc} col {c}: {} vs {want} (err {err:e})",
                        y[c]
                    );
                }
            }
        }
    }
}

#[test]
fn gemv_split_across_a_team_equals_one_call() {
    let (rows, cols) = (1000, 96);
    let w = data(rows * cols, 9);
    let x = data(cols, 10);
    let mut whole = vec![0f32; rows];
    pocket_tts_simd::gemv(&w, &x, &mut whole, None, false);
    for threads in 1..4 {
        let team = Team::new(threads);
        let mut y = vec![0f32; rows];
        let parts: Vec<std::sync::Mutex<&mut [f32]>> = {
            let mut rest: &mut [f32] = &mut y;
            let mut v = Vec::new();
            for i in 0..threads {
                let r = split_range(rows, threads, 8, i);
                let (head, tail) = rest.split_at_mut(r.len());
                v.push(std::sync::Mutex::new(head));
                rest = tail;
            }
            v
        };
        team.run(|i| {
            let r = split_range(rows, threads, 8, i);
            let mut out = parts[i].lock().unwrap();
            pocket_tts_simd::gemv(&w[r.start * cols..r.end * cols], &x, &mut out, None, false);
        });
        drop(parts);
        // Same kernel, same row blocks: bit-identical.
        assert_eq!(y, whole, "threads {threads}");
    }
    assert!(Isa::Scalar.is_supported());
}
