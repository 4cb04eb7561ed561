//! The `f32` vector operations the generic kernel drivers are written with: one
//! zero-sized type per SIMD ISA ([`Avx512`] and [`Avx2`] on x86_64, [`Neon`] on aarch64,
//! [`Simd128`] on wasm32) implementing [`F32Simd`].
//!
//! A driver written once over `S: F32Simd` (an `#[inline(always)]` function) is
//! monomorphized inside one `#[target_feature]` entry point per ISA, so that every
//! primitive below, inlined into it, compiles to the ISA's instructions. The primitives
//! are thin: each is one intrinsic (or a short fixed sequence, e.g. a horizontal sum), so
//! a driver performs exactly the operations, in the same order, that a hand-written
//! per-ISA copy would, and gives the same bits.
//!
//! The kernels that need nothing but these primitives (`gemv`, `gemv_t`, `gemv_multi`)
//! are a [`Job`] each (their operands, with the generic driver and the scalar kernel), and
//! [`run`] is their dispatch: the entry points of this module (`run_avx512`, `run_avx2`,
//! `run_neon`) are the only `#[target_feature]` functions they need. Kernels whose ISAs
//! need other features (F16C, AVX-512 VNNI, `dotprod`) have their own entry points.

#[cfg(target_arch = "aarch64")]
use std::arch::aarch64::*;
#[cfg(target_arch = "wasm32")]
use std::arch::wasm32::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use crate::Isa;

/// One call of a kernel written once over [`F32Simd`]: its operands (raw pointers whose
/// validity the job documents), the generic driver and the scalar kernel.
pub(crate) trait Job {
    /// Runs the driver on `S`.
    ///
    /// # Safety
    /// The CPU has `S`'s features and the caller enables them; the operands are valid
    /// (as the job documents).
    unsafe fn simd<S: F32Simd>(self);
    /// Runs the scalar kernel.
    ///
    /// # Safety
    /// The operands are valid (as the job documents).
    unsafe fn scalar(self);
}

/// Runs `job` on `isa`: the driver monomorphized for the ISA in its `#[target_feature]`
/// entry point, or the scalar kernel for [`Isa::Scalar`].
///
/// # Safety
/// `isa` was resolved ([`Isa::resolve`]: the CPU has its features), and the job's
/// operands are valid.
pub(crate) unsafe fn run<J: Job>(isa: Isa, job: J) {
    // SAFETY: the CPU has the features of `isa` (resolved), which each entry point
    // enables; the operands are valid (caller).
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => run_avx512(job),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => run_avx2(job),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => run_neon(job),
            #[cfg(all(
                target_arch = "wasm32",
                target_feature = "simd128",
                target_feature = "relaxed-simd"
            ))]
            Isa::Simd128 => job.simd::<Simd128>(),
            _ => job.scalar(),
        }
    }
}

/// [`Job::simd`] on [`Avx512`].
///
/// # Safety
/// AVX-512F is available; the job's operands are valid.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512<J: Job>(job: J) {
    // SAFETY: AVX-512F is available (caller) and enabled here; operands valid (caller).
    unsafe { job.simd::<Avx512>() }
}

/// [`Job::simd`] on [`Avx2`].
///
/// # Safety
/// AVX2 and FMA are available; the job's operands are valid.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<J: Job>(job: J) {
    // SAFETY: AVX2 and FMA are available (caller) and enabled here; operands valid.
    unsafe { job.simd::<Avx2>() }
}

/// [`Job::simd`] on [`Neon`].
///
/// # Safety
/// NEON is available; the job's operands are valid.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
unsafe fn run_neon<J: Job>(job: J) {
    // SAFETY: NEON is available (caller) and enabled here; operands valid (caller).
    unsafe { job.simd::<Neon>() }
}

/// The vector primitives of one ISA.
///
/// # Safety of the methods
/// Every method is `unsafe` with the same contract: the CPU has the ISA's features and
/// the caller is compiled with them (the method is inlined into a `#[target_feature]`
/// function of that ISA); the pointer arguments are valid for the accesses the method
/// documents (`LANES` elements unless said otherwise), without alignment requirements.
pub(crate) trait F32Simd {
    /// A vector of [`Self::LANES`] `f32`s.
    type V: Copy;
    /// `f32` lanes per vector.
    const LANES: usize;
    /// Whether a partial vector at the end of a row is read with one masked load
    /// ([`Self::load_first`], AVX-512), rather than left to a scalar tail (AVX2, NEON).
    /// The two give different roundings; each kernel keeps its ISA's choice.
    const MASKED_TAIL: bool;
    /// Whether [`Self::prefetch`] issues a software prefetch (x86; `_prefetch` is
    /// unstable on aarch64).
    const PREFETCH: bool;
    /// `gemv_t`: whether even and odd rows of `M` go to separate accumulators (summed at
    /// the end), which halves the dependency chains (x86), or all rows to one (NEON).
    const PAIRED_ROWS: bool;
    /// `gemv_multi`: weight rows per block (`rows × 4` tokens of accumulators: 12 of the
    /// 16 AVX2 registers, 16 of AVX-512's or NEON's 32).
    const MULTI_ROWS: usize;
    /// `gemv_multi`: vectors of columns per iteration of the main loop (NEON loads two:
    /// `2·R` weight vectors and `2·T` token vectors, `2·R·T` FMAs; each accumulator still
    /// adds its columns in order).
    const MULTI_UNROLL: usize;

