//! Rotary positional embedding (RoPE, Su et al. 2021) with interleaved pairs, as the
//! reference's `modules/rope.py` `apply_rope`: pairs `(x[2i], x[2i+1])` are rotated by
//! `t * max_period^(-2i/D)`.

use std::sync::Mutex;

use candle_core::{Device, Result, Tensor};

/// Cached cos/sin tables `[positions, D/2]`, grown on demand.
#[derive(Debug)]
pub struct RotaryEmbedding {
    max_period: f64,
    head_dim: usize,
    table: Mutex<Option<(usize, Tensor, Tensor)>>,
}

impl Clone for RotaryEmbedding {
    fn clone(&self) -> Self {
        Self::new(self.max_period, self.head_dim)
    }
}

impl RotaryEmbedding {
    /// A RoPE for heads of width `head_dim` (even).
    pub fn new(max_period: f64, head_dim: usize) -> Self {
        Self {
            max_period,
            head_dim,
            table: Mutex::new(None),
        }
    }

    /// The maximum period `P`: pair `i` of a head at position `t` is rotated by
    /// `t · P^(-2i / head_dim)`.
    pub fn max_period(&self) -> f64 {
        self.max_period
    }

    fn build(&self, positions: usize, device: &Device) -> Result<(Tensor, Tensor)> {
        let half = self.head_dim / 2;
        // Same arithmetic as the reference, in f32: freqs = exp(ds * (-ln(P) * 2 / D)).
        let scale = (-(self.max_period.ln()) * 2.0 / self.head_dim as f64) as f32;
        let freqs: Vec<f32> = (0..half).map(|d| (d as f32 * scale).exp()).collect();
        let mut cos = Vec::with_capacity(positions * half);
        let mut sin = Vec::with_capacity(positions * half);
        for t in 0..positions {
            for &f in &freqs {
                let angle = f * t as f32;
                cos.push((angle as f64).cos() as f32);
                sin.push((angle as f64).sin() as f32);
            }
        }
        Ok((
            Tensor::from_vec(cos, (positions, half), device)?,
            Tensor::from_vec(sin, (positions, half), device)?,
        ))
    }

    /// cos and sin for positions `offset..offset + len`, each `[len, D/2]`.
    pub fn cos_sin(&self, offset: usize, len: usize, device: &Device) -> Result<(Tensor, Tensor)> {
        let needed = offset + len;
        let mut guard = self
            .table
            .lock()
            .map_err(|_| candle_core::Error::Msg("RoPE table lock poisoned".into()))?;
        let rebuild = !matches!(&*guard, Some((n, _, _)) if *n >= needed);
        if rebuild {
            let size = needed.max(1024).next_power_of_two();
            let (c, s) = self.build(size, device)?;
            *guard = Some((size, c, s));
        }
        let (_, c, s) = guard.as_ref().expect("table was just built");
        Ok((c.narrow(0, offset, len)?, s.narrow(0, offset, len)?))
    }

    /// Rotates `x` of shape `[B, H, T, D]` whose first position is `offset`.
    pub fn apply(&self, x: &Tensor, offset: usize) -> Result<Tensor> {
        let (_, _, t, _) = x.dims4()?;
        let (cos, sin) = self.cos_sin(offset, t, x.device())?;
        candle_nn::rotary_emb::rope_i(&x.contiguous()?, &cos, &sin)
    }
}
