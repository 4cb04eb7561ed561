//! f32 SIMD kernels for pocket-tts-rs, selected at run time by CPU feature detection:
//! element-wise and row kernels (softmax, layer norm, activations, `exp`), the
//! matrix–vector products of single-token inference with `f32`, 16-bit (`f16`/`bf16`),
//! int8 or 4-bit weights, and the packed-panel matrix product ([`gemm`]) behind every conv
//! and linear layer of the Mimi fast path.
//!
//! Every kernel has a scalar reference in [`scalar`] (computed in `f64` internally and
//! rounded once to `f32`) and hand-written SIMD versions:
//!
//! | [`Isa`]          | target     | requires (run-time detected)  | lanes |
//! |------------------|------------|-------------------------------|-------|
//! | [`Isa::Avx512`]  | `x86_64`   | `avx512f`                     | 16    |
//! | [`Isa::Avx2`]    | `x86_64`   | `avx2` + `fma`                | 8     |
//! | [`Isa::Neon`]    | `aarch64`  | `neon`                        | 4     |
//! | [`Isa::Simd128`] | `wasm32`   | `simd128` + `relaxed-simd` (compiled in) | 4 |
//! | [`Isa::Scalar`]  | any        | —                             | 1     |
//!
//! The free functions ([`softmax_rows`], [`layer_norm_rows`], [`gelu_tanh`], [`elu`],
//! [`silu`], [`exp`]) dispatch to the ISA returned by [`detected`], which is chosen once
//! per process (best available, or the [`ENV_VAR`] override) and cached. The same kernels
//! can be run on an explicit ISA through the methods of [`Isa`] (used by tests and benches).
//!
//! Semantics follow PyTorch (`torch.softmax`, `torch.nn.LayerNorm`,
//! `F.gelu(approximate="tanh")`, `F.elu`, `F.silu`, `torch.exp`). The SIMD versions share
//! one vectorised `exp` (Cody–Waite range reduction + degree-7 polynomial, ≈1 ulp,
//! gradual underflow to denormals/0 for large negative inputs, `+inf` on overflow, NaN in
//! → NaN out).
//!
//! Accuracy of the SIMD kernels against [`scalar`] (asserted by `tests/integration/kernels.rs` on
//! random data over many lengths, dense sweeps and edge values, for every ISA available
//! on the machine running the tests; "measured" = worst case seen on AVX2/AVX-512/NEON):
//!
//! * `exp`: ≤ 2 ulp asserted, ≤ 1 ulp measured, including denormal results.
//! * `softmax_rows`: relative error ≤ 1e-6 + |x − max(row)|·2⁻²⁴ per element (the second
//!   term is the f32 rounding of `x − max`, which PyTorch's kernel has too; it only matters
//!   for probabilities below ~1e-7 of the row maximum), plus 1e-37 absolute.
//! * `layer_norm_rows`: ≤ 2e-6 absolute + 2e-6 relative for well-conditioned rows
//!   (|mean| ≲ 10·std, as tested); like any f32 implementation the error grows with
//!   |mean|/std (≤ 5e-4 absolute asserted for mean 1e4, std ≈ 1.2).
//! * `gelu_tanh`, `silu`, `elu`: ≤ 1e-6 absolute or ≤ 2 ulp asserted; measured ≤ 2.4e-7
//!   absolute (gelu), ≤ 1 ulp (elu), ≤ 1 ulp above |x| = 8 (silu). Results that would be
//!   denormal (`silu(x)` for x < −104) may flush to −0.
//!
//! # Matrix–vector products
//!
//! `W` is row-major `[rows, cols]` (an `nn.Linear` weight `[out, in]`); each takes an
//! optional bias and can accumulate into `y` (`y += W·x + b`, the residual connection).
//! The `Isa` methods of the quantized ones take a first row, so that threads can split the
//! rows.
//!
//! | function          | weights                         | activations        | AVX-512 host            | AVX2 host            | NEON          |
//! |-------------------|---------------------------------|--------------------|-------------------------|----------------------|---------------|
//! | [`gemv`], [`gemv_t`], [`gemv_multi`] | `f32`        | `f32`              | AVX-512F                | AVX2 + FMA           | NEON          |
//! | [`gemv_half`]     | [`HalfRows`]: `f16` or `bf16`   | `f32`              | AVX2 + FMA + F16C¹      | AVX2 + FMA + F16C    | NEON (`fcvtl`, `shll`) |
//! | [`gemv_i8`]       | [`QuantizedRows`]: `i8` + row scale | `f32`          | AVX2 + FMA              | AVX2 + FMA           | NEON          |
//! | [`gemv_i8_q8`]⁴   | [`QuantizedRows`]               | [`QuantizedVector`]: `i8` + scale | AVX-512 VNNI² (else AVX2) | AVX2 (`maddubs`) | NEON `sdot`³ (else `smull`/`sadalp`) |
//! | [`gemv_q4`]⁶      | [`Q4Rows`]: 4-bit blocks of 32 + `bf16` block scale | [`QuantizedVector`] | AVX-512 VNNI (`ymm`, else AVX2) | AVX2 (`maddubs`) | NEON `sdot` (else `smull`/`sadalp`) |
//! | [`gemm::gemm_packed`], [`gemm::gemm_packed_grouped`], [`gemm::gemm_strided`]⁵ | [`gemm::PackedMatrix`] (or strided) `f32` | `f32` ([`gemm::BView`]) | AVX-512F | AVX2 + FMA | NEON |
//!
//! ¹ The 16-lane version was slower from DRAM on Zen 4; [`HalfRows::dequantize_rows_into`]
//! uses 16 lanes. ² `vpdpbusd`, when the CPU has `avx512vnni` and `avx512bw` (detected
//! once); `POCKET_TTS_SIMD=avx2` selects the AVX2 kernel. ³ The dot-product extension's
//! `sdot`, when the CPU has `dotprod` (Armv8.2+, detected once), emitted with inline
//! assembly as its intrinsic `vdotq_s32` is unstable in Rust; without it,
//! `smull`/`smlal2`/`sadalp`. ⁴ [`Isa::gemv_i8_q8_tokens`], several tokens against the
//! same rows, reads each weight once for up to four tokens with VNNI and NEON (AVX2 and
//! scalar: one [`gemv_i8_q8`] per token); [`gemv_multi`] does so for `f32` on every SIMD
//! ISA. ⁵ Matrix × matrix (`C[n, m] (+)= B[n, k]·A[k, m]`): weights packed once into
//! 64-column panels, cache-blocked, register-tiled micro-kernels; every output is the same
//! `k`-ordered chain of fused multiply-adds on every ISA, so the results are bit-identical
//! to the scalar kernel's (see the module). ⁶ Exact integer block sums, then a fixed
//! `f32` order (eight accumulators, a fixed reduction) on every ISA, so the same bits
//! everywhere; [`Isa::gemv_q4_tokens`] multiplies several tokens by rows kept in L1.
//!
//! Integer dot products are exact, so [`gemv_i8_q8`] gives the same bits on every ISA; the
//! float ones sum in `f32` with per-lane partial sums (a few ulp of `Σ|wᵢ·xᵢ|` from an
//! exact sum; tests compare with `f64`).
//!
//! # How the kernels are written
//!
//! Each kernel's loops (row blocks, column steps, tails, reductions) are written once,
//! generic over the ISA: an `#[inline(always)]` driver over a trait whose
//! `#[inline(always)]` methods are one ISA's vector primitives (`arch.rs`: load, FMA,
//! horizontal sum, … for [`Isa::Avx512`], [`Isa::Avx2`] and [`Isa::Neon`]; per kernel,
//! e.g. the int8 dot products of `maddubs`, VNNI, `smull` and `sdot`, or the GEMM's
//! micro-kernels), monomorphized inside one `#[target_feature]` entry point per ISA (the
//! `f32` GEMVs share theirs: `arch::run`; the int8 ones one per kernel variant). Where
//! ISAs differ in more than the primitives (a masked or a scalar tail, the number of rows
//! per block), the trait says so with a constant, and each ISA keeps the arithmetic it
//! always had. The element-wise kernels are one macro (`drivers.rs`) expanded in each
//! back-end module.
//!
//! Shapes: "rows" kernels take a row-major contiguous `[rows, cols]` buffer whose length
//! must be a multiple of `cols`. All kernels are single-threaded; parallelise over rows in
//! the caller if needed ([`Team`] runs the parts of a job, [`SplitMut`] gives each part
//! its own rows of the output without `unsafe`).
//!
//! # Panics
//!
//! Kernels panic only on mismatched slice lengths (documented per function); they never
//! panic on values (NaN/inf are propagated like PyTorch does).

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::fmt;
use std::sync::OnceLock;

