#!/usr/bin/env bash
# Capture an NVIDIA GPU's baselines for graphsval-cuda in one bounded run: the calibration
# and validation sets of matmul, linear and vector_add, and the recapture of the validation
# sets (docs/runbook-nvidia.md).
#
# Written for a machine lent for minutes (issue 19's H200): python3 with a CUDA torch,
# pluggy, click, attrs, numpy and nvidia-ml-py, no network, and a folder ($OUT) copied back
# that takes a few files. The whole run is one command:
#     RUN_DIR=/tmp/gvrun bash scripts/gpu_capture.sh     (into $OUT if set, else ./gpu-baselines)
# It
#  1. checks what python3 imports; records the machine (nvidia-smi -q, pip freeze), the GPU
#     torch sees, and which int8 shapes torch._int_mm runs there (a few tiny products);
#  2. installs graphsval and graphsval-cuda from this tree with `pip install --no-deps
#     --no-build-isolation --no-index` (into python3's site-packages when writable, else a
#     private folder on PYTHONPATH; where pip cannot build them, runs them from the tree);
#  3. runs `graphsval targets` and picks the target: the named one whose probe says
#     available (h200_sxm_141gb on an H200), else host_gpu; TARGET=KEY overrides;
#  4. plans (scripts/gpu_capture_steps.py plan): for each op and each dtype its shipped
#     sweeps hold (fp32, fp16, bf16; int8 for matmul, less the shapes torch._int_mm
#     refuses), CAL_N calibration and VAL_N validation shapes, sampled as `graphsval capture
#     --limit` samples (across the regimes the model predicts on the target, and sizes),
#     written as sweep files ordered so that any prefix spreads over the dtypes and sizes;
#  5. captures, with `graphsval capture`: every calibration set, every validation set, then
#     every validation set again with --recapture (in reverse order; shapes whose two
#     captures disagree are measured again), one round per shape. Each capture gets a share
#     of CAPTURE_S in proportion to its estimate (--max-total-time) and a hard limit;
#  6. writes every CSV, the sweeps, the plan, the targets, nvidia-smi's reports and the log
#     into ONE archive, $OUT/gpu-capture.tar.gz, refreshed after every capture (a run killed
#     at its time limit still returns the captures finished so far), and sums the CSVs up.
#
# Budget (the defaults; issue 19: about 7 minutes of capture at about 1.5 s a shape, NVML's
# 1 s energy window included):
#   rows per op, dtype and purpose          calibration  validation  recapture    rows
#   matmul      fp32, fp16, bf16, int8       12 each      8 each      8 each       112
#   linear      fp32, fp16, bf16             12 each      8 each      8 each        84
#   vector_add  fp32, fp16, bf16             12 each      8 each      8 each        84
#   total                                    120          80          80           280
#   seconds: 280 rows x ~1.5 s = ~420 s of capture in 9 graphsval capture runs (CAPTURE_S=420,
#   shared by estimate); ~30 s before it (checks, install, targets, plan) and a few after.
#   The script stops within BUDGET_S=480 s: give the command a 540 s limit. The plan prints
#   its estimate per capture: against the fake H200 about 510 s (1.8 s a row: the largest
#   shapes' operands are drawn on the CPU, 6 s a capture process); a machine that slow gets
#   about 230 rows, each capture cut evenly (its shapes are ordered for that), no set dropped.
#
# usage: scripts/gpu_capture.sh [OUT_DIR]
# environment knobs:
#   PYTHON=python3             the interpreter (the one with the CUDA torch)
#   OPS="matmul linear vector_add"
#   DTYPES=""                  only these dtypes (default: every dtype the sweeps hold)
#   CAL_N=12  VAL_N=8          shapes per op and dtype: calibration, validation (= recapture)
#   CAPTURE_S=420              seconds for all the captures together
#   BUDGET_S=480               seconds for the whole script (the captures shrink to fit)
#   ROUNDS=1                   interleaved rounds per shape (each pays its own energy window)
#   MAX_TIME_PER_SHAPE=0.4     seconds of timing per shape (the energy window comes on top)
#   MAX_WAIT=5                 seconds a capture waits for a busy CPU to settle
#   PROCESS_S=6                seconds a capture process costs besides its shapes (estimate)
#   TARGET=KEY                 measure this target instead of the one picked
#   WHEELS=DIR                 a folder of wheels to install first (missing dependencies)
#   INSTALL=auto               auto | site | target | source | none (step 2; none: as python3
#                              imports them already, e.g. a development install)
#   RUN_DIR=DIR                the run's folder (default: a new temporary one); the same
#                              RUN_DIR again resumes: measured shapes are skipped
#   DRY_RUN=1                  no GPU: graphsval runs against the fakes of the CUDA plugin's
#                              tests (plugins/graphsval_cuda/tests/gpu_capture_dryrun.py): a
#                              fake H200 in NVML, CPU kernels of clipped shapes, real 1 s
#                              energy windows; installs into a private folder, never into
#                              python3's site-packages; writes gpu-capture-dryrun.tar.gz
# Exit status: 0 when every capture finished, 2 when one failed or was cut short, 1 when the
# machine cannot run it.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
STEPS="$REPO/scripts/gpu_capture_steps.py"
SHIM="$REPO/plugins/graphsval_cuda/tests/gpu_capture_dryrun.py"
OUT_DIR=${1:-${OUT:-./gpu-baselines}}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
PY=${PYTHON:-python3}
DRY_RUN=${DRY_RUN:-0}
CAL_N=${CAL_N:-12}
VAL_N=${VAL_N:-8}
CAPTURE_S=${CAPTURE_S:-420}
BUDGET_S=${BUDGET_S:-480}
ROUNDS=${ROUNDS:-1}
MAX_TIME_PER_SHAPE=${MAX_TIME_PER_SHAPE:-0.4}
MAX_WAIT=${MAX_WAIT:-5}
PROCESS_S=${PROCESS_S:-6}
INSTALL=${INSTALL:-auto}
read -ra ops <<<"${OPS:-matmul linear vector_add}"
read -ra dtypes <<<"${DTYPES:-}"
#: Seconds a capture process spends before its --max-total-time clock starts (interpreter,
#: graphsval, the plan, one second's look at the machine's load).
STARTUP_S=3
#: Seconds past its share at which a capture is interrupted (SIGINT: finished rows are kept;
#: SIGKILL 10 s later), and the least share worth starting a capture for.
GRACE_S=20
MIN_LOOP_S=5
#: Seconds kept for the end (nvidia-smi, summary, archive).
FINISH_S=10