    /// All lanes 0.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn zero() -> Self::V;
    /// All lanes `x`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn splat(x: f32) -> Self::V;
    /// `LANES` values from `p`.
    ///
    /// # Safety
    /// See the trait; `p` is readable for `LANES` elements.
    unsafe fn load(p: *const f32) -> Self::V;
    /// The first `n < LANES` values from `p`, the other lanes 0 (not accessed).
    ///
    /// # Safety
    /// See the trait; `p` is readable for `n` elements.
    unsafe fn load_first(p: *const f32, n: usize) -> Self::V;
    /// [`Self::load`] when `n == LANES`, [`Self::load_first`] when `n < LANES` (a branch
    /// the compiler removes when `n` is a constant).
    ///
    /// # Safety
    /// See the trait; `p` is readable for `n <= LANES` elements.
    #[inline(always)]
    unsafe fn load_n(p: *const f32, n: usize) -> Self::V {
        // SAFETY: as the caller vouches for.
        unsafe {
            if n < Self::LANES {
                Self::load_first(p, n)
            } else {
                Self::load(p)
            }
        }
    }
    /// Stores `LANES` values at `p`.
    ///
    /// # Safety
    /// See the trait; `p` is writable for `LANES` elements.
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Stores the first `n < LANES` lanes of `v` at `p` (the others are not accessed).
    ///
    /// # Safety
    /// See the trait; `p` is writable for `n` elements.
    unsafe fn store_first(p: *mut f32, n: usize, v: Self::V);
    /// `a·b + c`, rounded once.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b`.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// The sum of the lanes, in the ISA's fixed reduction order.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn hsum(v: Self::V) -> f32;
    /// A hint to bring the cache line of `p` into L1 (any address: prefetches never
    /// fault); nothing where [`Self::PREFETCH`] is false.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn prefetch(p: *const u8);
}

/// AVX-512F, 16 lanes.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx512;

/// AVX2 + FMA, 8 lanes.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2;

/// NEON, 4 lanes.
#[cfg(target_arch = "aarch64")]
pub(crate) struct Neon;

#[cfg(target_arch = "x86_64")]
impl F32Simd for Avx512 {
    type V = __m512;
    const LANES: usize = 16;
    const MASKED_TAIL: bool = true;
    const PREFETCH: bool = true;
    const PAIRED_ROWS: bool = true;
    const MULTI_ROWS: usize = 4;
    const MULTI_UNROLL: usize = 1;

