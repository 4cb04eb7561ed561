#!/usr/bin/env python3
"""How accurate a 16-bit Mimi decoder can be, measured with the reference (pocket-tts 4.0.1):
the same 40 latent frames decoded frame by frame with the f32 decoder, with the decoder's
weights rounded to bf16 and to f16 (computed in f32, as a widening kernel would), and under
torch's CPU bf16 autocast (activations and weights in bf16, f32 accumulation, as
AVX512-BF16's ``vdpbf16ps`` would). Prints the SNR of each against f32.

    cd /tmp/pocket-tts-parity/checkpoint && \
        /tmp/venv-ref/bin/python <repo>/scripts/bench/mimi_16bit_snr.py config.yaml
"""
import math, sys, torch, copy
from pathlib import Path
from pocket_tts.models.tts_model import TTSModel
from pocket_tts.modules.stateful_module import init_states, increment_steps
torch.manual_seed(0)
m = TTSModel.load_model(config=str(Path(sys.argv[1]).resolve()))
mimi = m.mimi
frames = 40
g = torch.Generator().manual_seed(1)
lat = torch.randn(1, frames, 32, generator=g) * m.flow_lm.emb_std + m.flow_lm.emb_mean
def decode(model):
    st = init_states(model, batch_size=1, sequence_length=1000)
    out = []
    for i in range(frames):
        with torch.no_grad():
            a = model.decode_from_latent(lat[:, i:i+1], st)
        increment_steps(model, st, increment=16)
        out.append(a)
    return torch.cat(out, dim=-1).flatten().double()
ref = decode(mimi)
for dt in (torch.bfloat16, torch.float16):
    q = copy.deepcopy(mimi)
    with torch.no_grad():
        for name, p in q.named_parameters():
            if name.startswith("encoder") or "downsample" in name: continue
            p.copy_(p.to(dt).to(torch.float32))
    y = decode(q)
    snr = 10 * math.log10((ref ** 2).sum() / ((y - ref) ** 2).sum())
    print(f"{dt}: SNR vs f32 {snr:.1f} dB, max abs err {(y - ref).abs().max():.2e}, rms {ref.pow(2).mean().sqrt():.3e}")
with torch.autocast("cpu", dtype=torch.bfloat16):
    y = decode(mimi)
snr = 10 * math.log10((ref ** 2).sum() / ((y - ref) ** 2).sum())
print(f"autocast bf16 (activations and weights bf16, as vdpbf16ps): SNR vs f32 {snr:.1f} dB")