#[cfg(target_arch = "x86_64")]
mod amx;
pub mod gemm;
pub mod scalar;

mod gemv;
mod gemv_half;
mod gemv_i8;
mod gemv_multi;
mod gemv_q4;
mod shared_bytes;
mod split;
mod team;
pub use gemv::{gemv, gemv_t};
pub use gemv_half::{gemv_half, HalfKind, HalfRows};
pub use gemv_i8::{amx_int8_available, gemv_i8, gemv_i8_q8, QuantizedRows, QuantizedVector};
pub use gemv_multi::gemv_multi;
pub use gemv_q4::{gemv_q4, Q4Rows, Q4_BLOCK};
pub use shared_bytes::SharedBytes;
pub use split::SplitMut;
pub use team::{split_range, Team, DEFAULT_SPIN};

// WebAssembly has no run-time feature detection: the kernels are SIMD128 ones.
#[cfg(all(
    target_arch = "wasm32",
    not(all(target_feature = "simd128", target_feature = "relaxed-simd"))
))]
compile_error!(
    "pocket-tts-simd for wasm32 needs `-C target-feature=+simd128,+relaxed-simd` \
     (the workspace's .cargo/config.toml sets it)"
);

mod arch;
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
mod consts;

#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
#[macro_use]
mod drivers;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "wasm32")]
mod wasm;

