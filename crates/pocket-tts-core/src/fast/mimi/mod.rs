//! Mimi on plain `f32` buffers: [`MimiDecoderFast`] (one latent frame → one audio frame,
//! allocation-free after construction) and [`MimiEncoderFast`] (whole-signal voice
//! encoding, multi-threaded).
//!
//! Both run the computation of the Candle [`Mimi`] (reference: `models/mimi.py`,
//! `modules/conv.py`, `seanet.py`, `resample.py`, `transformer.py`, `attention.py`) with
//! every activation stored time-major (`[T, C]`), so that:
//!
//! * every causal conv is one GEMM read in place from a buffer holding the conv's history
//!   rows followed by the new input rows (the im2col row of an output step is a contiguous
//!   run of input rows); the history roll is one `copy_within`;
//! * every transposed conv is one GEMM to `[T, K·C_out]` and an overlap-add;
//! * the transformer's linear layers are GEMMs over the step rows, LayerScale and the
//!   attention scale folded into the packed weights.
//!
//! The GEMM (`gemm.rs`) keeps weights packed in 64-column panels and runs an
//! AVX-512 / AVX2+FMA / scalar micro-kernel chosen at run time. ELU, tanh-GELU, softmax
//! and layer norm come from `pocket-tts-simd`.
//!
//! The decoder transformer keeps, per layer, a ring of the last `context − 1 + 16` keys
//! and values: a frame's 16 queries never see anything older (the reference's mask), so
//! the state stays fixed-size forever. Weights are copied and re-packed once at
//! construction (≈ 40 MB for the decoder of the released model).
//!
//! # Example
//! ```no_run
//! # fn demo(mimi: &pocket_tts_core::models::mimi::Mimi, latents: &[[f32; 32]]) -> pocket_tts_core::Result<()> {
//! use pocket_tts_core::fast::mimi::MimiDecoderFast;
//! let dec = MimiDecoderFast::new(mimi)?;
//! let mut state = dec.new_state();
//! let mut audio = vec![0f32; dec.frame_size()];
//! for latent in latents {
//!     dec.decode_frame(latent, &mut state, &mut audio)?; // no allocation
//! }
//! # Ok(()) }
//! ```

mod gemm;
mod ops;

use gemm::{BView, Init, PackedMatrix};
use ops::{ConvF, Par, SeanetF, SeanetStateF, TransformerF, TransformerStreamF, UpsampleF};

use crate::models::mimi::Mimi;
use crate::{Error, Result};

/// Allocation-free streaming Mimi decoder: one denormalised latent frame (`[ldim]`) to
/// `frame_size` samples per channel, exactly like [`Mimi::decode_from_latent`] with its
/// streaming state.
#[derive(Debug)]
pub struct MimiDecoderFast {
    par: Par,
    /// Threads of [`Self::decode_frame_wide`] (see [`Self::set_wide_threads`]).
    wide: Par,
    ldim: usize,
    /// Quantizer output projection (1×1 conv), `A[ldim, outer]`.
    quant: PackedMatrix,
    upsample: Option<UpsampleF>,
    transformer: TransformerF,
    seanet: SeanetF,
    /// Transformer steps per latent frame (16).
    steps: usize,
    frame_size: usize,
    channels: usize,
}

/// Streaming state of a [`MimiDecoderFast`]: the upsampler overlap, the transformer KV
/// rings and the SEANet conv histories, plus every scratch buffer of a frame.
#[derive(Debug, Clone)]
pub struct MimiDecoderFastState {
    q: Vec<f32>,
    up_partial: Vec<f32>,
    up_ext: Vec<f32>,
    transformer: TransformerStreamF,
    seanet: SeanetStateF,
    frames: usize,
}

impl MimiDecoderFastState {
    /// Frames decoded since construction or the last reset.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

impl MimiDecoderFast {
    /// Builds the fast decoder from a loaded [`Mimi`] (weights are copied and re-packed),
    /// single-threaded.
    pub fn new(mimi: &Mimi) -> Result<Self> {
        Self::with_threads(mimi, 1)
    }

