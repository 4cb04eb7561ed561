//! [`MimiDecoderFast`]: the streaming Mimi decoder, one denormalised latent frame to one
//! audio frame, allocation-free after construction. It mirrors
//! `MimiModel.decode_from_latent` of `models/mimi.py` (`pocket-tts` 4.0.1): the
//! quantizer's output projection (`modules/dummy_quantizer.py`), the upsampler
//! (`modules/resample.py`), the decoder transformer and the SEANet decoder.

use pocket_tts_simd::gemm::{self, BView, Init, PackedMatrix};

use super::conv::UpsampleF;
use super::par::Par;
use super::seanet::{SeanetF, SeanetScratchF, SeanetStateF};
use super::tensor_vec;
use super::transformer::{TransformerF, TransformerScratchF, TransformerStreamF};
use crate::models::mimi::{Mimi, MimiSource};
use crate::{Error, Result};

/// Most streams whose SEANet runs as one batch (its buffers are ~3 MB per stream at full
/// size, the transformer's ~0.4 MB): the convs' GEMMs have 16–1920 rows per stream
/// already, and the scratch would otherwise grow with every stream of the batch.
const SEANET_BATCH: usize = 4;

/// The quantizer's output projection (a 1x1 conv `[outer, ldim]`), packed.
struct QuantF {
    matrix: PackedMatrix,
    outer: usize,
    ldim: usize,
}

impl QuantF {
    fn from_tensor(q: &candle_core::Tensor) -> Result<Self> {
        let qd = q.dims().to_vec();
        let [outer, ldim] = qd[..] else {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: quantizer.output_proj.weight has shape {qd:?}"
            )));
        };
        let qw = tensor_vec(q, "quantizer.output_proj.weight")?;
        Ok(Self {
            matrix: PackedMatrix::from_linear(&qw, outer, ldim, |_| 1.0),
            outer,
            ldim,
        })
    }
}

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

/// One frame of one stream for [`MimiDecoderFast::decode_frames`].
#[derive(Debug)]
pub struct MimiFrame<'a> {
    /// The denormalised latent, `[ldim]`.
    pub latent: &'a [f32],
    /// The stream's decoder state.
    pub state: &'a mut MimiDecoderFastState,
    /// The frame's samples, `[channels · frame_size]`, channel-major.
    pub out: &'a mut [f32],
}

/// Streaming state of a [`MimiDecoderFast`]: the upsampler overlap, the transformer KV
/// rings and the SEANet conv histories (a few hundred KB), plus the buffers of a frame
/// decoded alone, allocated by the first [`MimiDecoderFast::decode_frame`] (a stream only
/// ever decoded in batches, [`MimiDecoderFast::decode_frames`], never holds them: a batch
/// uses the [`MimiScratch`] of its thread).
#[derive(Debug, Clone)]
pub struct MimiDecoderFastState {
    up_partial: Vec<f32>,
    transformer: TransformerStreamF,
    seanet: SeanetStateF,
    frames: usize,
    scratch: Option<Box<MimiScratch>>,
}

