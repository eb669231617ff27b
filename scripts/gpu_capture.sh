#!/usr/bin/env bash
# Capture NVIDIA GPU baselines for graphsval-cuda in under 5 minutes (docs/runbook-nvidia.md).
#
# On a machine with an NVIDIA GPU, python3 with a CUDA build of torch, and no network:
#  1. checks that python3 imports what graphsval needs (pluggy, click, attrs, numpy,
#     pynvml from nvidia-ml-py, torch) and says which are missing and how to bring them;
#  2. installs graphsval and graphsval-cuda without dependencies or build isolation: into
#     python3's site-packages when writable, else into a private folder put on PYTHONPATH,
#     else (pip cannot build) runs them from this source tree;
#  3. picks the target: the named datacenter target (h100_sxm5_80gb, h200_sxm_141gb, ...)
#     whose probe says available, else host_gpu;
#  4. captures calibration and validation baselines of matmul, linear and vector_add at
#     fp16 and bf16: the first LIMIT shapes per dtype of each shipped sweep, reordered so
#     that any prefix spreads over the sweep, each capture bounded by --max-total-time so
#     that the whole run stays within BUDGET_S seconds.
#
# usage: scripts/gpu_capture.sh [OUT_DIR]      (default: $OUT if set, else ./gpu-baselines)
# environment knobs:
#   PYTHON=python3            the interpreter (the one with the CUDA torch)
#   LIMIT=12                  shapes per dtype in each capture
#   BUDGET_S=270              seconds for the whole script (install and captures)
#   MAX_TIME_PER_SHAPE=0.5    seconds of timing per shape (plus NVML's 1 s energy window)
#   TARGET=KEY                measure this target instead of the one picked
#   WHEELS=DIR                a folder of wheels to install first (missing dependencies)
#   OPS="matmul linear vector_add"   DTYPES="fp16 bf16"
# Resumable: rerun with the same OUT_DIR to finish shapes a budget cut short; raise LIMIT to
# add more shapes (the prefix grows, already measured shapes are skipped).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT_DIR=${1:-${OUT:-./gpu-baselines}}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
PY=${PYTHON:-python3}
LIMIT=${LIMIT:-12}
BUDGET_S=${BUDGET_S:-270}
MAX_TIME_PER_SHAPE=${MAX_TIME_PER_SHAPE:-0.5}
read -ra ops <<<"${OPS:-matmul linear vector_add}"
read -ra dtypes <<<"${DTYPES:-fp16 bf16}"
#: Seconds kept back per capture: interpreter, torch and CUDA start-up, and the last shape,
#: which may run past --max-total-time (the budget is checked between shapes).
RESERVE_S=12
export PYTHONUNBUFFERED=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/graphsval-gpu.XXXXXX")
exec > >(tee -a "$OUT_DIR/gpu_capture.log") 2>&1
tee_pid=$!
finish() {
    rm -rf "$WORK"
    exec 1>&- 2>&-
    wait "$tee_pid" 2>/dev/null || true # the log is complete when the script returns
}
trap finish EXIT
echo "== graphsval GPU capture, $(date -u +%Y-%m-%dT%H:%M:%SZ), into $OUT_DIR"

# --- 1. what python3 must import ----------------------------------------------------------
if [ -n "${WHEELS:-}" ]; then
    compgen -G "$WHEELS/*.whl" >/dev/null || { echo "no wheels (*.whl) in $WHEELS"; exit 1; }
    echo "== installing the wheels in $WHEELS"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/deps" \
        "$WHEELS"/*.whl
    export PYTHONPATH="$WORK/deps${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! "$PY" -c "import pluggy, click, attrs, numpy, pynvml" 2>/dev/null; then
    missing=$("$PY" - <<'EOF'
import importlib

wanted = {"pluggy": "pluggy", "click": "click", "attrs": "attrs", "numpy": "numpy",
          "pynvml": "nvidia-ml-py"}
missing = []
for module, dist in wanted.items():
    try:
        importlib.import_module(module)
    except Exception:
        missing.append(dist)
print(" ".join(missing))
EOF
)
    pyver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    cat <<EOF
missing Python packages: $missing
Bring them as wheels: on a machine with network (any OS), for Python $pyver on x86-64 Linux:
  python3 -m pip download --no-deps --only-binary=:all: --python-version $pyver \\
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \\
      --platform manylinux2014_x86_64 -d wheels $missing
(--no-deps fetches none of their own needs: add any of theirs that is missing here too.)
Bring the folder here, then:
  WHEELS=wheels scripts/gpu_capture.sh ${1:-}
EOF
    exit 1
fi
"$PY" - <<'EOF' || exit 1
import sys

try:
    import torch
except ImportError as exc:
    sys.exit(f"torch cannot be imported ({exc}): this script needs python3 with a CUDA torch")
if not torch.cuda.is_available():
    sys.exit(f"torch {torch.__version__} sees no CUDA device (its CUDA: {torch.version.cuda})")
name = torch.cuda.get_device_name(0)
print(f"== torch {torch.__version__}, CUDA {torch.version.cuda}, GPU 0: {name}")
EOF
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv || true
    busy=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader || true)
    [ -z "$busy" ] || echo "warning: other processes use the GPU (timings and energy suffer): $busy"
fi

