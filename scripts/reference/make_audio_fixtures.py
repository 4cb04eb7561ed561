#!/usr/bin/env python3
"""Makes the audio fixtures of `crates/pocket-tts-core/tests/integration/audio.rs` with the Python reference.

Run with the reference installed (pocket-tts 4.0.1, soundfile, scipy):

    python scripts/reference/make_audio_fixtures.py [--assets ../shared/assets]

Inputs: `ref.wav` (made by scripts/reference/make_ref_wav.sh) and the real speech in the shared test
assets (never copied whole: only short excerpts, processed, go into the fixtures).

Outputs, under crates/pocket-tts-core/tests/fixtures/:
- audio/*.wav|flac|mp3|ogg: short files in many formats, written by soundfile (libsndfile),
  except pcm16/stereo_pcm16 which are written by the `wave` module (the reference's own path).
- audio/read_expected.safetensors: for each file above, what the reference's `audio_read`
  returns (mono float32, channels averaged); metadata "<name>.rate" holds the sample rate.
  The `wave` module the reference uses for every .wav rejects float and WAVE_FORMAT_EXTENSIBLE
  files; for those the expected output is the reference's soundfile path ("<name>.reader").
- audio/resample_case.safetensors: inputs and `scipy.signal.resample_poly` outputs (the
  reference's `convert_audio`) for a 16 kHz chirp, a 16 kHz speech excerpt and a 44.1 kHz chirp.
- audio/wav_writer_input.safetensors + audio/streamed_reference.wav + audio/seekable_reference.wav:
  a known signal in two chunks and the bytes `StreamingWAVWriter` writes for it to an
  unseekable stream (header with nframes = 1e9, never patched) and to a seekable file.
- end_on_pause_case.safetensors: excerpts of real speech and the reference `end_on_pause` output.
"""

import argparse
import io
import os
import wave
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from safetensors.numpy import save_file
from scipy.signal import resample_poly

from pocket_tts.data.audio import StreamingWAVWriter, _audio_read_with_soundfile, audio_read
from pocket_tts.data.audio_utils import convert_audio, end_on_pause

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "crates" / "pocket-tts-core" / "tests" / "fixtures"
AUDIO = FIXTURES / "audio"


def write_wave_pcm16(path: Path, frames: np.ndarray, rate: int):
    """Writes int16 frames [T] or [T, C] with the standard library, like the reference."""
    channels = 1 if frames.ndim == 1 else frames.shape[1]
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames.astype("<i2").tobytes())