/// Calls `$f` from the module of a *supported* ISA. `$isa` must have been resolved.
macro_rules! dispatch {
    ($isa:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        match $isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the ISA was resolved, so avx512f is present on this CPU.
            Isa::Avx512 => unsafe { crate::avx512::$f($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the ISA was resolved, so avx2 and fma are present on this CPU.
            Isa::Avx2 => unsafe { crate::avx2::$f($($arg),*) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: the ISA was resolved, so neon is present on this CPU.
            Isa::Neon => unsafe { crate::neon::$f($($arg),*) },
            // SIMD128 is compiled into the whole program (checked at compile time), so
            // calling its `#[target_feature]` functions is safe.
            #[cfg(target_arch = "wasm32")]
            Isa::Simd128 => crate::wasm::$f($($arg),*),
            _ => crate::scalar::$f($($arg),*),
        }
    }};
}

/// Name of the environment variable that overrides ISA selection for the process.
///
/// Accepted values (case-insensitive): `scalar`, `avx2`, `avx512`, `neon`. It is read once,
/// on the first call to [`detected`] (or any dispatching kernel). An unknown value, or an
/// ISA the CPU does not support, is ignored and the best available ISA is used instead.
pub const ENV_VAR: &str = "POCKET_TTS_SIMD";

/// An instruction-set family that the kernels are implemented for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    /// Portable scalar reference code ([`scalar`]); always available.
    Scalar,
    /// x86_64 AVX2 + FMA, 8 × f32 lanes.
    Avx2,
    /// x86_64 AVX-512F, 16 × f32 lanes.
    Avx512,
    /// aarch64 Advanced SIMD (NEON), 4 × f32 lanes.
    Neon,
    /// WebAssembly SIMD128, 4 × f32 lanes, with relaxed SIMD's fused multiply-add
    /// (`f32x4.relaxed_madd`). WebAssembly has no run-time detection: it is supported when
    /// the build enables `simd128` and `relaxed-simd` (the workspace's `.cargo/config.toml`
    /// does for `wasm32`). Every kernel has a SIMD128 version but the 16-bit GEMV
    /// ([`gemv_half`], scalar there).
    Simd128,
}