    #[inline(always)]
    unsafe fn zero() -> __m512 {
        // SAFETY: AVX-512F is enabled (trait contract).
        unsafe { _mm512_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m512 {
        // SAFETY: as above.
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m512 {
        // SAFETY: as above; 16 readable values (caller).
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn load_first(p: *const f32, n: usize) -> __m512 {
        // SAFETY: as above; the mask enables the `n < 16` readable values only, the
        // masked-off lanes are not accessed (fault suppression).
        unsafe { _mm512_maskz_loadu_ps((1u16 << n) - 1, p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m512) {
        // SAFETY: as above; 16 writable values (caller).
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn store_first(p: *mut f32, n: usize, v: __m512) {
        // SAFETY: as above; the mask enables the `n < 16` writable values only.
        unsafe { _mm512_mask_storeu_ps(p, (1u16 << n) - 1, v) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: AVX-512F is enabled (trait contract).
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn add(a: __m512, b: __m512) -> __m512 {
        // SAFETY: as above.
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn hsum(v: __m512) -> f32 {
        // SAFETY: as above.
        unsafe { _mm512_reduce_add_ps(v) }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: SSE is part of x86_64; prefetches never fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
}

#[cfg(target_arch = "x86_64")]
impl F32Simd for Avx2 {
    type V = __m256;
    const LANES: usize = 8;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = true;
    const PAIRED_ROWS: bool = true;
    const MULTI_ROWS: usize = 3;
    const MULTI_UNROLL: usize = 1;

    #[inline(always)]
    unsafe fn zero() -> __m256 {
        // SAFETY: AVX2 and FMA are enabled (trait contract).
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m256 {
        // SAFETY: as above.
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m256 {
        // SAFETY: as above; 8 readable values (caller).
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn load_first(p: *const f32, n: usize) -> __m256 {
        let mut buf = [0f32; 8];
        // SAFETY: `n < 8` readable values (caller) into the buffer; AVX is enabled.
        unsafe {
            std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), n);
            _mm256_loadu_ps(buf.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m256) {
        // SAFETY: as above; 8 writable values (caller).
        unsafe { _mm256_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn store_first(p: *mut f32, n: usize, v: __m256) {
        let mut buf = [0f32; 8];
        // SAFETY: AVX is enabled; `n < 8` writable values (caller) from the buffer.
        unsafe {
            _mm256_storeu_ps(buf.as_mut_ptr(), v);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), p, n);
        }
    }
    #[inline(always)]
    unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: FMA is enabled (trait contract).
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn add(a: __m256, b: __m256) -> __m256 {
        // SAFETY: AVX is enabled (trait contract).
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        // SAFETY: AVX is enabled (trait contract).
        unsafe { x86::hsum256(v) }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: SSE is part of x86_64; prefetches never fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) }
    }
}

#[cfg(target_arch = "aarch64")]
impl F32Simd for Neon {
    type V = float32x4_t;
    const LANES: usize = 4;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = false;
    const PAIRED_ROWS: bool = false;
    const MULTI_ROWS: usize = 4;
    const MULTI_UNROLL: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> float32x4_t {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { vdupq_n_f32(0.0) }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> float32x4_t {
        // SAFETY: as above.
        unsafe { vdupq_n_f32(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> float32x4_t {
        // SAFETY: as above; 4 readable values (caller).
        unsafe { vld1q_f32(p) }
    }
    #[inline(always)]
    unsafe fn load_first(p: *const f32, n: usize) -> float32x4_t {
        let mut buf = [0f32; 4];
        // SAFETY: `n < 4` readable values (caller) into the buffer; NEON is enabled.
        unsafe {
            std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), n);
            vld1q_f32(buf.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: float32x4_t) {
        // SAFETY: as above; 4 writable values (caller).
        unsafe { vst1q_f32(p, v) }
    }
    #[inline(always)]
    unsafe fn store_first(p: *mut f32, n: usize, v: float32x4_t) {
        let mut buf = [0f32; 4];
        // SAFETY: NEON is enabled; `n < 4` writable values (caller) from the buffer.
        unsafe {
            vst1q_f32(buf.as_mut_ptr(), v);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), p, n);
        }
    }
    #[inline(always)]
    unsafe fn fmadd(a: float32x4_t, b: float32x4_t, c: float32x4_t) -> float32x4_t {
        // SAFETY: NEON is enabled (trait contract). `vfmaq_f32(c, a, b) = c + a·b`.
        unsafe { vfmaq_f32(c, a, b) }
    }
    #[inline(always)]
    unsafe fn add(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        // SAFETY: as above.
        unsafe { vaddq_f32(a, b) }
    }
    #[inline(always)]
    unsafe fn hsum(v: float32x4_t) -> f32 {
        // SAFETY: as above.
        unsafe { vaddvq_f32(v) }
    }
    #[inline(always)]
    unsafe fn prefetch(_p: *const u8) {}
}

/// WebAssembly SIMD128, 4 lanes; the multiply-add is relaxed SIMD's `f32x4.relaxed_madd`,
/// fused wherever the hardware has FMA (x86-64 with FMA3, every aarch64), which every
/// engine we know uses then; elsewhere it rounds twice. The build enables both features
/// for the whole program, so no `#[target_feature]` entry point is needed.
#[cfg(target_arch = "wasm32")]
pub(crate) struct Simd128;

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    target_feature = "relaxed-simd"
))]
impl F32Simd for Simd128 {
    type V = v128;
    const LANES: usize = 4;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = false;
    const PAIRED_ROWS: bool = false;
    const MULTI_ROWS: usize = 3;
    const MULTI_UNROLL: usize = 1;

    #[inline(always)]
    unsafe fn zero() -> v128 {
        f32x4_splat(0.0)
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> v128 {
        f32x4_splat(x)
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> v128 {
        // SAFETY: 4 readable values (caller); v128_load has no alignment need.
        unsafe { v128_load(p as *const v128) }
    }
    #[inline(always)]
    unsafe fn load_first(p: *const f32, n: usize) -> v128 {
        let mut buf = [0f32; 4];
        // SAFETY: `n < 4` readable values (caller) into the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), n);
            v128_load(buf.as_ptr() as *const v128)
        }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: v128) {
        // SAFETY: 4 writable values (caller).
        unsafe { v128_store(p as *mut v128, v) }
    }
    #[inline(always)]
    unsafe fn store_first(p: *mut f32, n: usize, v: v128) {
        let mut buf = [0f32; 4];
        // SAFETY: `n < 4` writable values (caller) from the buffer.
        unsafe {
            v128_store(buf.as_mut_ptr() as *mut v128, v);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), p, n);
        }
    }
    #[inline(always)]
    unsafe fn fmadd(a: v128, b: v128, c: v128) -> v128 {
        f32x4_relaxed_madd(a, b, c)
    }
    #[inline(always)]
    unsafe fn add(a: v128, b: v128) -> v128 {
        f32x4_add(a, b)
    }
    #[inline(always)]
    unsafe fn hsum(v: v128) -> f32 {
        // (v0 + v2) + (v1 + v3), NEON's `faddp` order.
        let s = f32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
        f32x4_extract_lane::<0>(s) + f32x4_extract_lane::<1>(s)
    }
    #[inline(always)]
    unsafe fn prefetch(_p: *const u8) {}
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use core::arch::x86_64::*;

    /// Horizontal sum of the 8 lanes of `v` (the reduction of every AVX2 `f32` kernel).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn hsum256(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
        _mm_cvtss_f32(s)
    }
}