NAME=gpu-capture
if [ "$DRY_RUN" = 1 ]; then
    NAME=gpu-capture-dryrun
    [ "$INSTALL" = auto ] && INSTALL=target
fi
ARCHIVE="$OUT_DIR/$NAME.tar.gz"
LOG="$OUT_DIR/gpu_capture.log"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/graphsval-gpu.XXXXXX")
RUN=${RUN_DIR:-$WORK/run}
mkdir -p "$RUN/baselines"
RUN=$(cd "$RUN" && pwd)
export PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export GRAPHSVAL_WORKSPACE="$RUN/workspace"

archive() { # every file of the run (not the plan's scratch) and the log, atomically
    cp "$LOG" "$RUN/gpu_capture.log" 2>/dev/null || true
    if tar -czf "$ARCHIVE.part" -C "$RUN" --exclude=./scratch . 2>/dev/null; then
        mv -f "$ARCHIVE.part" "$ARCHIVE"
    fi
}
exec > >(tee -a "$LOG") 2>&1
tee_pid=$!
finish() {
    local rc=$?
    set +e
    exec 1>&- 2>&-
    wait "$tee_pid" 2>/dev/null # the log is complete before it goes into the archive
    archive
    rm -rf "$WORK"
    exit "$rc"
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

echo "== graphsval GPU capture, $(date -u +%Y-%m-%dT%H:%M:%SZ): run folder $RUN, archive $ARCHIVE"
[ "$DRY_RUN" = 1 ] && echo "== DRY RUN: fake GPU (NVML and torch fakes), CPU kernels; the rows are meaningless"
echo "== knobs: OPS='${ops[*]}' DTYPES='${dtypes[*]}' CAL_N=$CAL_N VAL_N=$VAL_N CAPTURE_S=$CAPTURE_S" \
    "BUDGET_S=$BUDGET_S ROUNDS=$ROUNDS MAX_TIME_PER_SHAPE=$MAX_TIME_PER_SHAPE MAX_WAIT=$MAX_WAIT" \
    "INSTALL=$INSTALL TARGET=${TARGET:-auto}"

# --- 1. what python3 imports; the machine; the GPU ---------------------------------------
if [ -n "${WHEELS:-}" ]; then
    compgen -G "$WHEELS/*.whl" >/dev/null || { echo "no wheels (*.whl) in $WHEELS"; exit 1; }
    echo "== installing the wheels in $WHEELS"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/deps" \
        "$WHEELS"/*.whl
    export PYTHONPATH="$WORK/deps${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" "$STEPS" imports || exit 1
{
    uname -a
    "$PY" -c 'import sys; print(sys.executable, sys.version)'
    "$PY" -m pip freeze 2>/dev/null || true
} >"$RUN/python.txt"
head -2 "$RUN/python.txt"
for f in /proc/driver/nvidia/version /dev/nvidiactl /dev/nvidia0; do
    if [ -e "$f" ]; then echo "   $f: present"; else echo "   $f: absent"; fi
done
if command -v nvidia-smi >/dev/null; then
    nvidia-smi -q >"$RUN/nvidia-smi-before.txt" 2>&1 || true
    nvidia-smi --query-gpu=name,driver_version,persistence_mode,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
        --format=csv || true
    busy=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader || true)
    [ -z "$busy" ] || echo "warning: other processes use the GPU (timings and energy suffer): $busy"
