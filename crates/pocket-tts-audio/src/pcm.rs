//! Samples to 16-bit integers.

/// `f32` samples in `[-1, 1]` to 16-bit integers as the reference writes them
/// (`data/audio.py`: `clamp(x, -1, 1) * 32767`, truncated toward zero), appended to `out`.
pub fn to_i16(samples: &[f32], out: &mut Vec<i16>) {
    out.extend(
        samples
            .iter()
            .map(|&x| (x.clamp(-1.0, 1.0) * 32767.0) as i16),
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn clamps_and_truncates_like_the_reference() {
        let mut out = Vec::new();
        super::to_i16(&[0.5, -1.5, 1.0, f32::NAN], &mut out);
        assert_eq!(out, vec![16383, -32767, 32767, 0]);
    }
}