/// The buffers of a frame of [`MimiDecoderFast::decode_frames`] for some number of
/// streams (grown on demand, then reused): one per thread that decodes batches, not one
/// per stream.
#[derive(Debug, Clone, Default)]
pub struct MimiScratch {
    /// Stacked latents `[n, ldim]`, quantizer outputs `[n, outer]`.
    lat: Vec<f32>,
    q: Vec<f32>,
    /// One stream's upsampler output with its overlap rows.
    up_ext: Vec<f32>,
    /// Stacked transformer input `[n·steps, din]`.
    tin: Vec<f32>,
    transformer: TransformerScratchF,
    seanet: SeanetScratchF,
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
        let v = mimi.view();
        let quant = QuantF::from_tensor(v.quantizer_proj)?;
        let upsample = v.upsample.as_ref().map(UpsampleF::from_view).transpose()?;
        let transformer = TransformerF::from_view(&v.decoder_transformer, "decoder_transformer")?;
        let seanet = SeanetF::from_view(&v.decoder, "decoder")?;
        Self::assemble(
            quant,
            upsample,
            transformer,
            seanet,
            mimi.frame_size(),
            threads,
        )
    }

    /// Builds the fast decoder from `source`, one part at a time: the quantizer's
    /// projection, the upsampler, the decoder transformer and the SEANet decoder are each
    /// read, repacked and dropped before the next is read. The Candle decoder never exists
    /// whole, and the encoder half is not read at all.
    ///
    /// # Errors
    /// [`Error::InvalidData`] for weights that cannot be read or widths that do not chain,
    /// [`Error::Unsupported`] for shapes the fast path does not implement.
    pub fn from_source(source: &MimiSource, threads: usize) -> Result<Self> {
        let read = |e: candle_core::Error| Error::InvalidData(format!("Mimi decoder weights: {e}"));
        let half = super::half_kind(source.decoder_dtype());
        let mut quant = QuantF::from_tensor(&source.load_quantizer_proj().map_err(read)?)?;
        if let Some(kind) = half {
            super::store_half(&mut quant.matrix, kind, "quantizer.output_proj")?;
        }
        let upsample = source
            .load_upsample()
            .map_err(read)?
            .as_ref()
            .map(|u| UpsampleF::from_view(&u.view()))
            .transpose()?;
        let transformer = {
            let t = source.load_decoder_transformer().map_err(read)?;
            let mut f = TransformerF::from_view(&t.view(), "decoder_transformer")?;
            drop(t);
            if let Some(kind) = half {
                f.store_half(kind, "decoder_transformer")?;
            }
            f
        };
        let seanet = {
            let s = source.load_decoder_seanet().map_err(read)?;
            let mut f = SeanetF::from_view(&s.view(), "decoder")?;
            drop(s);
            if let Some(kind) = half {
                f.store_half(kind)?;
            }
            f
        };
        Self::assemble(
            quant,
            upsample,
            transformer,
            seanet,
            source.config().frame_size(),
            threads,
        )
    }

    /// Checks that the parts chain (widths, samples per frame) and puts them together.
    fn assemble(
        quant: QuantF,
        upsample: Option<UpsampleF>,
        transformer: TransformerF,
        seanet: SeanetF,
        frame_size: usize,
        threads: usize,
    ) -> Result<Self> {
        let QuantF {
            matrix,
            outer,
            ldim,
        } = quant;
        let steps = upsample.as_ref().map_or(1, |u| u.stride);
        let up_ch = upsample.as_ref().map_or(outer, |u| u.channels);
        if up_ch != outer || transformer.din != outer || seanet.cin != transformer.dout {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: decoder widths do not chain (quantizer {outer}, upsampler \
                 {up_ch}, transformer {} → {}, SEANet {})",
                transformer.din, transformer.dout, seanet.cin
            )));
        }
        let out_steps = seanet.out_len(steps)?;
        if out_steps != frame_size {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: decoder makes {out_steps} samples per frame, expected {frame_size}"
            )));
        }
        Ok(Self {
            par: Par::new(threads),
            wide: Par::new(threads),
            ldim,
            quant: matrix,
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
            self.wide = Par::new(threads);
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
        let up_partial = match &self.upsample {
            Some(u) => vec![0.0; (u.kernel - u.stride) * u.channels],
            None => Vec::new(),
        };
        MimiDecoderFastState {
            up_partial,
            transformer: self
                .transformer
                .new_stream_state(self.steps)
                .expect("context checked at construction"),
            seanet: self.seanet.new_state(),
            frames: 0,
            scratch: None,
        }
    }

    /// A scratch for batches of up to `streams` streams (it grows when given more).
    ///
    /// # Errors
    /// None in practice (the strides were checked at construction).
    pub fn new_scratch(&self, streams: usize) -> Result<MimiScratch> {
        let mut sc = MimiScratch::default();
        self.fit_scratch(&mut sc, streams)?;
        Ok(sc)
    }

    /// Grows `sc` to hold `streams` streams' frames.
    fn fit_scratch(&self, sc: &mut MimiScratch, streams: usize) -> Result<()> {
        let grow = |v: &mut Vec<f32>, n: usize| {
            if v.len() < n {
                v.resize(n, 0.0);
            }
        };
        let outer = self.quant.m();
        grow(&mut sc.lat, streams * self.ldim);
        grow(&mut sc.q, streams * outer);
        if let Some(u) = &self.upsample {
            grow(&mut sc.up_ext, u.kernel * u.channels);
            grow(&mut sc.tin, streams * self.steps * u.channels);
        }
        self.transformer
            .fit_scratch(&mut sc.transformer, streams, self.steps);
        self.seanet
            .fit_scratch(&mut sc.seanet, streams.min(SEANET_BATCH), self.steps)
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
    /// nothing after the state's first frame (single-threaded).
    pub fn decode_frame(
        &self,
        latent: &[f32],
        state: &mut MimiDecoderFastState,
        out: &mut [f32],
    ) -> Result<()> {
        self.decode_with(&self.par, latent, state, out)
    }

    /// Decodes one frame of each of many streams together: every linear and conv of the
    /// decoder is one GEMM over the rows of all the frames (the streams stacked along the
    /// GEMM's rows, each stream's streaming state its own), so each weight is read from
    /// memory once for all of them instead of once per frame (the decoder's ~41 MB do
    /// not fit the cache). Each stream's result and state are [`Self::decode_frame`]'s,
    /// bit for bit, whatever the other streams and their positions. Single-threaded:
    /// split the frames over threads to use more. `scratch` holds the frames' buffers
    /// (grown to the batch on first use, then reused: allocation-free after that).
    ///
    /// # Errors
    /// As [`Self::decode_frame`], checked for every frame before any is decoded.
    pub fn decode_frames(
        &self,
        frames: &mut [MimiFrame<'_>],
        scratch: &mut MimiScratch,
    ) -> Result<()> {
        for f in frames.iter() {
            self.check_frame(f.latent, f.out)?;
        }
        if frames.is_empty() {
            return Ok(());
        }
        self.fit_scratch(scratch, frames.len())?;
        let n = frames.len();
        for (s, f) in frames.iter().enumerate() {
            scratch.lat[s * self.ldim..(s + 1) * self.ldim].copy_from_slice(f.latent);
        }
        let mut ups = Vec::with_capacity(n);
        let mut trs = Vec::with_capacity(n);
        let mut sns = Vec::with_capacity(n);
        let mut outs = Vec::with_capacity(n);
        for f in frames.iter_mut() {
            let st = &mut *f.state;
            ups.push(&mut st.up_partial);
            trs.push(&mut st.transformer);
            sns.push(&mut st.seanet);
            outs.push(&mut *f.out);
            st.frames += 1;
        }
        self.run_frames(&self.par, &mut ups, &mut trs, &mut sns, &mut outs, scratch)
    }

    /// The frames of `n = trs.len()` streams, their latents stacked in `sc.lat`: the
    /// quantizer's output projection, the upsampler, the transformer (all `n` streams'
    /// rows in each GEMM) and the SEANet (at most [`SEANET_BATCH`] streams at a time, which
    /// bounds the scratch); stream `s`'s audio goes to `outs[s]`.
    fn run_frames(
        &self,
        par: &Par,
        ups: &mut [&mut Vec<f32>],
        trs: &mut [&mut TransformerStreamF],
        sns: &mut [&mut SeanetStateF],
        outs: &mut [&mut [f32]],
        sc: &mut MimiScratch,
    ) -> Result<()> {
        let n = trs.len();
        let outer = self.quant.m();
        gemm::gemm_packed(
            &self.quant,
            BView::dense(&sc.lat, n, self.ldim, self.ldim),
            &mut sc.q,
            outer,
            Init::Zero,
        );
        let x: &[f32] = match &self.upsample {
            Some(u) => {
                let len = self.steps * u.channels;
                for (s, partial) in ups.iter_mut().enumerate() {
                    u.forward(
                        &sc.q[s * outer..(s + 1) * outer],
                        1,
                        partial,
                        &mut sc.up_ext,
                    );
                    sc.tin[s * len..(s + 1) * len].copy_from_slice(&sc.up_ext[..len]);
                }
                &sc.tin
            }
            None => &sc.q,
        };
        let y = self
            .transformer
            .stream_many(par, x, trs, &mut sc.transformer)?;
        let per = self.steps * self.transformer.dout;
        for (c, (sns, outs)) in sns
            .chunks_mut(SEANET_BATCH)
            .zip(outs.chunks_mut(SEANET_BATCH))
            .enumerate()
        {
            let y = &y[c * SEANET_BATCH * per..];
            self.seanet
                .run_many(par, y, self.steps, sns, &mut sc.seanet)?;
            for (s, out) in outs.iter_mut().enumerate() {
                self.write_out(sc.seanet.output(s), out);
            }
        }
        Ok(())
    }

    fn check_frame(&self, latent: &[f32], out: &[f32]) -> Result<()> {
        if latent.len() != self.ldim {
            return Err(Error::invalid_argument(format!(
                "MimiDecoderFast::decode_frame: latent has {} values, expected {}",
                latent.len(),
                self.ldim
            )));
        }
        if out.len() != self.channels * self.frame_size {
            return Err(Error::invalid_argument(format!(
                "MimiDecoderFast::decode_frame: output has {} samples, expected {}",
                out.len(),
                self.channels * self.frame_size
            )));
        }
        Ok(())
    }

    /// `audio` (`[frame_size, channels]`, time-major) into `out`, channel-major.
    fn write_out(&self, audio: &[f32], out: &mut [f32]) {
        if self.channels == 1 {
            out.copy_from_slice(audio);
        } else {
            for (t, row) in audio.chunks_exact(self.channels).enumerate() {
                for (c, &v) in row.iter().enumerate() {
                    out[c * self.frame_size + t] = v;
                }
            }
        }
    }

    fn decode_with(
        &self,
        par: &Par,
        latent: &[f32],
        state: &mut MimiDecoderFastState,
        out: &mut [f32],
    ) -> Result<()> {
        self.check_frame(latent, out)?;
        let MimiDecoderFastState {
            up_partial,
            transformer,
            seanet,
            frames,
            scratch,
        } = state;
        let scratch = match scratch {
            Some(sc) => sc,
            None => scratch.insert(Box::new(self.new_scratch(1)?)),
        };
        scratch.lat[..self.ldim].copy_from_slice(latent);
        *frames += 1;
        self.run_frames(
            par,
            &mut [up_partial],
            &mut [transformer],
            &mut [seanet],
            &mut [out],
            scratch,
        )
    }
}
