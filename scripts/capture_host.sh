#!/usr/bin/env bash
# Capture the host_cpu baselines shipped with graphsval-cpu (docs/runbook-cpu.md).
#
# `graphsval capture-machine` into a temporary workspace: vector_add, matmul and
# linear, every dtype the host runs, at one thread, 7 interleaved rounds per shape
# (a row is the median of its rounds; outlier rounds measured again), the calibration
# sets, the validation sets, and the validation sets again in another order
# (baselines/recapture/, disagreements measured again) for the capture-vs-recapture
# agreement. It refuses a busy machine and waits for quiet while it runs: run it on a
# quiet machine (no tests, builds or other sessions). Resumable: rerun the script.
# Then the baselines, recaptures and snapshot spec are copied into the plugin.
#
# usage: scripts/capture_host.sh [WORKSPACE]   (default: .capture-host, kept for resuming)
set -euo pipefail
cd "$(dirname "$0")/.."
WS=${1:-.capture-host}
GV=${GRAPHSVAL:-graphsval}
PLUGIN=plugins/graphsval_cpu/graphsval_cpu
"$GV" --workspace "$WS" capture-machine --rounds 7 --no-calibrate
mkdir -p "$PLUGIN/baselines/recapture" "$PLUGIN/targets"
cp "$WS"/baselines/*.csv "$PLUGIN/baselines/"
cp "$WS"/baselines/recapture/*.csv "$PLUGIN/baselines/recapture/"
cp "$WS"/targets/*.target.json "$PLUGIN/targets/"
echo "copied into $PLUGIN; now recalibrate (docs/runbook-cpu.md) and run graphsval validate"