impl Isa {
    /// All ISAs known to this crate, supported or not, in declaration order.
    pub const ALL: [Isa; 5] = [Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Simd128];

    /// Lower-case name as accepted by [`Isa::from_name`] and [`ENV_VAR`]
    /// (`"scalar"`, `"avx2"`, `"avx512"`, `"neon"`, `"simd128"`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
            Isa::Simd128 => "simd128",
        }
    }

    /// Parses a name as written in [`ENV_VAR`]: case-insensitive, surrounding whitespace
    /// ignored; `avx-512`/`avx512f` are accepted for [`Isa::Avx512`]. Returns `None` for
    /// anything else.
    pub fn from_name(name: &str) -> Option<Isa> {
        match name.trim().to_ascii_lowercase().as_str() {
            "scalar" => Some(Isa::Scalar),
            "avx2" => Some(Isa::Avx2),
            "avx512" | "avx-512" | "avx512f" => Some(Isa::Avx512),
            "neon" => Some(Isa::Neon),
            "simd128" => Some(Isa::Simd128),
            _ => None,
        }
    }

    /// Whether this CPU (and this build's target architecture) can run the ISA's kernels.
    /// Uses the standard library's cached run-time feature detection.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            Isa::Avx2 => {
                #[cfg(target_arch = "x86_64")]
                {
                    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    false
                }
            }
            Isa::Avx512 => {
                #[cfg(target_arch = "x86_64")]
                {
                    is_x86_feature_detected!("avx512f")
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    false
                }
            }
            Isa::Neon => {
                #[cfg(target_arch = "aarch64")]
                {
                    std::arch::is_aarch64_feature_detected!("neon")
                }
                #[cfg(not(target_arch = "aarch64"))]
                {
                    false
                }
            }
            Isa::Simd128 => cfg!(all(
                target_arch = "wasm32",
                target_feature = "simd128",
                target_feature = "relaxed-simd"
            )),
        }
    }

    /// Number of f32 lanes per vector register (1 for [`Isa::Scalar`]).
    pub fn lanes(self) -> usize {
        match self {
            Isa::Scalar => 1,
            Isa::Avx2 => 8,
            Isa::Avx512 => 16,
            Isa::Neon | Isa::Simd128 => 4,
        }
    }

    /// `self` if supported, otherwise [`best_available`]. Every kernel method on `Isa`
    /// goes through this, so calling e.g. `Isa::Avx512.gelu_tanh(..)` on a CPU without
    /// AVX-512 is safe (it silently runs the best supported ISA).
    pub fn resolve(self) -> Isa {
        if self.is_supported() {
            self
        } else {
            best_available()
        }
    }

    /// [`softmax_rows`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`softmax_rows`].
    pub fn softmax_rows(self, x: &mut [f32], cols: usize) {
        check_rows("softmax_rows", x.len(), cols);
        if x.is_empty() {
            return;
        }
        dispatch!(self.resolve(), softmax_rows(x, cols))
    }

    /// [`layer_norm_rows`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`layer_norm_rows`].
    pub fn layer_norm_rows(
        self,
        x: &[f32],
        out: &mut [f32],
        cols: usize,
        weight: Option<&[f32]>,
        bias: Option<&[f32]>,
        eps: f32,
    ) {
        check_layer_norm(x.len(), out.len(), cols, weight, bias);
        if x.is_empty() {
            return;
        }
        dispatch!(
            self.resolve(),
            layer_norm_rows(x, out, cols, weight, bias, eps)
        )
    }

    /// [`gelu_tanh`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    pub fn gelu_tanh(self, x: &mut [f32]) {
        dispatch!(self.resolve(), gelu_tanh(x))
    }

    /// [`elu`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    pub fn elu(self, x: &mut [f32], alpha: f32) {
        dispatch!(self.resolve(), elu(x, alpha))
    }

    /// [`silu`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    pub fn silu(self, x: &mut [f32]) {
        dispatch!(self.resolve(), silu(x))
    }

    /// [`exp`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    pub fn exp(self, x: &mut [f32]) {
        dispatch!(self.resolve(), exp(x))
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The best ISA this CPU supports, ignoring [`ENV_VAR`]
/// (preference order: AVX-512F, AVX2+FMA, NEON, SIMD128, scalar).
pub fn best_available() -> Isa {
    [Isa::Avx512, Isa::Avx2, Isa::Neon, Isa::Simd128]
        .into_iter()
        .find(|isa| isa.is_supported())
        .unwrap_or(Isa::Scalar)
}

