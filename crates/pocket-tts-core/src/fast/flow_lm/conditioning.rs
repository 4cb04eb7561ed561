//! Conditioning inputs of [`FlowLmFast::prefill`]: text token embeddings (Python package
//! pocket-tts 4.0.1: `modules/text_conditioner.py`, `LUTConditioner`) and the voice
//! prompt's projected Mimi latents (`models/flow_lm.py`, the speaker projection).

use super::par::matmul_wt;
use super::FlowLmFast;
#[cfg(doc)]
use crate::models::flow_lm::FlowLm;
use crate::{Error, Result};

impl FlowLmFast {
    /// Text token ids → embeddings `[tokens.len(), dim]` in `out` (replaced): lookup-table
    /// rows, projected when the table is low-rank (reference: `LUTConditioner`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a token id outside the table.
    pub fn embed_tokens(&self, tokens: &[u32], out: &mut Vec<f32>) -> Result<()> {
        let (d, w) = (self.dims.d, self.lut_width);
        out.clear();
        out.resize(tokens.len() * d, 0.0);
        let table = self.lut.get();
        // Only a quantized projection would use it (none is: no allocation).
        let mut xq = pocket_tts_simd::QuantizedVector::with_capacity(0);
        for (i, &tok) in tokens.iter().enumerate() {
            let t = tok as usize;
            if t >= self.lut_rows {
                return Err(Error::invalid_argument(format!(
                    "token id {tok} is outside the lookup table ({} rows)",
                    self.lut_rows
                )));
            }
            let row = &table[t * w..(t + 1) * w];
            let dst = &mut out[i * d..(i + 1) * d];
            match &self.lut_proj {
                Some(p) => p.apply(row, &mut xq, dst, false),
                None => dst.copy_from_slice(row),
            }
        }
        Ok(())
    }

    /// Voice conditioning: Mimi latents `[frames, speaker_dim]` → `[(1 +) frames, dim]` in
    /// `out` (replaced), prefixed with the learnt BOS row when the model has one
    /// (Candle: [`FlowLm::voice_conditioning`]). Feed it to [`Self::prefill`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `latents` is not a whole number of frames.
    pub fn voice_conditioning(&self, latents: &[f32], out: &mut Vec<f32>) -> Result<()> {
        let (d, sd) = (self.dims.d, self.speaker_dim);
        if sd == 0 || !latents.len().is_multiple_of(sd) {
            return Err(Error::invalid_argument(format!(
                "voice latents have {} values, not a multiple of the latent width {sd}",
                latents.len()
            )));
        }
        let frames = latents.len() / sd;
        let head = usize::from(self.bos_before_voice.is_some());
        out.clear();
        out.resize((head + frames) * d, 0.0);
        if let Some(b) = &self.bos_before_voice {
            out[..d].copy_from_slice(&b.get());
        }
        let w = self.speaker_proj.get();
        matmul_wt(
            latents,
            frames,
            &w,
            d,
            sd,
            &mut out[head * d..],
            None,
            false,
            &self.prefill_team,
        );
        Ok(())
    }
}
