"""Loading and dropping models again and again does not grow resident memory."""

import gc
import sys

import pytest

from pocket_tts_rs import TTSModel


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")
def test_repeated_load_generate_unload_keeps_rss_flat(tiny_dir, reference_state_file):
    def cycle():
        m = TTSModel.load_model(config=tiny_dir / "config.yaml", temp=0.0)
        s = m.get_state_for_audio_prompt(reference_state_file)
        m.generate_audio(s, "Hello there.", frames_after_eos=1)
        del m, s
        gc.collect()

    for _ in range(3):  # allocator pools and lazily made buffers settle
        cycle()
    before = rss_mib()
    for _ in range(15):
        cycle()
    growth = rss_mib() - before
    # The tiny model is 2 MiB of weights: a leak of one model per cycle would add ~30 MiB.
    assert growth < 8, f"resident memory grew by {growth:.1f} MiB over 15 load/unload cycles"
