//! torch's default CPU generator, reproduced draw for draw: the noise the reference's flow
//! head starts from after `torch.manual_seed(seed)` (reference:
//! `FlowLMModel._sample_next_latent`, which fills a float32 `[1, ldim]` tensor per frame
//! with `torch.nn.init.normal_`, or `torch.nn.init.trunc_normal_` when `noise_clamp` is set).
//!
//! Each step follows torch 2.15.0 (the version of the reference's venv; `torch.__version__`
//! `2.15.0+cu132`, x86-64 wheel built with GCC 13.3):
//! - [`Mt19937`]: `at::mt19937` (`aten/src/ATen/core/MT19937RNGEngine.h`), seeded by
//!   `CPUGeneratorImpl::set_current_seed` with the seed's low 32 bits; `random()` is one
//!   32-bit draw, `random64()` two (the first is the high half).
//! - uniform floats: `at::uniform_real_distribution<float>` (`core/DistributionsHelper.h`,
//!   `core/TransformationHelper.h`): the draw's low 24 bits times 2⁻²⁴, then
//!   `x · (to − from) + from` as one fused multiply-add (the wheel's AVX2 kernel contracts
//!   it), and `uniform_` maps a value equal to `to` back to `from`
//!   (`native/cpu/DistributionTemplates.h`, `uniform_kernel`).
//! - `normal_` on 16 or more contiguous float32 values (`normal_fill` with the AVX2
//!   `NormalFill16<float>`; torch registers no AVX-512 `normal_stub`, so AVX-512 machines
//!   take it too): all values drawn uniform first, then the Box-Muller transform on groups
//!   of 16 (`u1 = 1 − data[j]`, `u2 = data[j + 8]`, `j < 8`), with a size that is not a
//!   multiple of 16 redrawing its last 16 values. The logarithm, sine and cosine are
//!   `avx_mathfun.h`'s Cephes polynomials (`log256_ps`, `sincos256_ps`) evaluated with the
//!   multiply-adds the wheel's compiler fused (read from its machine code); see [`box_muller`].
//! - `normal_` on fewer than 16 values: `at::normal_distribution<double>` per value
//!   (Box-Muller in double on two 53-bit uniforms, `log1p`, the sine kept for the next
//!   value), then cast to float.
//! - `trunc_normal_` (`torch/nn/init.py`, `_no_grad_trunc_normal_`, rewritten in torch 2.10):
//!   when the bounds hold more than 0.3 of the mass, `normal_` and redraw the values outside
//!   `[a, b]` (bounds cast to float) from fresh full-size `normal_` tensors until none is
//!   left; else uniform proposals on `[a, b]` accepted by `log(U) ≤ log pdf`.
//!
//! Exact on x86-64 with AVX2 (what the reference runs here), where the mathematics are
//! plain IEEE operations: the uniform draws, the Box-Muller polynomials, the rejection tests.
//! One function is not: the uniform-proposal branch of `trunc_normal_` (clamps below 0.39
//! standard deviations) takes `log` of float tensors through torch's vectorized library;
//! ours is the correctly rounded logarithm, so an acceptance test could only differ when
//! `log(U)` and the log-density agree to the last bit.

mod box_muller;
mod mt19937;
mod state;

pub use box_muller::box_muller_16;
pub use mt19937::Mt19937;
pub use state::{TorchRngState, TORCH_RNG_STATE_BYTES};

/// `(1 + erf(x / √2)) / 2 > 0.65`, i.e. the mass of `N(0, 1)` in `[−x, x]` is above 0.3,
/// exactly when `x` exceeds this value (`√2 · erfinv(0.3)`): `trunc_normal_`'s choice between
/// its rejection and uniform-proposal branches for bounds symmetric about the mean.
const REJECTION_BRANCH_MIN_HALF_WIDTH: f64 = 0.385_320_466_407_567_6;

/// torch's default CPU generator (`at::CPUGeneratorImpl`) and the float32 distributions the
/// reference samples its noise with. Buffers of the truncated normal are kept between calls:
/// after the first call of a size, sampling allocates nothing.
#[derive(Clone)]
pub struct TorchGenerator {
    engine: Mt19937,
    /// `next_double_normal_sample_`: the second value of the last double Box-Muller pair.
    next_double_normal: Option<f64>,
    /// `next_float_normal_sample_`: carried from and back to a [`TorchRngState`]; none of
    /// the draws here uses it.
    next_float_normal: Option<f32>,
    scratch: Vec<f32>,
    candidates: Vec<f32>,
    pending: Vec<bool>,
}

impl std::fmt::Debug for TorchGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TorchGenerator").finish_non_exhaustive()
    }
}

impl TorchGenerator {
    /// The default generator after `torch.manual_seed(seed)`. torch keeps the seed's low
    /// 32 bits (seeds equal modulo 2³² give the same draws).
    pub fn manual_seed(seed: u64) -> Self {
        Self::from_state(&TorchRngState::manual_seed(seed))
    }

