//! The FlowLM side of many generations at once ([`FlowLmBatch`], used by the batched
//! engine), and its serial fallback over per-generation [`FlowLmSession`]s for runtimes
//! without a batched pass.

use super::{FlowLmSession, Runtime};
use crate::models::model_state::VoiceState;
use crate::{Error, Result};

/// One generation's step in a batched pass.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchStep<'a> {
    /// The generation's slot ([`FlowLmBatch::open`]).
    pub(crate) slot: usize,
    /// The previous normalised latent `[ldim]`; `None` for BOS (a chunk's first step).
    pub(crate) previous: Option<&'a [f32]>,
    /// The flow's noise `[ldim]`.
    pub(crate) noise: &'a [f32],
    /// Flow decode steps.
    pub(crate) decode_steps: usize,
}

/// The FlowLM state of many generations (slots) and the passes that advance them
/// together: queued text prefill in pieces, and one autoregressive step per generation.
pub(crate) trait FlowLmBatch: Send {
    /// A new, empty slot.
    fn open(&mut self) -> Result<usize>;

    /// Frees `slot` (its KV caches).
    fn close(&mut self, slot: usize);

    /// Starts a text chunk on `slot`: copies the voice state with room for the text and
    /// `max_gen_len` frames, and queues the text tokens for prefill.
    ///
    /// # Errors
    /// A voice state that does not fit the model, a token outside the table.
    fn start_chunk(
        &mut self,
        slot: usize,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()>;

    /// Text positions of `slot` still to prefill.
    fn pending_prefill(&self, slot: usize) -> usize;

    /// Whether the passes may use every generation thread (`true`, the default), or one
    /// (`false`: another thread decodes Mimi frames beside each pass, as the engine does
    /// with two threads). The output does not depend on it.
    fn set_wide(&mut self, _wide: bool) {}

    /// One pass: up to `n` queued positions of each `(slot, n)` of `prefill`, and the
    /// `steps` (at most one per slot, none on a slot with prefill pending); the `k`-th
    /// step writes `latents[k·ldim..][..ldim]` and `eos[k]`.
    ///
    /// # Errors
    /// Unknown slots, wrong lengths; the runtime's errors.
    fn run(
        &mut self,
        prefill: &[(usize, usize)],
        steps: &[BatchStep<'_>],
        latents: &mut [f32],
        eos: &mut [f32],
    ) -> Result<()>;
}

/// The error for a slot that is not open.
pub(super) fn no_slot(slot: usize) -> Error {
    Error::Internal(format!("FlowLM batch: slot {slot} is not open"))
}

/// The open slot `slot` of `slots`.
pub(super) fn slot_mut<T>(slots: &mut [Option<T>], slot: usize) -> Result<&mut T> {
    slots
        .get_mut(slot)
        .and_then(Option::as_mut)
        .ok_or_else(|| no_slot(slot))
}

/// Frees slot `slot` of `slots` (nothing if it is not open).
pub(super) fn close_slot<T>(slots: &mut [Option<T>], slot: usize) {
    if let Some(s) = slots.get_mut(slot) {
        *s = None;
    }
}

/// [`FlowLmBatch`] as one [`FlowLmSession`] per slot, stepped in turn (the Candle
/// runtime): prefill happens whole in `start_chunk`.
pub(super) struct SerialBatch<'a> {
    runtime: &'a dyn Runtime,
    slots: Vec<Option<Box<dyn FlowLmSession + 'a>>>,
    ldim: usize,
}

impl<'a> SerialBatch<'a> {
    pub(super) fn new(runtime: &'a dyn Runtime, ldim: usize) -> Self {
        Self {
            runtime,
            slots: Vec::new(),
            ldim,
        }
    }

    fn session(&mut self, slot: usize) -> Result<&mut Box<dyn FlowLmSession + 'a>> {
        slot_mut(&mut self.slots, slot)
    }
}

impl FlowLmBatch for SerialBatch<'_> {
    fn open(&mut self) -> Result<usize> {
        let s = self.runtime.flow_lm_session()?;
        Ok(put_in_free_slot(&mut self.slots, s))
    }

    fn close(&mut self, slot: usize) {
        close_slot(&mut self.slots, slot);
    }

    fn start_chunk(
        &mut self,
        slot: usize,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()> {
        self.session(slot)?.start_chunk(voice, tokens, max_gen_len)
    }

    fn pending_prefill(&self, _slot: usize) -> usize {
        0
    }

    fn run(
        &mut self,
        _prefill: &[(usize, usize)],
        steps: &[BatchStep<'_>],
        latents: &mut [f32],
        eos: &mut [f32],
    ) -> Result<()> {
        let ldim = self.ldim;
        check_outputs(steps.len(), ldim, latents, eos)?;
        for ((s, lat), e) in steps.iter().zip(latents.chunks_exact_mut(ldim)).zip(eos) {
            *e = self
                .session(s.slot)?
                .step(s.previous, s.noise, s.decode_steps, false, lat)?;
        }
        Ok(())
    }
}

/// Puts `value` in the first free slot (or a new one); returns its index.
pub(super) fn put_in_free_slot<T>(slots: &mut Vec<Option<T>>, value: T) -> usize {
    match slots.iter().position(Option::is_none) {
        Some(i) => {
            slots[i] = Some(value);
            i
        }
        None => {
            slots.push(Some(value));
            slots.len() - 1
        }
    }
}

/// Checks the output lengths of a pass of `steps` steps.
pub(super) fn check_outputs(steps: usize, ldim: usize, latents: &[f32], eos: &[f32]) -> Result<()> {
    if latents.len() != steps * ldim || eos.len() != steps {
        return Err(Error::Internal(format!(
            "FlowLM batch: {steps} steps need {} latent values and {steps} EOS logits, got {} \
             and {}",
            steps * ldim,
            latents.len(),
            eos.len()
        )));
    }
    Ok(())
}