/// All ISAs this CPU supports, scalar first (useful to test/bench every code path).
pub fn available() -> Vec<Isa> {
    Isa::ALL
        .into_iter()
        .filter(|isa| isa.is_supported())
        .collect()
}

static ACTIVE: OnceLock<Isa> = OnceLock::new();

/// The ISA the dispatching kernels use in this process.
///
/// Determined once (then cached): the value of [`ENV_VAR`] if it names a supported ISA,
/// otherwise [`best_available`].
pub fn detected() -> Isa {
    *ACTIVE.get_or_init(|| select(std::env::var(ENV_VAR).ok().as_deref()))
}

/// Selection rule behind [`detected`], separated for testing.
fn select(env: Option<&str>) -> Isa {
    env.and_then(Isa::from_name)
        .filter(|isa| isa.is_supported())
        .unwrap_or_else(best_available)
}

fn check_rows(what: &str, len: usize, cols: usize) {
    if cols == 0 {
        assert!(
            len == 0,
            "{what}: cols == 0 but the buffer has {len} elements"
        );
    } else {
        assert!(
            len.is_multiple_of(cols),
            "{what}: buffer length {len} is not a multiple of cols = {cols}"
        );
    }
}

/// Panics unless the rows `first..first + n` lie inside a matrix of `rows` rows
/// (overflow-safe), naming `what`.
fn check_row_range(what: &str, first: usize, n: usize, rows: usize) {
    assert!(
        first.checked_add(n).is_some_and(|end| end <= rows),
        "{what}: rows {first}..{} outside the matrix's {rows}",
        first.saturating_add(n)
    );
}

/// The contract of the row-range GEMVs over a `[rows, cols]` weight matrix
/// ([`Isa::gemv_i8`], [`Isa::gemv_i8_q8`], [`Isa::gemv_half`]): `x` has `cols` elements,
/// the rows `first..first + y_len` exist, and `bias`, when given, has `y_len` elements.
fn check_gemv_rows(
    what: &str,
    (rows, cols): (usize, usize),
    first: usize,
    x_len: usize,
    y_len: usize,
    bias: Option<&[f32]>,
) {
    assert_eq!(
        x_len, cols,
        "{what}: x has {x_len} elements, expected {cols}"
    );
    check_row_range(what, first, y_len, rows);
    if let Some(b) = bias {
        assert_eq!(
            b.len(),
            y_len,
            "{what}: bias has {} elements, expected {y_len}",
            b.len()
        );
    }
}

fn check_layer_norm(
    x_len: usize,
    out_len: usize,
    cols: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
) {
    assert_eq!(
        x_len, out_len,
        "layer_norm_rows: x has {x_len} elements but out has {out_len}"
    );
    check_rows("layer_norm_rows", x_len, cols);
    if let Some(w) = weight {
        assert_eq!(
            w.len(),
            cols,
            "layer_norm_rows: weight has {} elements, expected cols = {cols}",
            w.len()
        );
    }
    if let Some(b) = bias {
        assert_eq!(
            b.len(),
            cols,
            "layer_norm_rows: bias has {} elements, expected cols = {cols}",
            b.len()
        );
    }
}

