//! The bytes of `torch.get_rng_state()`: torch's default CPU generator saved and restored,
//! so that a generation can draw its noise from where a Python program's torch generator
//! stands and hand the advanced state back (torch 2.15.0 `aten/src/ATen/CPUGeneratorImpl.cpp`,
//! `get_state` / `set_state`, and the POD structs `CPUGeneratorImplStateLegacy` and
//! `CPUGeneratorImplState` there).
//!
//! Layout (little-endian, as torch `memcpy`s the structs on x86-64 and aarch64):
//!
//! | offset | field | |
//! |---|---|---|
//! | 0 | `the_initial_seed: u64` | `torch.initial_seed()` |
//! | 8 | `left: i32` | outputs left before the next twist, plus one |
//! | 12 | `seeded: i32` | 1 |
//! | 16 | `next: u64` | next word to temper |
//! | 24 | `state: [u64; 624]` | the words (torch keeps their low 32 bits) |
//! | 5016 | `normal_x, normal_y, normal_rho: f64` | `normal_y`: the cached double normal |
//! | 5040 | `normal_is_valid: i32` | |
//! | 5048 | `next_float_normal_sample: f32` | only in the 5056-byte form |
//! | 5052 | `is_next_float_normal_sample_valid: bool` | |

use super::mt19937::{Mt19937, N};
use crate::{Error, Result};

/// Size of `torch.get_rng_state()` (`CPUGeneratorImplState`), bytes.
pub const TORCH_RNG_STATE_BYTES: usize = 5056;
/// Size of the legacy state torch still accepts (`CPUGeneratorImplStateLegacy`), bytes.
const LEGACY_BYTES: usize = 5048;

const SEED: usize = 0;
const LEFT: usize = 8;
const SEEDED: usize = 12;
const NEXT: usize = 16;
const WORDS: usize = 24;
const NORMAL_Y: usize = 5024;
const NORMAL_IS_VALID: usize = 5040;
const FLOAT_NORMAL: usize = 5048;
const FLOAT_NORMAL_IS_VALID: usize = 5052;

/// torch's default CPU generator state, as `torch.get_rng_state()` returns it (a
/// `uint8` tensor of 5056 bytes). Start a generation's noise from it with
/// [`GenerationParams::torch_rng_state`](crate::GenerationParams::torch_rng_state); read
/// the state after the generation from
/// [`AudioStream::torch_rng_state`](crate::AudioStream::torch_rng_state) or
/// [`StreamHandle::torch_rng_state`](crate::StreamHandle::torch_rng_state), and give its
/// [`Self::to_bytes`] to `torch.set_rng_state`: the program's torch generator then stands
/// where the reference's would after the same generation.
#[derive(Clone, PartialEq)]
pub struct TorchRngState {
    pub(super) engine: Box<Mt19937>,
    /// `next_double_normal_sample_`: the second value of the last double Box-Muller pair.
    pub(super) next_double_normal: Option<f64>,
    /// `next_float_normal_sample_`: kept and handed back; no draw of ours uses it.
    pub(super) next_float_normal: Option<f32>,
}

impl std::fmt::Debug for TorchRngState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TorchRngState")
            .field("initial_seed", &self.engine.seed)
            .field("left", &self.engine.left)
            .field("next", &self.engine.next)
            .finish_non_exhaustive()
    }
}

impl TorchRngState {
    /// The state after `torch.manual_seed(seed)`.
    pub fn manual_seed(seed: u64) -> Self {
        Self {
            engine: Box::new(Mt19937::new(seed)),
            next_double_normal: None,
            next_float_normal: None,
        }
    }