fi
dry_flag=()
[ "$DRY_RUN" = 1 ] && dry_flag=(--dry-run)
"$PY" "$STEPS" gpu "$RUN/gpu.json" "${dry_flag[@]}" || exit 1

# --- 2. install graphsval and graphsval-cuda ---------------------------------------------
pip_install=("$PY" -m pip install -q --no-deps --no-build-isolation --no-index --no-compile)
sources=("$REPO" "$REPO/plugins/graphsval_cuda")
purelib=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
plugin_args=()
installed=""
if [ "$INSTALL" = auto ] || [ "$INSTALL" = site ]; then
    if [ -w "$purelib" ] && "${pip_install[@]}" "${sources[@]}"; then
        installed="into $purelib"
    fi
fi
if [ -z "$installed" ] && { [ "$INSTALL" = auto ] || [ "$INSTALL" = target ]; }; then
    if "${pip_install[@]}" --target "$WORK/site" "${sources[@]}"; then
        export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
        installed="into a private folder (PYTHONPATH)"
    fi
fi
if [ "$INSTALL" = none ]; then
    installed="before: python3 imports them as they are"
fi
if [ -z "$installed" ]; then
    [ "$INSTALL" = source ] || echo "== pip could not install the packages"
    export PYTHONPATH="$REPO:$REPO/plugins/graphsval_cuda${PYTHONPATH:+:$PYTHONPATH}"
    export GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD=1
    plugin_args=(-p graphsval_cuda.plugin)
    installed="nowhere: running from the source tree"
fi
if [ "$DRY_RUN" = 1 ]; then
    GV=("$PY" "$SHIM" graphsval "${plugin_args[@]}")
    PYG=("$PY" "$SHIM" python)
else
    GV=("$PY" -m graphsval_core "${plugin_args[@]}")
    PYG=("$PY")
fi
echo "== graphsval and graphsval-cuda installed $installed"
"$PY" -c 'import graphsval_core, graphsval_cuda
print("   graphsval", graphsval_core.__version__, "from", graphsval_core.__file__)
print("   graphsval-cuda from", graphsval_cuda.__file__)'

# --- 3. the target ------------------------------------------------------------------------
"${GV[@]}" targets | tee "$RUN/targets.txt"
"${GV[@]}" targets --json >"$RUN/targets.json"
if [ -z "${TARGET:-}" ]; then
    TARGET=$("$PY" "$STEPS" pick "$RUN/targets.json")
