"""Kyutai's Pocket TTS in Rust, with the Python API of the reference package ``pocket_tts``.

``from pocket_tts_rs import TTSModel`` replaces ``from pocket_tts import TTSModel``: the
same calls, arguments, defaults and return types (``pocket_tts`` 4.0.1), the same audio
(within 1e-3 at temperature 0), without torch. Differences a program may notice:

- audio is a ``torch.Tensor`` when torch can be imported, else a ``numpy.ndarray``
  (1-D ``float32``) that also has torch's ``.numpy()``; never a copy of the Rust buffer;
- a ``TTSModel`` is safe to share between threads: the GIL is released while generating,
  and calls made while another runs are batched together;
- a voice state is a :class:`ModelState` (shared between threads), not a dict of
  tensors; ``copy_state=False`` replaces its content once the generation has run to its
  end (the reference changes it step by step);
- ``load_model(checkpoint=...)`` (training ``.pt`` files) is refused;
- the sampling noise comes from torch's default generator as in the reference (when torch
  is importable and no ``seed`` is given), but ``load_model`` and
  ``get_state_for_audio_prompt`` do not draw from it as the reference's do: call
  ``torch.manual_seed`` right before generating to get the reference's audio for a seed.

Log records go to the ``logging`` logger ``pocket_tts_rs`` (no handler is added).
"""

from pocket_tts_rs._model import ModelState, TTSModel, export_model_state

__all__ = ["ModelState", "TTSModel", "export_model_state"]