    /// The generator `torch.set_rng_state` would make of `state`.
    pub fn from_state(state: &TorchRngState) -> Self {
        Self {
            engine: (*state.engine).clone(),
            next_double_normal: state.next_double_normal,
            next_float_normal: state.next_float_normal,
            scratch: Vec::new(),
            candidates: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Where the generator stands (`torch.get_rng_state()`).
    pub fn state(&self) -> TorchRngState {
        TorchRngState {
            engine: Box::new(self.engine.clone()),
            next_double_normal: self.next_double_normal,
            next_float_normal: self.next_float_normal,
        }
    }

    /// One 32-bit draw (`CPUGeneratorImpl::random`).
    pub fn random(&mut self) -> u32 {
        self.engine.next_u32()
    }

    /// One 64-bit draw (`CPUGeneratorImpl::random64`: two 32-bit draws, the first high).
    pub fn random64(&mut self) -> u64 {
        let hi = self.engine.next_u32();
        let lo = self.engine.next_u32();
        (u64::from(hi) << 32) | u64::from(lo)
    }

    /// A float uniform in `[from, to)` as `at::uniform_real_distribution<float>` draws it.
    fn uniform_f32(&mut self, from: f32, to: f32) -> f32 {
        let x = (self.random() & 0x00ff_ffff) as f32 * (1.0 / 16_777_216.0);
        x.mul_add(to - from, from)
    }

    /// A double uniform in `[0, 1)` (`at::uniform_real_distribution<double>(0, 1)`).
    fn uniform_f64(&mut self) -> f64 {
        (self.random64() & ((1u64 << 53) - 1)) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `tensor.uniform_(from, to)` on a float32 tensor (`from`, `to` are cast to float).
    pub fn uniform_(&mut self, out: &mut [f32], from: f64, to: f64) {
        let (from, to) = (from as f32, to as f32);
        for v in out.iter_mut() {
            let x = self.uniform_f32(from, to);
            *v = if x == to { from } else { x };
        }
    }

    /// `tensor.normal_(mean, std)` on a contiguous float32 tensor of `out.len()` values
    /// (`torch.nn.init.normal_`).
    pub fn normal_(&mut self, out: &mut [f32], mean: f64, std: f64) {
        let n = out.len();
        if n < 16 {
            for v in out.iter_mut() {
                *v = self.normal_f64(mean, std) as f32;
            }
            return;
        }
        let (mean, std) = (mean as f32, std as f32);
        for v in out.iter_mut() {
            *v = self.uniform_f32(0.0, 1.0);
        }
        for group in out.chunks_exact_mut(16) {
            box_muller_16(group.try_into().expect("chunks of 16"), mean, std);
        }
        if !n.is_multiple_of(16) {
            let tail = &mut out[n - 16..];
            for v in tail.iter_mut() {
                *v = self.uniform_f32(0.0, 1.0);
            }
            box_muller_16(tail.try_into().expect("16 values"), mean, std);
        }
    }

    /// `at::normal_distribution<double>(mean, std)` with the generator's cached value.
    fn normal_f64(&mut self, mean: f64, std: f64) -> f64 {
        if let Some(z) = self.next_double_normal.take() {
            return z.mul_add(std, mean);
        }
        let u1 = self.uniform_f64();
        let u2 = self.uniform_f64();
        let r = (-2.0 * (-u2).ln_1p()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * u1;
        self.next_double_normal = Some(r * theta.sin());
        (r * theta.cos()).mul_add(std, mean)
    }

    /// `torch.nn.init.trunc_normal_(tensor, mean, std, a, b)` on a float32 tensor of
    /// `out.len()` values, for bounds symmetric about the mean (`a = mean − h`,
    /// `b = mean + h`, `h > 0`) as the reference's `noise_clamp` gives them.
    pub fn trunc_normal_(&mut self, out: &mut [f32], mean: f64, std: f64, half_width: f64) {
        let (a, b) = (mean - half_width, mean + half_width);
        let n = out.len();
        self.scratch.resize(n, 0.0);
        self.candidates.resize(n, 0.0);
        self.pending.resize(n, false);
        if half_width / std > REJECTION_BRANCH_MIN_HALF_WIDTH {
            let (lo, hi) = (a as f32, b as f32);
            self.normal_(out, mean, std);
            while out.iter().any(|&x| x < lo || x > hi) {
                let mut fresh = std::mem::take(&mut self.scratch);
                self.normal_(&mut fresh, mean, std);
                for (x, &y) in out.iter_mut().zip(&fresh) {
                    if *x < lo || *x > hi {
                        *x = y;
                    }
                }
                self.scratch = fresh;
            }
            return;
        }
        // Uniform proposals: log_pdf(x) = -0.5 ((x - mean) / std)² - log_peak, with the
        // mode inside [a, b] (the mean), so log_peak = -0.0.
        let (mean32, std32) = (mean as f32, std as f32);
        let log_pdf = |x: f32| {
            let d = (x - mean32) / std32;
            d * d * -0.5 + 0.0
        };
        self.uniform_(out, a, b);
        let mut accept = std::mem::take(&mut self.scratch);
        let mut candidates = std::mem::take(&mut self.candidates);
        self.uniform_(&mut accept, 0.0, 1.0);
        for ((p, &x), &u) in self.pending.iter_mut().zip(out.iter()).zip(&accept) {
            *p = log_f32(u) > log_pdf(x);
        }
        while self.pending.iter().any(|&p| p) {
            self.uniform_(&mut candidates, a, b);
            self.uniform_(&mut accept, 0.0, 1.0);
            for i in 0..n {
                if self.pending[i] {
                    out[i] = candidates[i];
                    self.pending[i] = log_f32(accept[i]) > log_pdf(candidates[i]);
                }
            }
        }
        self.scratch = accept;
        self.candidates = candidates;
    }
}

/// The natural logarithm of a float, correctly rounded (torch's `log_` on float tensors is
/// within one unit in the last place of it).
fn log_f32(x: f32) -> f32 {
    f64::from(x).ln() as f32
}