def chirp(rate: int, seconds: float, f0: float, f1: float, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
    return (amp * np.sin(phase)).astype(np.float32)


class Unseekable(io.RawIOBase):
    """A write-only stream without seek/tell, like a pipe on stdout."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def seekable(self):
        return False

    def write(self, b):
        self.buf += bytes(b)
        return len(b)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--assets",
        default=os.environ.get("POCKET_TTS_ASSETS", str(REPO.parent / "shared" / "assets")),
    )
    args = parser.parse_args()
    speech_dir = Path(args.assets) / "speech"
    AUDIO.mkdir(parents=True, exist_ok=True)

    # ---- read fixtures: a 0.1 s excerpt of ref.wav in many encodings ----
    ref, ref_rate = sf.read(str(REPO / "ref.wav"), dtype="float32")
    assert ref_rate == 24000
    start = int(1.0 * ref_rate)
    short = ref[start : start + 2400]  # 0.1 s
    longer = ref[start : start + 12000]  # 0.5 s
    sine = (0.25 * np.sin(2 * np.pi * 440 * np.arange(len(short)) / ref_rate)).astype(np.float32)

    files = {}
    write_wave_pcm16(AUDIO / "pcm16.wav", np.round(short * 32767), ref_rate)
    files["pcm16.wav"] = None
    write_wave_pcm16(
        AUDIO / "stereo_pcm16.wav", np.round(np.stack([short, sine], 1) * 32767), ref_rate
    )
    files["stereo_pcm16.wav"] = None
    for name, subtype in [
        ("pcm8.wav", "PCM_U8"),
        ("pcm24.wav", "PCM_24"),
        ("pcm32.wav", "PCM_32"),
        ("float32.wav", "FLOAT"),
        ("float64.wav", "DOUBLE"),
    ]:
        sf.write(str(AUDIO / name), short, ref_rate, subtype=subtype, format="WAV")
        files[name] = None
    # WAVE_FORMAT_EXTENSIBLE, three channels, 24-bit.
    three = np.stack([short, sine, -short], 1)
    sf.write(str(AUDIO / "ext3_pcm24.wav"), three, ref_rate, subtype="PCM_24", format="WAVEX")
    files["ext3_pcm24.wav"] = None
    sf.write(str(AUDIO / "stereo_float32.wav"), np.stack([short, sine], 1), ref_rate, "FLOAT")
    files["stereo_float32.wav"] = None
    # Compressed: 0.5 s. FLAC at 16 kHz (exercises a non-24 kHz rate), MP3 and Vorbis at 24 kHz.
    longer_16k = resample_poly(longer, 2, 3).astype(np.float32)
    sf.write(str(AUDIO / "speech_16k.flac"), longer_16k, 16000, subtype="PCM_16", format="FLAC")
    files["speech_16k.flac"] = None
    sf.write(str(AUDIO / "speech_24k.mp3"), longer, ref_rate, format="MP3")
    files["speech_24k.mp3"] = None
    sf.write(str(AUDIO / "speech_24k.ogg"), longer, ref_rate, format="OGG", subtype="VORBIS")
    files["speech_24k.ogg"] = None

    tensors, meta = {}, {}
    for name in files:
        try:
            wav, rate = audio_read(AUDIO / name)
            meta[name + ".reader"] = "audio_read"
        except wave.Error:
            # The reference sends every .wav to the `wave` module, which rejects float and
            # WAVE_FORMAT_EXTENSIBLE files (Python 3.11); what it would return is soundfile's.
            wav, rate = _audio_read_with_soundfile(AUDIO / name)
            meta[name + ".reader"] = "soundfile"
        tensors[name] = wav[0].numpy().astype(np.float32)
        meta[name + ".rate"] = str(rate)
        print(f"{name}: {(AUDIO / name).stat().st_size} bytes, {rate} Hz, {wav.shape[-1]} samples,"
              f" via {meta[name + '.reader']}")
    save_file(tensors, str(AUDIO / "read_expected.safetensors"), metadata=meta)

    # ---- resampling: the reference convert_audio (scipy resample_poly) ----
    speech16, rate16 = sf.read(str(speech_dir / "jfk_16k.wav"), dtype="float32")
    assert rate16 == 16000
    cases = {
        "chirp16k": (chirp(16000, 0.5, 50.0, 7000.0), 16000, 24000),
        "speech16k": (speech16[int(1.0 * rate16) : int(1.5 * rate16)].copy(), 16000, 24000),
        "chirp44k": (chirp(44100, 0.25, 50.0, 10000.0), 44100, 24000),
    }
    tensors, meta = {}, {}
    for name, (x, fr, to) in cases.items():
        y = convert_audio(torch.from_numpy(x)[None], fr, to, 1)[0].numpy()
        tensors[name + ".input"] = x
        tensors[name + ".expected"] = y.astype(np.float32)
        meta[name + ".from_hz"] = str(fr)
        meta[name + ".to_hz"] = str(to)
    save_file(tensors, str(AUDIO / "resample_case.safetensors"), metadata=meta)

    # ---- end_on_pause on real speech ----
    phrase, prate = sf.read(str(speech_dir / "pocket_tts_phrase_00.wav"), dtype="float32")
    assert prate == 24000
    cases = {
        # "Hello," then the start of the pause: the tail is trimmed.
        "phrase24k": (phrase[int(0.25 * prate) : int(1.05 * prate)].copy(), prate),
        # Speech over background noise at 16 kHz (320-sample frames).
        "jfk16k": (speech16[int(0.30 * rate16) : int(0.75 * rate16)].copy(), rate16),
    }
    tensors, meta = {}, {}
    for name, (x, rate) in cases.items():
        y = end_on_pause(torch.from_numpy(x)[None], rate)[0].numpy()
        tensors[name + ".input"] = x
        tensors[name + ".expected"] = y.astype(np.float32)
        meta[name + ".sample_rate"] = str(rate)
        print(f"end_on_pause {name}: {len(x)} -> {len(y)} samples")
    save_file(tensors, str(FIXTURES / "end_on_pause_case.safetensors"), metadata=meta)

    # ---- StreamingWAVWriter, unseekable (stdout-like) and seekable ----
    special = np.array(
        [0.0, 1.0, -1.0, 1.5, -1.5, 0.5 / 32767, -0.5 / 32767, 0.99999, -0.99999, 0.3, -0.3],
        dtype=np.float32,
    )
    chunk0 = np.concatenate([special, chirp(24000, 0.05, 100.0, 5000.0, amp=0.9)])
    chunk1 = short.copy()
    save_file(
        {"chunk0": chunk0, "chunk1": chunk1}, str(AUDIO / "wav_writer_input.safetensors")
    )
    stream = Unseekable()
    writer = StreamingWAVWriter(stream, 24000)
    assert not writer.is_seekable
    writer.write_header(24000)
    writer.write_pcm_data(torch.from_numpy(chunk0))
    writer.write_pcm_data(torch.from_numpy(chunk1))
    writer.finalize()
    (AUDIO / "streamed_reference.wav").write_bytes(bytes(stream.buf))
    with open(AUDIO / "seekable_reference.wav", "wb") as f:
        writer = StreamingWAVWriter(f, 24000)
        assert writer.is_seekable
        writer.write_header(24000)
        writer.write_pcm_data(torch.from_numpy(chunk0))
        writer.write_pcm_data(torch.from_numpy(chunk1))
        writer.finalize()

    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and (p.parent == AUDIO or p.name == "end_on_pause_case.safetensors"):
            print(f"{p.relative_to(REPO)}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
