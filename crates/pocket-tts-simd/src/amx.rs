//! Intel AMX (Advanced Matrix Extensions, Xeon from Sapphire Rapids on): whether this
//! process may use the tile registers, and with which data types. Linux gives a process
//! the tile state only on request (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`),
//! made here once. `POCKET_TTS_NO_AMX=1` in the environment turns AMX off (to measure the
//! AVX-512 kernels on the same machine).

use std::arch::asm;
use std::sync::OnceLock;

/// The AMX features this process may use (bf16 tiles were tried for the 16-bit Mimi
/// GEMM and not kept: OPTIMIZATION_LOG.md §39).
#[derive(Clone, Copy, Debug, Default)]
struct Features {
    int8: bool,
}

fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(|| {
        if std::env::var_os("POCKET_TTS_NO_AMX").is_some_and(|v| v != "0") {
            return Features::default();
        }
        detect_and_request()
    })
}

/// AMX with int8 tiles (`tdpbssd`) is usable.
pub(crate) fn int8() -> bool {
    features().int8
}

#[cfg(target_os = "linux")]
fn detect_and_request() -> Features {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let none = Features::default();
    let (leaf0, leaf1) = (__cpuid(0), __cpuid(1));
    if leaf0.eax < 7 || leaf1.ecx & (1 << 27) == 0 {
        return none; // no leaf 7, or no OSXSAVE (no xgetbv)
    }
    let leaf7 = __cpuid_count(7, 0);
    let bit = |b: u32| leaf7.edx & (1 << b) != 0;
    // AMX-TILE (24), AMX-INT8 (25); the AVX-512 VNNI kernel handles the edges.
    if !bit(24) || !std::arch::is_x86_feature_detected!("avx512bw") {
        return none;
    }
    // XCR0: XTILECFG (bit 17) and XTILEDATA (bit 18) enabled by the kernel.
    let xcr0: u64 = {
        let (lo, hi): (u32, u32);
        // SAFETY: OSXSAVE is set (checked above), so `xgetbv` with ECX = 0 is allowed.
        unsafe {
            asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") hi,
                 options(nomem, nostack, preserves_flags));
        }
        (u64::from(hi) << 32) | u64::from(lo)
    };
    if xcr0 & (0b11 << 17) != 0b11 << 17 {
        return none;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with ARCH_REQ_XCOMP_PERM only changes this process's permission
    // to use the AMX state; it fails (non-zero) when refused.
    let r = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    if r != 0 {
        return none;
    }
    Features {
        int8: bit(25) && std::arch::is_x86_feature_detected!("avx512vnni"),
    }
}

#[cfg(not(target_os = "linux"))]
fn detect_and_request() -> Features {
    Features::default()
}
