//! [`MimiEncoderFast`]: whole-signal Mimi encoding of voice prompts (audio →
//! unquantised latents), multi-threaded. It mirrors `MimiModel.encode_to_latent` of
//! `models/mimi.py` (`pocket-tts` 4.0.1): the SEANet encoder (run in cache-sized
//! streaming chunks), the encoder transformer and the downsampling conv
//! (`modules/resample.py`).

use super::conv::ConvF;
use super::par::Par;
use super::seanet::SeanetF;
use super::transformer::{TransformerBuilder, TransformerF, QB};
use crate::models::mimi::{Mimi, MimiEncoder, MimiSource};
use crate::modules::resample::ConvDownsample1d;
use crate::{Error, Result};

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
/// cache-sized and are reused across chunks (same result as one whole-signal pass). 2:
/// its scratch is 3.8 MiB at full size (4 frames: 7.5 MiB, 16: 16 MiB), which keeps an
/// audio voice's peak memory in f32 under 450 MB, for about 8 % more encoding time than
/// 4 frames (OPTIMIZATION_LOG §15, §37).
const ENCODER_CHUNK_FRAMES: usize = 2;

/// Positions (SEANet output steps: 200 Hz at full size, 16 per frame) per chunk of the
/// encoder transformer: its activations and each layer's key/value window (the last
/// `context − 1` = 249 positions and the chunk) are sized by it, not by the prompt
/// (5.7 MiB at full size, where the whole 8.5 s prompt at once took 36 MiB); 128 is as
/// fast as 256 and the whole prompt, 64 is slower. Chunks leave the latents
/// bit-identical (OPTIMIZATION_LOG §37).
const TRANSFORMER_CHUNK_STEPS: usize = 128;

impl MimiEncoderFast {
    /// Builds the fast encoder from a loaded [`Mimi`] using `threads` threads (2 is a good
    /// choice: nothing else runs during voice encoding).
    ///
    /// # Errors
    /// [`Error::Unsupported`] / [`Error::InvalidData`] for shapes the fast path does not
    /// implement (see [`Self::from_encoder`]).
    pub fn new(mimi: &Mimi, threads: usize) -> Result<Self> {
        Self::from_encoder(mimi.encoder(), threads)
    }

    /// Builds the fast encoder from Mimi's encoder half alone (the weights are repacked:
    /// `encoder` may be dropped afterwards).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for SEANet shapes the fast path does not implement,
    /// [`Error::InvalidData`] for inconsistent widths or hop.
    pub fn from_encoder(encoder: &MimiEncoder, threads: usize) -> Result<Self> {
        let v = encoder.view();
        let seanet = SeanetF::from_view(&v.encoder, "encoder")?;
        let transformer = TransformerF::from_view(&v.encoder_transformer, "encoder_transformer")?;
        let downsample = v
            .downsample
            .as_ref()
            .map(|d| ConvF::from_view(d, "downsample.conv"))
            .transpose()?;
        Self::assemble(
            seanet,
            transformer,
            downsample,
            v.frame_size,
            v.steps_per_latent,
            threads,
        )
    }

    /// Builds the fast encoder from `source`, one part at a time: each layer of the
    /// encoder transformer, the SEANet encoder and the downsampling conv are each read,
    /// repacked (read in place) and dropped before the next is read, so that the Candle
    /// encoder never exists whole next to its repacked copy (peak memory: about the
    /// repacked encoder plus its largest part, the SEANet's 11 MiB at full size).
    ///
    /// # Errors
    /// [`Error::InvalidData`] for weights that cannot be read or inconsistent shapes,
    /// [`Error::Unsupported`] as [`Self::from_encoder`].
    pub fn from_source(source: &MimiSource, threads: usize) -> Result<Self> {
        let read = |e: candle_core::Error| Error::InvalidData(format!("Mimi encoder weights: {e}"));
        // One layer's Candle weights at a time next to the repacked ones.
        let transformer = {
            let mut b = TransformerBuilder::new("encoder_transformer");
            for i in 0..source.encoder_transformer_layers() {
                let layer = source.load_encoder_transformer_layer(i).map_err(read)?;
                b.push(&layer.view())?;
            }
            let p = source
                .load_encoder_transformer_projections()
                .map_err(read)?;
            let v = p.view();
            b.finish(
                v.input_proj.as_ref(),
                v.output_proj.as_ref(),
                v.transformer.max_period,
            )?
        };
        let seanet = {
            let s = source.load_encoder_seanet().map_err(read)?;
            SeanetF::from_view(&s.view(), "encoder")?
        };
        let downsample = source
            .load_downsample()
            .map_err(read)?
            .as_ref()
            .map(|d: &ConvDownsample1d| ConvF::from_view(&d.view(), "downsample.conv"))
            .transpose()?;
        let cfg = source.config();
        Self::assemble(
            seanet,
            transformer,
            downsample,
            cfg.frame_size(),
            cfg.steps_per_latent(),
            threads,
        )
    }

    fn assemble(
        seanet: SeanetF,
        transformer: TransformerF,
        downsample: Option<ConvF>,
        frame_size: usize,
        steps_per_latent: usize,
        threads: usize,
    ) -> Result<Self> {
        if seanet.out_len(frame_size)? != steps_per_latent {
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
            par: Par::new(threads),
            channels: seanet.cin,
            seanet,
            transformer,
            downsample,
            frame_size,
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
            self.par = Par::new(threads);
        }
        Ok(())
    }