# --- 2. install graphsval and graphsval-cuda ---------------------------------------------
pip_install=("$PY" -m pip install -q --no-deps --no-build-isolation --no-index --no-compile)
sources=("$REPO" "$REPO/plugins/graphsval_cuda")
purelib=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
GV=("$PY" -m graphsval_core)
if [ -w "$purelib" ] && "${pip_install[@]}" "${sources[@]}"; then
    echo "== installed graphsval and graphsval-cuda into $purelib"
elif "${pip_install[@]}" --target "$WORK/site" "${sources[@]}"; then
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
    echo "== installed graphsval and graphsval-cuda into a private folder (PYTHONPATH)"
else
    echo "== pip could not build the packages: running graphsval from the source tree"
    export PYTHONPATH="$REPO:$REPO/plugins/graphsval_cuda${PYTHONPATH:+:$PYTHONPATH}"
    export GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD=1
    GV=("$PY" -m graphsval_core -p graphsval_cuda.plugin)
fi
"${GV[@]}" --version

# --- 3. the target ------------------------------------------------------------------------
if [ -z "${TARGET:-}" ]; then
    "${GV[@]}" targets --json >"$WORK/targets.json"
    TARGET=$("$PY" - "$WORK/targets.json" <<'EOF'
import json
import sys

with open(sys.argv[1]) as handle:
    targets = [t for t in json.load(handle)["targets"]
               if t["family"] in ("nvidia_datacenter", "nvidia_gpu")]
for t in targets:
    print(f"  {t['key']}: {t['measurer']['reason'] or 'available'}", file=sys.stderr)
named = [t["key"] for t in targets if t["key"] != "host_gpu" and t["measurer"]["available"]]
host = [t["key"] for t in targets if t["key"] == "host_gpu" and t["measurer"]["available"]]
print((named + host + [""])[0])
EOF
)
fi
if [ -z "$TARGET" ]; then
    echo "no CUDA target can be measured here (reasons above)"
    exit 1
fi
echo "== target: $TARGET"

# --- 4. the captures ----------------------------------------------------------------------
# Each shipped sweep, restricted to DTYPES, reordered: per dtype in bit-reversed index order
# (any prefix spreads over the sweep's sizes), the dtypes interleaved.
"$PY" - "$REPO/graphsval_core/sweeps" "$WORK" "${dtypes[*]}" "${ops[@]}" <<'EOF'
import itertools
import json
import sys
from pathlib import Path

src, dst, dtypes, ops = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]


def spread(n: int) -> list[int]:
    bits = max(1, (n - 1).bit_length())
    return sorted(range(n), key=lambda i: int(f"{i:0{bits}b}"[::-1], 2))


for op in ops:
    for purpose in ("calibration", "validation"):
        data = json.loads((src / f"{op}_{purpose}.json").read_text())
        groups = [[s for s in data["shapes"] if s["dtype"] == d] for d in dtypes]
        ordered = [[group[i] for i in spread(len(group))] for group in groups]
        data["shapes"] = [s for row in itertools.zip_longest(*ordered) for s in row if s]
        (dst / f"{op}_{purpose}.json").write_text(json.dumps(data))
EOF

dtype_args=()
for dtype in "${dtypes[@]}"; do dtype_args+=(--dtype "$dtype"); done
runs=()
for purpose in calibration validation; do
    for op in "${ops[@]}"; do runs+=("$op:$purpose"); done
done
left=${#runs[@]}
failed=()
for run in "${runs[@]}"; do
    op=${run%%:*}
    purpose=${run#*:}
    per_run=$(( (BUDGET_S - SECONDS) / left - RESERVE_S ))
    left=$((left - 1))
    if [ "$per_run" -lt 5 ]; then
        echo "== $op $purpose: skipped, the time budget is spent (rerun to continue)"
        failed+=("$op $purpose (no time left)")
        continue
    fi
    echo "== $op $purpose: up to $LIMIT shapes per dtype, at most ${per_run} s"
    "${GV[@]}" capture --hw "$TARGET" --op "$op" --purpose "$purpose" \
        --sweep "$WORK/${op}_${purpose}.json" "${dtype_args[@]}" \
        --limit $((LIMIT * ${#dtypes[@]})) \
        --max-time-per-shape "$MAX_TIME_PER_SHAPE" --max-total-time "$per_run" \
        --out "$OUT_DIR/${TARGET}_${op}.${purpose}.csv" || failed+=("$op $purpose")
done

# --- summary ------------------------------------------------------------------------------
"$PY" - "$OUT_DIR" <<'EOF'
import csv
import sys
from pathlib import Path

for path in sorted(Path(sys.argv[1]).glob("*.csv")):
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    ok = [r for r in rows if r["latency_s"]]
    wrong = [r for r in rows if r.get("verdict") == "FAIL"]
    energy = [r for r in ok if r["energy_j"]]
    wide = [r for r in ok if float(r.get("spread_ci_rel") or 0) > 0.02]
    print(f"{path.name}: {len(rows)} rows, {len(rows) - len(ok)} failed, {len(wrong)} incorrect, "
          f"{len(energy)} with energy, {len(wide)} with CI above 2%")
EOF
echo "== done in ${SECONDS} s; CSVs and this log are in $OUT_DIR"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'incomplete: %s\n' "${failed[@]}"
    exit 2
fi