    /// Reads `torch.get_rng_state()`'s bytes (5056, or the 5048 of the legacy form torch
    /// also accepts), checking them as `torch.set_rng_state` does.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming what is wrong: another length, a generator not
    /// seeded, a position (`left`, `next`) outside the 624 words.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != TORCH_RNG_STATE_BYTES && bytes.len() != LEGACY_BYTES {
            return Err(Error::invalid_argument(format!(
                "torch RNG state: {} bytes; torch.get_rng_state() of the CPU generator gives \
                 {TORCH_RNG_STATE_BYTES} (or {LEGACY_BYTES} in its legacy form)",
                bytes.len()
            )));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let i32_at = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let (left, seeded, next) = (i32_at(LEFT), i32_at(SEEDED), u64_at(NEXT));
        if seeded == 0 {
            return Err(Error::invalid_argument(
                "torch RNG state: the generator is marked as not seeded; pass the bytes of \
                 torch.get_rng_state()",
            ));
        }
        // torch checks 0 < left <= N and next <= N; the outputs before the next twist
        // (left - 1) must also read words inside the state, which any state torch wrote
        // satisfies (left + next = N + 1, or 1 + 0 right after seeding).
        let in_range = left > 0 && left as usize <= N && next <= N as u64;
        if !in_range || left as u64 + next > N as u64 + 1 {
            return Err(Error::invalid_argument(format!(
                "torch RNG state: position left={left}, next={next} is outside the {N} words \
                 of the Mersenne Twister; pass the bytes of torch.get_rng_state()"
            )));
        }
        let mut state = [0u32; N];
        for (i, word) in state.iter_mut().enumerate() {
            // torch copies the 64-bit words into its 32-bit state: the low half.
            *word = u64_at(WORDS + 8 * i) as u32;
        }
        let next_double_normal = (i32_at(NORMAL_IS_VALID) != 0)
            .then(|| f64::from_le_bytes(bytes[NORMAL_Y..NORMAL_Y + 8].try_into().expect("8")));
        let next_float_normal =
            (bytes.len() == TORCH_RNG_STATE_BYTES && bytes[FLOAT_NORMAL_IS_VALID] != 0).then(
                || f32::from_le_bytes(bytes[FLOAT_NORMAL..FLOAT_NORMAL + 4].try_into().expect("4")),
            );
        Ok(Self {
            engine: Box::new(Mt19937 {
                seed: u64_at(SEED),
                left: left as u32,
                next: next as u32,
                state,
            }),
            next_double_normal,
            next_float_normal,
        })
    }

    /// The 5056 bytes `torch.get_rng_state()` would give for this state (the unused
    /// legacy fields `normal_x` and `normal_rho` zero, as torch writes them), for
    /// `torch.set_rng_state`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; TORCH_RNG_STATE_BYTES];
        let e = &self.engine;
        out[SEED..SEED + 8].copy_from_slice(&e.seed.to_le_bytes());
        out[LEFT..LEFT + 4].copy_from_slice(&(e.left as i32).to_le_bytes());
        out[SEEDED..SEEDED + 4].copy_from_slice(&1i32.to_le_bytes());
        out[NEXT..NEXT + 8].copy_from_slice(&u64::from(e.next).to_le_bytes());
        for (i, &word) in e.state.iter().enumerate() {
            out[WORDS + 8 * i..WORDS + 8 * i + 8].copy_from_slice(&u64::from(word).to_le_bytes());
        }
        if let Some(y) = self.next_double_normal {
            out[NORMAL_Y..NORMAL_Y + 8].copy_from_slice(&y.to_le_bytes());
            out[NORMAL_IS_VALID..NORMAL_IS_VALID + 4].copy_from_slice(&1i32.to_le_bytes());
        }
        if let Some(x) = self.next_float_normal {
            out[FLOAT_NORMAL..FLOAT_NORMAL + 4].copy_from_slice(&x.to_le_bytes());
            out[FLOAT_NORMAL_IS_VALID] = 1;
        }
        out
    }

    /// `torch.initial_seed()`: the seed the generator was last seeded with.
    pub fn initial_seed(&self) -> u64 {
        self.engine.seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torch_rng::TorchGenerator;

    fn invalid(bytes: &[u8]) -> String {
        match TorchRngState::from_bytes(bytes) {
            Err(Error::InvalidArgument {
                field: None,
                message,
            }) => message,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn refuses_other_lengths_unseeded_states_and_positions_outside_the_words() {
        let good = TorchRngState::manual_seed(3).to_bytes();
        assert!(invalid(&good[..100]).contains("100 bytes"));
        let mut unseeded = good.clone();
        unseeded[SEEDED..SEEDED + 4].copy_from_slice(&0i32.to_le_bytes());
        assert!(invalid(&unseeded).contains("not seeded"));
        for (left, next) in [(0i32, 0u64), (625, 0), (1, 625), (600, 30), (-1, 0)] {
            let mut b = good.clone();
            b[LEFT..LEFT + 4].copy_from_slice(&left.to_le_bytes());
            b[NEXT..NEXT + 8].copy_from_slice(&next.to_le_bytes());
            assert!(invalid(&b).contains("outside"), "left {left} next {next}");
        }
    }

    #[test]
    fn reads_the_legacy_form_and_carries_the_cached_normals() {
        let mut g = TorchGenerator::manual_seed(11);
        let mut v = [0f32; 7];
        g.normal_(&mut v, 0.0, 1.0);
        let mut state = g.state();
        state.next_float_normal = Some(0.5);
        let bytes = state.to_bytes();
        let back = TorchRngState::from_bytes(&bytes).unwrap();
        assert_eq!(back, state);
        assert!(back.next_double_normal.is_some());
        let legacy = TorchRngState::from_bytes(&bytes[..LEGACY_BYTES]).unwrap();
        assert_eq!(legacy.next_float_normal, None);
        assert_eq!(legacy.next_double_normal, state.next_double_normal);
        // The generator made of a state continues the draws of the one it was taken from.
        let mut a = TorchGenerator::from_state(&back);
        let (mut x, mut y) = ([0f32; 40], [0f32; 40]);
        g.normal_(&mut x, 0.0, 1.0);
        a.normal_(&mut y, 0.0, 1.0);
        assert_eq!(x, y);
    }
}
