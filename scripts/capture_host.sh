#!/usr/bin/env bash
# Capture the host_cpu baselines shipped with graphsval-cpu (issue: "the host, for real").
#
# matmul, linear and vector_add at fp32 and bf16, pinned to 1 thread (far steadier on
# shared VMs), 3 interleaved rounds per shape (each round visits every shape in a
# shuffled order; a row is the median of its rounds): the calibration sets, the
# validation sets, and the validation sets a second time with other round orders
# (baselines/recapture/) for the capture-vs-recapture agreement, the ceiling any
# model can reach on this data. Resumable: rerun the script to continue.
#
# usage: scripts/capture_host.sh [OUT_DIR]   (PIN="taskset -c 0" pins the process to a CPU;
# the detected host then has 1 usable CPU, and the snapshot is named for it)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-plugins/graphsval_cpu/graphsval_cpu/baselines}
PIN=${PIN-}
GV=${GRAPHSVAL:-graphsval}
mkdir -p "$OUT/recapture"
KEY=$(python -c "from graphsval_core.plugins.loader import build_registry as b; r = b(); \
print(r.snapshot_target(r.target('host_cpu'), {'threads': 1}).key)")
echo "host_cpu captures as $KEY"
common=(--hw host_cpu --threads 1 --rounds 3 --max-time-per-shape 1.5 --dtype fp32 --dtype bf16)
for op in vector_add linear matmul; do
    $PIN "$GV" capture "${common[@]}" --op "$op" --purpose calibration --seed 1 \
        --out "$OUT/${KEY}_${op}.calibration.csv"
done
for op in vector_add linear matmul; do
    $PIN "$GV" capture "${common[@]}" --op "$op" --purpose validation --seed 2 \
        --out "$OUT/${KEY}_${op}.validation.csv"
done
for op in vector_add linear matmul; do
    $PIN "$GV" capture "${common[@]}" --op "$op" --purpose validation --seed 3 \
        --out "$OUT/recapture/${KEY}_${op}.validation.csv"
done
mv -f "$OUT/${KEY}.target.json" plugins/graphsval_cpu/graphsval_cpu/targets/ 2>/dev/null || true
rm -f "$OUT/recapture/${KEY}.target.json"
