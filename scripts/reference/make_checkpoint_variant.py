#!/usr/bin/env python3
"""A random-weight checkpoint like make_checkpoint.py's, with another flow head sampler.

    python make_checkpoint_variant.py --flow-type {lsd,flow_matching,drifting,pointwise} \\
        --size full --seed N --out OUT_DIR

english.yaml's architecture with `flow_lm.flow.type` set (the reference's
config/english_drifting_26-09.yaml is exactly english.yaml with `type: drifting`; no
shipped config uses `flow_matching`, so this is the way to check it at full size). Everything
else is make_checkpoint.py's (same randomisation, same round trip through the reference).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_checkpoint as mc  # noqa: E402

FLOW_TYPES = ["lsd", "flow_matching", "drifting", "pointwise"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flow-type", choices=FLOW_TYPES, required=True)
    parser.add_argument("--size", choices=["tiny", "full"], required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    args = parser.parse_args()

    english = mc.english_config

    def with_flow_type() -> dict:
        cfg = english()
        cfg["flow_lm"]["flow"]["type"] = args.flow_type
        return cfg

    mc.english_config = with_flow_type
    original_build = mc.build_config_dict

    def build(size: str, tokenizer_path: str) -> dict:
        cfg = original_build(size, tokenizer_path)
        cfg["flow_lm"].setdefault("flow", {})["type"] = args.flow_type
        return cfg

    mc.build_config_dict = build
    report = mc.make_checkpoint(args.size, args.seed, args.out, None)
    print(f"wrote {report['weights']} ({report['weights_bytes'] / 1e6:.2f} MB, flow type "
          f"{args.flow_type}, sha256 {report['weights_sha256']})")  # fmt: skip


if __name__ == "__main__":
    main()
