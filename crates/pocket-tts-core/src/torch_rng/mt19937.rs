//! The 32-bit Mersenne Twister (Matsumoto & Nishimura 1998) as torch seeds and runs it
//! (torch 2.15.0 `aten/src/ATen/core/MT19937RNGEngine.h`: the standard MT19937, same
//! outputs as C++'s `std::mt19937`, initialised from the seed's low 32 bits). The state is
//! kept as torch keeps it (`mt19937_data_pod`: seed, `left`, `next`, 624 words), so that
//! `torch.get_rng_state()`'s bytes can be read and written back exactly
//! ([`super::TorchRngState`]).

/// Words of state (`MERSENNE_STATE_N`).
pub(super) const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// MT19937: 624 words of state, one tempered 32-bit output per call.
#[derive(Clone, PartialEq, Eq)]
pub struct Mt19937 {
    /// The seed it was initialised with, all 64 bits (torch's `initial_seed()`).
    pub(super) seed: u64,
    /// Outputs left before the next twist, plus one (torch's `left_`): the output that
    /// brings it to 0 twists first. 1 right after seeding.
    pub(super) left: u32,
    /// Index of the next word to temper (torch's `next_`).
    pub(super) next: u32,
    pub(super) state: [u32; N],
}

impl Mt19937 {
    /// The engine seeded with `seed`'s low 32 bits (torch's `mt19937(seed)`).
    pub fn new(seed: u64) -> Self {
        let mut state = [0u32; N];
        state[0] = seed as u32;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Self {
            seed,
            left: 1,
            next: 0,
            state,
        }
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.state[i] & UPPER_MASK) | (self.state[(i + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.state[i] = self.state[(i + M) % N] ^ (y >> 1) ^ mag;
        }
        self.left = N as u32;
        self.next = 0;
    }

    /// The next 32-bit output.
    pub fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.twist();
        }
        let mut y = self.state[self.next as usize];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }
}

#[cfg(test)]
mod tests {
    use super::Mt19937;

    #[test]
    fn matches_the_cpp_standard_check_value() {
        // [rand.predef]: the 10000th output of a default-constructed std::mt19937 (seed
        // 5489) is 4123659995.
        let mut mt = Mt19937::new(5489);
        let mut last = 0;
        for _ in 0..10_000 {
            last = mt.next_u32();
        }
        assert_eq!(last, 4_123_659_995);
    }

    #[test]
    fn keeps_the_low_32_bits_of_the_seed() {
        let mut a = Mt19937::new(7);
        let mut b = Mt19937::new((1 << 32) + 7);
        for _ in 0..1000 {
            assert_eq!(a.next_u32(), b.next_u32());
        }
    }

    #[test]
    fn counts_left_and_next_as_torch_does() {
        // torch.manual_seed(5); 32 draws: get_rng_state() shows left 593, next 32.
        let mut mt = Mt19937::new(5);
        assert_eq!((mt.left, mt.next), (1, 0));
        for _ in 0..32 {
            mt.next_u32();
        }
        assert_eq!((mt.left, mt.next), (593, 32));
    }
}