fi
if [ -z "$TARGET" ]; then
    echo "no CUDA target can be measured here (reasons above)"
    exit 1
fi
echo "== target: $TARGET"

# --- 4. the plan --------------------------------------------------------------------------
"${PYG[@]}" "$STEPS" plan --target "$TARGET" --ops "${ops[@]}" --dtypes "${dtypes[@]}" \
    --cal-n "$CAL_N" --val-n "$VAL_N" --rounds "$ROUNDS" \
    --max-time-per-shape "$MAX_TIME_PER_SHAPE" --process-s "$PROCESS_S" \
    --capture-s "$CAPTURE_S" --gpu "$RUN/gpu.json" --workspace "$GRAPHSVAL_WORKSPACE" \
    "${plugin_args[@]}" --dir "$RUN"
archive

# --- 5. the captures ----------------------------------------------------------------------
budget=$CAPTURE_S
if [ $((BUDGET_S - SECONDS - FINISH_S)) -lt "$budget" ]; then
    budget=$((BUDGET_S - SECONDS - FINISH_S))
    echo "== $budget s left for the captures (BUDGET_S=$BUDGET_S, ${SECONDS} s spent)"
fi
mapfile -t captures <"$RUN/captures.tsv"
est_left=0
for line in "${captures[@]}"; do est_left=$((est_left + ${line##*$'\t'})); done
started=$SECONDS
failed=()
for line in "${captures[@]}"; do
    IFS=$'\t' read -r op purpose recapture sweep out rows est <<<"$line"
    kind=$purpose
    [ "$recapture" = 1 ] && kind=recapture
    remaining=$((budget - (SECONDS - started)))
    share=$((remaining * est / (est_left > 0 ? est_left : 1)))
    est_left=$((est_left - est))
    loop=$((share - STARTUP_S))
    [ "$recapture" = 1 ] && loop=$((share * 85 / 100 - STARTUP_S)) # the rest: re-measures
    if [ "$loop" -lt "$MIN_LOOP_S" ]; then
        echo "== $op $kind: skipped, the time budget is spent (rerun with the same RUN_DIR)"
        failed+=("$op $kind (no time left)")
        continue
    fi
    if [ "$recapture" = 1 ]; then # the shapes the validation capture measured, reversed
        rows=$("$PY" "$STEPS" recapture-sweep --csv "$out" --out "$sweep" \
            --sweep "$RUN/sweeps/${op}_validation.json") || rows=0
        if [ "$rows" = 0 ]; then
            echo "== $op $kind: skipped, no validation row to compare with"
            failed+=("$op $kind (no validation rows)")
            continue
        fi
    fi
    echo "== $op $kind: $rows shapes, estimated ${est} s, at most ${loop} s of measuring"
    args=(capture --hw "$TARGET" --op "$op" --purpose "$purpose" --sweep "$sweep" --out "$out"
        --rounds "$ROUNDS" --max-time-per-shape "$MAX_TIME_PER_SHAPE" --max-total-time "$loop"
        --allow-busy --max-wait "$MAX_WAIT")
    [ "$recapture" = 1 ] && args+=(--recapture)
    t0=$SECONDS
    rc=0
    timeout --foreground -k 10 -s INT $((share + GRACE_S)) "${GV[@]}" "${args[@]}" || rc=$?
    echo "== $op $kind: exit $rc in $((SECONDS - t0)) s"
    [ "$rc" -eq 0 ] || failed+=("$op $kind (exit $rc)")
    archive
done
echo "== captures: $((SECONDS - started)) s of $budget"

# --- 6. summary ---------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
    nvidia-smi -q >"$RUN/nvidia-smi-after.txt" 2>&1 || true
fi
"$PY" "$STEPS" summary "$RUN" || failed+=("rows short of the plan")
echo "== done in ${SECONDS} s; archive $ARCHIVE:"
archive
tar -tzf "$ARCHIVE" | grep -v '/$' | sed 's/^/   /'
if [ ${#failed[@]} -gt 0 ]; then
    printf 'incomplete: %s\n' "${failed[@]}"
    exit 2
fi