    /// Encodes `audio` (`[channels, samples]`, channel-major; mono: just the samples) at
    /// the model sample rate; the end is zero-padded to a whole frame. Returns the latents
    /// `[frames, latent_dim]` row-major (frames at 12.5 Hz at full size).
    ///
    /// The signal streams through the SEANet encoder, the encoder transformer and the
    /// downsampling conv in chunks (`ENCODER_CHUNK_FRAMES` frames, then
    /// `TRANSFORMER_CHUNK_STEPS` transformer positions): the working memory does not
    /// grow with the prompt (only the latents do), and the latents are those of one
    /// whole-signal pass, bit for bit.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for empty audio or a length that is not a multiple of
    /// the channel count.
    pub fn encode(&self, audio: &[f32]) -> Result<Vec<f32>> {
        self.encode_with_chunks(audio, ENCODER_CHUNK_FRAMES, TRANSFORMER_CHUNK_STEPS)
    }

    /// [`Self::encode`] with the SEANet encoder run in chunks of `seanet_frames` frames
    /// (at least 1) and the encoder transformer in chunks of at least `chunk_steps`
    /// positions (rounded up to whole attention blocks of 64 positions and whole strides
    /// of the downsampling conv; a `chunk_steps` of the prompt's length or more runs the
    /// whole prompt at once). The latents are the same, bit for bit, for all chunk sizes:
    /// tests and benchmarks compare them.
    ///
    /// # Errors
    /// As [`Self::encode`].
    #[doc(hidden)]
    pub fn encode_with_chunks(
        &self,
        audio: &[f32],
        seanet_frames: usize,
        chunk_steps: usize,
    ) -> Result<Vec<f32>> {
        let ch = self.channels;
        if audio.is_empty() || !audio.len().is_multiple_of(ch) {
            return Err(Error::invalid_argument(format!(
                "MimiEncoderFast::encode: {} samples is not a positive multiple of {ch} channels",
                audio.len()
            )));
        }
        let len = audio.len() / ch;
        let frames = len.div_ceil(self.frame_size).max(1);
        let padded = frames * self.frame_size;
        let steps = self.seanet.out_len(padded)?;
        let stride = self.downsample.as_ref().map_or(1, |d| d.stride);
        let unit = lcm(QB, stride);
        let mut tf_state = self
            .transformer
            .new_chunked(chunk_steps.clamp(1, steps).next_multiple_of(unit), steps);
        let tc = tf_state.rows();
        // SEANet: chunks of `chunk` samples, time-major, the end zero-padded.
        let chunk = seanet_frames
            .max(1)
            .saturating_mul(self.frame_size)
            .min(padded);
        let mut x = vec![0f32; chunk * ch];
        let mut state = self.seanet.new_state();
        let mut scratch = self.seanet.new_scratch(1, chunk)?;
        let cout = self.seanet.cout;
        // SEANet output not yet through the transformer: `held` rows.
        let mut emb = vec![0f32; (tc + self.seanet.out_len(chunk)?) * cout];
        let mut held = 0;
        let mut down = self.downsample.as_ref().map(|d| Downsample {
            inbuf: vec![0f32; (d.hist + tc) * d.cin],
            first: true,
            out: vec![0f32; tc / d.stride * d.cout],
        });
        let mut latents = Vec::with_capacity(steps / stride * self.latent_dim);
        let mut start = 0;
        while start < padded {
            let n = chunk.min(padded - start);
            for (t, row) in x[..n * ch].chunks_exact_mut(ch).enumerate() {
                let i = start + t;
                for (c, v) in row.iter_mut().enumerate() {
                    *v = if i < len { audio[c * len + i] } else { 0.0 };
                }
            }
            let y = self
                .seanet
                .run(&self.par, &x[..n * ch], n, &mut state, &mut scratch)?;
            emb[held * cout..held * cout + y.len()].copy_from_slice(y);
            held += y.len() / cout;
            start += n;
            // Whole transformer chunks; the rest once the signal is done.
            while held >= tc || (start >= padded && held > 0) {
                let m = held.min(tc);
                let z = self.transformer.forward_chunk(
                    &self.par,
                    &emb[..m * cout],
                    m,
                    &mut tf_state,
                )?;
                match (&self.downsample, &mut down) {
                    (Some(d), Some(b)) => {
                        b.inbuf[d.hist * d.cin..(d.hist + m) * d.cin].copy_from_slice(z);
                        let out_steps = d.out_len(m)?;
                        let out = &mut b.out[..out_steps * d.cout];
                        d.forward_once(&self.par, &mut b.inbuf, &mut b.first, m, out)?;
                        latents.extend_from_slice(out);
                    }
                    _ => latents.extend_from_slice(z),
                }
                emb.copy_within(m * cout..held * cout, 0);
                held -= m;
            }
        }
        Ok(latents)
    }
}

/// The downsampling conv's buffers across the chunks of an encoding: history then input
/// rows (`[hist + rows, cin]`), whether the first chunk is still to come (replicate
/// padding), one chunk's output (`[rows / stride, cout]`).
struct Downsample {
    inbuf: Vec<f32>,
    first: bool,
    out: Vec<f32>,
}

/// Least common multiple (`a`, `b` > 0).
fn lcm(a: usize, b: usize) -> usize {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}