    /// Like [`MimiDecoderFast::new`], splitting each GEMM across `threads` threads
    /// (a [`pocket_tts_simd::Team`] whose helpers spin for a moment after each job, so only
    /// use it when those cores are otherwise idle). In generation the FlowLM runs on the
    /// other core, so the default is 1.
    pub fn with_threads(mimi: &Mimi, threads: usize) -> Result<Self> {
        let q = &mimi.quantizer_proj;
        let qd = q.dims().to_vec();
        if qd.len() != 2 {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: quantizer.output_proj.weight has shape {qd:?}"
            )));
        }
        let (outer, ldim) = (qd[0], qd[1]);
        let qw = ops::tensor_vec(q, "quantizer.output_proj.weight")?;
        let quant = PackedMatrix::from_linear(&qw, outer, ldim, |_| 1.0);
        let upsample = mimi
            .upsample
            .as_ref()
            .map(|u| UpsampleF::from_candle(&u.convtr))
            .transpose()?;
        let steps = upsample.as_ref().map_or(1, |u| u.stride);
        let transformer =
            TransformerF::from_candle(&mimi.decoder_transformer, "decoder_transformer")?;
        let seanet = SeanetF::from_layers(&mimi.decoder.layers, "decoder")?;
        let up_ch = upsample.as_ref().map_or(outer, |u| u.channels);
        if up_ch != outer || transformer.din != outer || seanet.cin != transformer.dout {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: decoder widths do not chain (quantizer {outer}, upsampler \
                 {up_ch}, transformer {} → {}, SEANet {})",
                transformer.din, transformer.dout, seanet.cin
            )));
        }
        let out_steps = seanet.out_len(steps)?;
        if out_steps != mimi.frame_size() {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: decoder makes {out_steps} samples per frame, expected {}",
                mimi.frame_size()
            )));
        }
        Ok(Self {
            par: Par::new(threads)?,
            wide: Par::new(threads)?,
            ldim,
            quant,
            channels: seanet.cout,
            upsample,
            transformer,
            seanet,
            steps,
            frame_size: out_steps,
        })
    }

    /// Latent width (32).
    pub fn latent_dim(&self) -> usize {
        self.ldim
    }

    /// Samples per channel per frame (1920).
    pub fn frame_size(&self) -> usize {
        self.frame_size
    }

    /// Audio channels (1).
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Threads each frame is split across.
    pub fn threads(&self) -> usize {
        self.par.threads()
    }

    /// Threads of [`Self::decode_frame_wide`] (default: those of [`Self::threads`]).
    ///
    /// # Errors
    /// None in practice (kept for symmetry with construction).
    pub fn set_wide_threads(&mut self, threads: usize) -> Result<()> {
        if threads.max(1) != self.wide.threads() {
            self.wide = Par::new(threads)?;
        }
        Ok(())
    }

    /// [`Self::decode_frame`] split over the [`Self::set_wide_threads`] threads: for a
    /// frame decoded while the FlowLM waits, such as the first frame of a generation (it
    /// shortens the time to first audio). Same result as [`Self::decode_frame`].
    ///
    /// # Errors
    /// As [`Self::decode_frame`].
    pub fn decode_frame_wide(
        &self,
        latent: &[f32],
        state: &mut MimiDecoderFastState,
        out: &mut [f32],
    ) -> Result<()> {
        self.decode_with(&self.wide, latent, state, out)
    }

    /// A fresh state (allocates every buffer a frame needs).
    pub fn new_state(&self) -> MimiDecoderFastState {
        let outer = self.quant.m();
        let (up_partial, up_ext) = match &self.upsample {
            Some(u) => (
                vec![0.0; (u.kernel - u.stride) * u.channels],
                vec![0.0; u.kernel * u.channels],
            ),
            None => (Vec::new(), Vec::new()),
        };
        MimiDecoderFastState {
            q: vec![0.0; outer],
            up_partial,
            up_ext,
            transformer: self
                .transformer
                .new_stream_state(self.steps)
                .expect("context checked at construction"),
            seanet: self
                .seanet
                .new_state(self.steps)
                .expect("strides checked at construction"),
            frames: 0,
        }
    }

    /// Resets `state` to the start of a stream without allocating.
    pub fn reset(&self, state: &mut MimiDecoderFastState) {
        state.up_partial.fill(0.0);
        state.transformer.reset();
        state.seanet.reset();
        state.frames = 0;
    }

    /// Decodes one latent frame (`latent`: `[ldim]`, denormalised) into `out`
    /// (`[channels · frame_size]`, channel-major), continuing from `state`. Allocates
    /// nothing (single-threaded).
    pub fn decode_frame(
        &self,
        latent: &[f32],
        state: &mut MimiDecoderFastState,
        out: &mut [f32],
    ) -> Result<()> {
        self.decode_with(&self.par, latent, state, out)
    }

    fn decode_with(
        &self,
        par: &Par,
        latent: &[f32],
        state: &mut MimiDecoderFastState,
        out: &mut [f32],
    ) -> Result<()> {
        if latent.len() != self.ldim {
            return Err(Error::InvalidArgument(format!(
                "MimiDecoderFast::decode_frame: latent has {} values, expected {}",
                latent.len(),
                self.ldim
            )));
        }
        if out.len() != self.channels * self.frame_size {
            return Err(Error::InvalidArgument(format!(
                "MimiDecoderFast::decode_frame: output has {} samples, expected {}",
                out.len(),
                self.channels * self.frame_size
            )));
        }
        gemm::gemm_packed(
            &self.quant,
            BView::dense(latent, 1, self.ldim, self.ldim),
            &mut state.q,
            self.quant.m(),
            Init::Zero,
        );
        let x: &[f32] = match &self.upsample {
            Some(u) => {
                u.forward(&state.q, 1, &mut state.up_partial, &mut state.up_ext);
                &state.up_ext[..self.steps * u.channels]
            }
            None => &state.q,
        };
        let y = self
            .transformer
            .forward_stream(par, x, &mut state.transformer);
        let audio = self.seanet.run(par, y, self.steps, &mut state.seanet)?;
        if self.channels == 1 {
            out.copy_from_slice(audio);
        } else {
            for (t, row) in audio.chunks_exact(self.channels).enumerate() {
                for (c, &v) in row.iter().enumerate() {
                    out[c * self.frame_size + t] = v;
                }
            }
        }
        state.frames += 1;
        Ok(())
    }
}

