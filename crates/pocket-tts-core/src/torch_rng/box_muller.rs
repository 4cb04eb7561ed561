//! torch's float32 Box-Muller transform on 16 uniforms (torch 2.15.0
//! `aten/src/ATen/native/cpu/DistributionTemplates.h`, the AVX2 `NormalFill16<float>`),
//! one lane at a time. Its logarithm, sine and cosine are the Cephes single-precision
//! polynomials of `avx_mathfun.h` (`log256_ps`, `sincos256_ps`); the operations below are
//! the ones the x86-64 wheel executes, in its order, with the multiply-adds its compiler
//! fused into single roundings (`mul_add`, read from the machine code of
//! `NormalFill16<float, true>::operator()` in `libtorch_cpu.so`). Every step is an IEEE
//! operation, so the result is the same bits on any machine.

// The constants of `avx_mathfun.h`, as the float bits the wheel loads.
/// Smallest normal float: `log256_ps` cuts denormals off to it.
const MIN_NORM_POS: f32 = f32::MIN_POSITIVE;
/// `cephes_SQRTHF`.
const SQRT_HALF: f32 = f32::from_bits(0x3f35_04f3);
/// `cephes_log_p0` … `cephes_log_p8`.
const LOG_P: [f32; 9] = [
    f32::from_bits(0x3d90_21bb),
    f32::from_bits(0xbdeb_d1b8),
    f32::from_bits(0x3def_251a),
    f32::from_bits(0xbdfe_5d4f),
    f32::from_bits(0x3e11_e9bf),
    f32::from_bits(0xbe2a_ae50),
    f32::from_bits(0x3e4c_ceac),
    f32::from_bits(0xbe7f_fffc),
    f32::from_bits(0x3eaa_aaaa),
];
/// `cephes_log_q1`, `cephes_log_q2` (ln 2 split in two).
const LOG_Q1: f32 = f32::from_bits(0xb95e_8083);
const LOG_Q2: f32 = f32::from_bits(0x3f31_8000);
/// `cephes_FOPI`: 4 / π.
const FOPI: f32 = f32::from_bits(0x3fa2_f983);
/// `minus_cephes_DP1` … `DP3`: −π/4 split in three.
const MINUS_DP1: f32 = f32::from_bits(0xbf49_0000);
const MINUS_DP2: f32 = f32::from_bits(0xb97d_a000);
const MINUS_DP3: f32 = f32::from_bits(0xb322_2169);
/// `sincof_p0` … `p2`.
const SIN_P: [f32; 3] = [
    f32::from_bits(0xb94c_a1f9),
    f32::from_bits(0x3c08_839e),
    f32::from_bits(0xbe2a_aaa3),
];
/// `coscof_p0` … `p2`.
const COS_P: [f32; 3] = [
    f32::from_bits(0x37cc_f5ce),
    f32::from_bits(0xbab6_061a),
    f32::from_bits(0x3d2a_aaa5),
];
/// `2.0f * c10::pi<double>` rounded to float.
const TWO_PI: f32 = f32::from_bits(0x40c9_0fdb);

/// `log256_ps` on one lane (`x > 0`; NaN for `x <= 0`).
fn log_ps(x: f32) -> f32 {
    let invalid = x <= 0.0;
    let x = x.max(MIN_NORM_POS);
    let bits = x.to_bits();
    let exponent = (bits >> 23) as i32 - 0x7f;
    let mut x = f32::from_bits((bits & !0x7f80_0000) | 0.5f32.to_bits());
    let mut e = exponent as f32 + 1.0;
    let below = x < SQRT_HALF;
    let tmp = if below { x } else { 0.0 };
    x += -1.0;
    e -= if below { 1.0 } else { 0.0 };
    x += tmp;
    let z = x * x;
    let mut y = LOG_P[0].mul_add(x, LOG_P[1]);
    for &p in &LOG_P[2..] {
        y = y.mul_add(x, p);
    }
    let t = e * LOG_Q1;
    y *= x;
    y = y.mul_add(z, t);
    y = (-z).mul_add(0.5, y);
    x += y;
    let r = e.mul_add(LOG_Q2, x);
    if invalid {
        f32::NAN
    } else {
        r
    }
}

/// `sincos256_ps` on one lane: `(sin θ, cos θ)`.
fn sincos_ps(theta: f32) -> (f32, f32) {
    let sign_sin = theta.to_bits() & 0x8000_0000;
    let x = theta.abs();
    let j = ((x * FOPI) as i32).wrapping_add(1) & !1;
    let y = j as f32;
    let swap_sin = ((j & 4) as u32) << 29;
    let poly_sin = j & 2 == 0;
    let sign_cos = ((!(j.wrapping_sub(2)) & 4) as u32) << 29;
    let sign_sin = sign_sin ^ swap_sin;
    let mut x = y.mul_add(MINUS_DP1, x);
    x = MINUS_DP2.mul_add(y, x);
    x = y.mul_add(MINUS_DP3, x);
    let z = x * x;
    let half_z = z * 0.5;
    // cos polynomial (0 <= x <= π/4)
    let mut yc = COS_P[0].mul_add(z, COS_P[1]);
    yc = yc.mul_add(z, COS_P[2]);
    yc *= z;
    yc = z.mul_add(yc, -half_z);
    yc += 1.0;
    // sin polynomial
    let mut ys = SIN_P[0].mul_add(z, SIN_P[1]);
    ys = ys.mul_add(z, SIN_P[2]);
    ys *= z;
    ys = x.mul_add(ys, x);
    let ysin2 = if poly_sin { ys } else { 0.0 };
    let ysin1 = if poly_sin { 0.0 } else { yc };
    let yc = yc - ysin1;
    let ys = ys - ysin2;
    let sin = ysin2 + ysin1;
    let cos = ys + yc;
    (
        f32::from_bits(sin.to_bits() ^ sign_sin),
        f32::from_bits(cos.to_bits() ^ sign_cos),
    )
}

/// torch's `NormalFill16<float>` in place: `data` holds 16 uniforms in `[0, 1)`; values
/// `j` and `j + 8` (`j < 8`) become `mean + std · r · cos θ` and `mean + std · r · sin θ`
/// with `r = sqrt(−2 log(1 − data[j]))`, `θ = 2π · data[j + 8]`.
pub fn box_muller_16(data: &mut [f32; 16], mean: f32, std: f32) {
    for j in 0..8 {
        let u1 = 1.0 - data[j];
        let u2 = data[j + 8];
        let radius = (-2.0 * log_ps(u1)).sqrt();
        let theta = TWO_PI * u2;
        let (sin, cos) = sincos_ps(theta);
        data[j] = (radius * cos).mul_add(std, mean);
        data[j + 8] = (radius * sin).mul_add(std, mean);
    }
}
