//! How much qemu-aarch64 charges per floating-point multiply-add, by instruction form
//! (scripts/aarch64/qemu_fma_cost.sh builds and runs it). Each loop keeps 8 independent
//! accumulators busy with one instruction form; the time per instruction and per lane
//! shows whether emulated time follows instructions (as on hardware) or lanes.
use std::arch::aarch64::*;
use std::hint::black_box;
use std::time::Instant;

const ACC: usize = 8;

#[target_feature(enable = "neon")]
fn fmla_vector(n: usize) -> f32 {
    let (x, y) = (vdupq_n_f32(black_box(1.0001)), vdupq_n_f32(black_box(0.5)));
    let mut acc = [vdupq_n_f32(0.0); ACC];
    for _ in 0..n {
        for a in acc.iter_mut() {
            *a = vfmaq_f32(*a, x, y);
        }
    }
    acc.iter().map(|&a| vaddvq_f32(a)).sum()
}

#[target_feature(enable = "neon")]
fn fmla_by_element(n: usize) -> f32 {
    let (x, y) = (vdupq_n_f32(black_box(1.0001)), black_box(0.5f32));
    let mut acc = [vdupq_n_f32(0.0); ACC];
    for _ in 0..n {
        for a in acc.iter_mut() {
            *a = vfmaq_n_f32(*a, x, y);
        }
    }
    acc.iter().map(|&a| vaddvq_f32(a)).sum()
}

#[target_feature(enable = "neon")]
fn fmul_then_fadd(n: usize) -> f32 {
    let (x, y) = (vdupq_n_f32(black_box(1.0001)), vdupq_n_f32(black_box(0.5)));
    let mut acc = [vdupq_n_f32(0.0); ACC];
    for _ in 0..n {
        for a in acc.iter_mut() {
            *a = vaddq_f32(*a, vmulq_f32(x, y));
        }
    }
    acc.iter().map(|&a| vaddvq_f32(a)).sum()
}

fn fmadd_scalar(n: usize) -> f32 {
    let (x, y) = (black_box(1.0001f32), black_box(0.5f32));
    let mut acc = [0f32; ACC];
    for _ in 0..n {
        for a in acc.iter_mut() {
            *a = x.mul_add(y, *a);
        }
    }
    acc.iter().sum()
}

fn time(name: &str, lanes: usize, f: impl Fn(usize) -> f32) {
    let n = 1_000_000;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        black_box(f(n));
        best = best.min(t.elapsed().as_secs_f64());
    }
    let per_insn = best * 1e9 / (ACC * n) as f64;
    println!(
        "{name:28} {per_insn:6.2} ns per instruction, {:6.2} ns per multiply-add",
        per_insn / lanes as f64
    );
}

fn main() {
    // SAFETY (all three): NEON is part of the aarch64 baseline.
    time("fmla v.4s (vector)", 4, |n| unsafe { fmla_vector(n) });
    time("fmla v.4s, v.s[0] (element)", 4, |n| unsafe { fmla_by_element(n) });
    time("fmul + fadd v.4s (unfused)", 4, |n| unsafe { fmul_then_fadd(n) });
    time("fmadd s (scalar)", 1, fmadd_scalar);
}
