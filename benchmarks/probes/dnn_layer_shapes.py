"""Write the DNN-layer probe sweeps: the matrix products of well-known networks,
shapes no sweep of the project drew (an independent check of a calibration).

Run: python benchmarks/probes/dnn_layer_shapes.py [TARGET]
(default host_amd_epyc_zen4_2c_1t: a shape any of its shipped baselines holds
is left out). Writes ``<prefix>_dnn_layers_{linear,matmul}.sweep.json`` here;
``benchmarks/probes/README.md`` says how they were captured and scored.

linear is tokens x in x out (a weight of out x in); matmul is M x K x N.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BASELINES = HERE.parents[1] / "plugins" / "graphsval_cpu" / "graphsval_cpu" / "baselines"
PREFIX = {"host_amd_epyc_zen4_2c_1t": "zen4"}


def linear_shapes() -> list[tuple[int, int, int]]:
    out = []

    def layers(tokens: list[int], pairs: list[tuple[int, int]]) -> None:
        out.extend((m, k, n) for m in tokens for k, n in pairs)

    # BERT-base and ViT-B/16 (d 768, MLP 3072; 197 tokens for ViT)
    layers([1, 8, 128, 197, 512], [(768, 768), (768, 2304), (768, 3072), (3072, 768)])
    # GPT-2 medium (d 1024, MLP 4096)
    layers([1, 16, 64], [(1024, 1024), (1024, 4096), (4096, 1024)])
    # LLaMA-7B, a decode step and a small batch (d 4096, MLP 11008)
    layers([1, 4], [(4096, 4096), (4096, 11008), (11008, 4096)])
    # classifier heads (ResNet-50; EfficientNet-B0 / MobileNetV2)
    layers([1, 32], [(2048, 1000), (1280, 1000)])
    return out


def matmul_shapes() -> list[tuple[int, int, int]]:
    out = []
    # attention: Q K^T (seq x head dim x seq) and P V (seq x seq x head dim)
    for seq, head in [(128, 64), (197, 64), (512, 64), (1024, 64), (2048, 128)]:
        out += [(seq, head, seq), (seq, seq, head)]
    # ResNet-50's convolutions as im2col products (H*W x Cin*kh*kw x Cout), batch 1
    out += [
        (12544, 147, 64), (3136, 64, 64), (3136, 576, 64), (3136, 64, 256),
        (3136, 256, 64), (784, 1152, 128), (784, 128, 512), (784, 512, 128),
        (196, 2304, 256), (196, 256, 1024), (196, 1024, 256), (49, 4608, 512),
        (49, 512, 2048), (49, 2048, 512),
    ]  # fmt: skip
    return out


def sweep(
    op: str,
    shapes: list[tuple[int, int, int]],
    dtypes: list[str],
    known: set[tuple[str, str, str]],
) -> dict[str, Any]:
    entries = [
        {"shape": list(s), "dtype": d, "regime_per_hw": {}}
        for s in shapes
        for d in dtypes
        if (op, "x".join(map(str, s)), d) not in known
    ]
    left = len(shapes) * len(dtypes) - len(entries)
    print(f"{op}: {len(entries)} entries ({left} left out: a shipped baseline has them)")
    return {
        "schema_version": 1,
        "op": op,
        "purpose": "validation",
        "seed": 1,
        "generator": {
            "command": "python benchmarks/probes/dnn_layer_shapes.py",
            "graphsval_version": "0.1.0",
        },
        "shapes": entries,
    }


def main(target: str = "host_amd_epyc_zen4_2c_1t", out_dir: Path = HERE) -> None:
    """Write the two sweeps for ``target`` into ``out_dir``; a target with no
    shipped baselines here is refused (nothing could be left out for it)."""
    known: set[tuple[str, str, str]] = set()
    files = sorted(BASELINES.glob(f"{target}_*.csv"))
    if not files:
        print(
            f"dnn_layer_shapes: no shipped baseline of {target!r} in {BASELINES.name}/ "
            "(a host target of the CPU plugin; -h: usage)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    for path in files:
        with path.open(newline="") as handle:
            known |= {(r["op"], r["shape"], r["dtype"]) for r in csv.DictReader(handle)}
    prefix = PREFIX.get(target, target)
    for op, shapes, dtypes in (
        ("linear", linear_shapes(), ["fp32", "bf16"]),
        ("matmul", matmul_shapes(), ["fp32", "bf16", "int8"]),
    ):
        path = out_dir / f"{prefix}_dnn_layers_{op}.sweep.json"
        path.write_text(json.dumps(sweep(op, shapes, dtypes, known)))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
    elif len(sys.argv) > 2 or sys.argv[1:2] and sys.argv[1].startswith("-"):
        print(
            f"dnn_layer_shapes: expected at most one TARGET, got {' '.join(sys.argv[1:])}",
            file=sys.stderr,
        )
        sys.exit(2)
    else:
        main(*sys.argv[1:2])