/// Whole-signal Mimi encoder (voice prompts): audio → unquantised latents, exactly like
/// [`Mimi::encode_to_latent`], multi-threaded.
#[derive(Debug)]
pub struct MimiEncoderFast {
    par: Par,
    seanet: SeanetF,
    transformer: TransformerF,
    downsample: Option<ConvF>,
    frame_size: usize,
    channels: usize,
    latent_dim: usize,
}

/// Audio frames (1920 samples) per SEANet streaming chunk of the encoder: buffers stay
/// cache-sized and are reused across chunks (same result as one whole-signal pass).
const ENCODER_CHUNK_FRAMES: usize = 16;

impl MimiEncoderFast {
    /// Builds the fast encoder from a loaded [`Mimi`] using `threads` threads (2 is a good
    /// choice: nothing else runs during voice encoding).
    pub fn new(mimi: &Mimi, threads: usize) -> Result<Self> {
        let seanet = SeanetF::from_layers(&mimi.encoder.layers, "encoder")?;
        let transformer =
            TransformerF::from_candle(&mimi.encoder_transformer, "encoder_transformer")?;
        let downsample = mimi
            .downsample
            .as_ref()
            .map(|d| ConvF::from_candle(&d.conv, "downsample.conv"))
            .transpose()?;
        if seanet.out_len(mimi.frame_size())? != mimi.steps_per_latent() {
            return Err(Error::InvalidData(
                "Mimi fast path: encoder hop does not match the frame rate".into(),
            ));
        }
        if transformer.din != seanet.cout {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: encoder SEANet makes {} channels, transformer takes {}",
                seanet.cout, transformer.din
            )));
        }
        let latent_dim = downsample.as_ref().map_or(transformer.dout, |d| d.cout);
        Ok(Self {
            par: Par::new(threads)?,
            channels: seanet.cin,
            seanet,
            transformer,
            downsample,
            frame_size: mimi.frame_size(),
            latent_dim,
        })
    }

    /// Latent width (`inner_dim`, 32).
    pub fn latent_dim(&self) -> usize {
        self.latent_dim
    }

    /// Threads each encoding is split across.
    pub fn threads(&self) -> usize {
        self.par.threads()
    }

    /// Changes [`Self::threads`] (at least 1).
    ///
    /// # Errors
    /// None in practice (kept for symmetry with construction).
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        if threads.max(1) != self.par.threads() {
            self.par = Par::new(threads)?;
        }
        Ok(())
    }

    /// Encodes `audio` (`[channels, samples]`, channel-major; mono: just the samples) at
    /// the model sample rate; the end is zero-padded to a whole frame. Returns the latents
    /// `[frames, latent_dim]` row-major.
    pub fn encode(&self, audio: &[f32]) -> Result<Vec<f32>> {
        let ch = self.channels;
        if audio.is_empty() || !audio.len().is_multiple_of(ch) {
            return Err(Error::InvalidArgument(format!(
                "MimiEncoderFast::encode: {} samples is not a positive multiple of {ch} channels",
                audio.len()
            )));
        }
        let len = audio.len() / ch;
        let frames = len.div_ceil(self.frame_size).max(1);
        let padded = frames * self.frame_size;
        // Time-major input, zero-padded at the end.
        let mut x = vec![0f32; padded * ch];
        for c in 0..ch {
            for (t, &v) in audio[c * len..(c + 1) * len].iter().enumerate() {
                x[t * ch + c] = v;
            }
        }
        let chunk = ENCODER_CHUNK_FRAMES * self.frame_size;
        let mut state = self.seanet.new_state(chunk.min(padded))?;
        let steps = self.seanet.out_len(padded)?;
        let mut emb = Vec::with_capacity(steps * self.seanet.cout);
        let mut start = 0;
        while start < padded {
            let n = chunk.min(padded - start);
            let y = self
                .seanet
                .run(&self.par, &x[start * ch..(start + n) * ch], n, &mut state)?;
            emb.extend_from_slice(y);
            start += n;
        }
        drop(state);
        let z = self.transformer.forward_full(&self.par, &emb, steps);
        match &self.downsample {
            None => Ok(z),
            Some(d) => {
                let mut inbuf = vec![0f32; (d.hist + steps) * d.cin];
                inbuf[d.hist * d.cin..].copy_from_slice(&z[..steps * d.cin]);
                drop(z);
                let out_steps = steps / d.stride;
                let mut out = vec![0f32; out_steps * d.cout];
                let mut first = true;
                d.forward_once(&self.par, &mut inbuf, &mut first, steps, &mut out)?;
                Ok(out)
            }
        }
    }
}