/// Numerically stable softmax over each row of a row-major `[rows, cols]` buffer, in place
/// (`torch.softmax(x, dim=-1)`): `y = exp(x - max(row)) / sum(exp(x - max(row)))`.
///
/// Rows containing `-inf` get exact zeros there (attention masks). As in PyTorch, a row
/// containing NaN or `+inf`, or consisting only of `-inf`, becomes all NaN. `cols == 0`
/// with an empty buffer is a no-op.
///
/// # Panics
/// If `x.len()` is not a multiple of `cols` (or `cols == 0` and `x` is non-empty).
pub fn softmax_rows(x: &mut [f32], cols: usize) {
    detected().softmax_rows(x, cols)
}

/// LayerNorm over each row of a row-major `[rows, cols]` buffer (`torch.nn.LayerNorm`
/// over the last dimension): `out = (x - mean) / sqrt(var + eps) * weight + bias`, where
/// `var` is the biased (divide-by-`cols`) variance. `weight`/`bias` of `None` mean 1/0
/// (`elementwise_affine=False`, or `bias=False`). `eps` is added to the variance
/// (PyTorch default `1e-5`; Pocket TTS also uses `1e-6`).
///
/// # Panics
/// If `out.len() != x.len()`, if `x.len()` is not a multiple of `cols` (or `cols == 0`
/// and `x` is non-empty), or if `weight`/`bias` is given with a length other than `cols`.
pub fn layer_norm_rows(
    x: &[f32],
    out: &mut [f32],
    cols: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
) {
    detected().layer_norm_rows(x, out, cols, weight, bias, eps)
}

/// GELU with the tanh approximation, in place
/// (`F.gelu(x, approximate="tanh")`):
/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
///
/// The SIMD versions evaluate the identical expression `x·σ(2u)` (σ = logistic sigmoid,
/// `u` the tanh argument) without cancellation; finite inputs of any magnitude give finite
/// results (`x` for large positive, `-0` for large negative). NaN → NaN; `-inf` → NaN
/// like the reference formula (`-inf · 0`).
pub fn gelu_tanh(x: &mut [f32]) {
    detected().gelu_tanh(x)
}

/// ELU, in place (`F.elu(x, alpha)`): `x` for `x > 0`, `alpha·(exp(x) − 1)` otherwise
/// (computed with an `expm1`, so it is accurate near 0). NaN → NaN. The Mimi decoder uses
/// `alpha = 1.0`.
pub fn elu(x: &mut [f32], alpha: f32) {
    detected().elu(x, alpha)
}

/// SiLU / swish, in place (`F.silu(x)`): `x·σ(x) = x / (1 + exp(−x))`.
/// NaN → NaN; `+inf` → `+inf`; `-inf` → NaN (as `x / (1 + exp(−x))` in PyTorch).
pub fn silu(x: &mut [f32]) {
    detected().silu(x)
}

/// Element-wise `exp`, in place (`torch.exp`): overflows to `+inf` above ≈ 88.72,
/// underflows gradually (denormals, then `0`) below ≈ −87.3, NaN → NaN.
pub fn exp(x: &mut [f32]) {
    detected().exp(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(Isa::from_name(isa.name()), Some(isa));
            assert_eq!(isa.to_string(), isa.name());
        }
        assert_eq!(Isa::from_name(" AVX512 "), Some(Isa::Avx512));
        assert_eq!(Isa::from_name("sse"), None);
    }

    #[test]
    fn selection_honours_supported_override_only() {
        let best = best_available();
        assert_eq!(select(None), best);
        assert_eq!(select(Some("bogus")), best);
        assert_eq!(select(Some("scalar")), Isa::Scalar);
        for isa in Isa::ALL {
            let expected = if isa.is_supported() { isa } else { best };
            assert_eq!(select(Some(isa.name())), expected, "override {isa}");
            assert_eq!(isa.resolve(), expected);
        }
        assert!(available().contains(&detected()));
        assert_eq!(available()[0], Isa::Scalar);
    }
}
