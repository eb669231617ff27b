"""Known findings about this plugin's targets: consistency checks expected to
fail on them, each with its reason (the ``graphsval_expected_failures`` hook).

A finding is a real disagreement between a measured or datasheet figure and an
expectation, reported with its reason and never fixed by bending a
coefficient; when the check starts passing, ``graphsval check`` reports an
unexpected pass so that the entry here can be removed.
"""

from __future__ import annotations

from graphsval_core.plugin_api import TargetSpec

#: Why a bf16 add costs more than an fp32 one on a CPU.
BF16_ADD = (
    "a bf16 add runs on the vector units, converting every element to fp32 and back (about "
    "4 G elements/s per core, vector_ops_per_s.bf16), while an fp32 add needs no conversion "
    "(about 8 G elements/s per core, vector_ops_per_s.fp32): a bf16 add takes longer and its "
    "static energy "
    "exceeds fp32's; lower precision is cheaper per byte moved here, not per element added: "
    "a finding, not bent"
)

FINDINGS: dict[str, dict[str, str]] = {
    "host_intel_xeon_2c_1t": {
        "precision": (
            "measured on this host: a bf16 call takes oneDNN's path (reorders included) and "
            "costs about 19 us of dispatch (a linear's, accumulating onto its bias, 4 us more) "
            "against 1.3 us for an fp32 call through MKL (the calibrated dispatch_overhead_s "
            "of each dtype, fitted on the host's calibration rows), so for small shapes the "
            "static energy of the longer bf16 call exceeds fp32's; and " + BF16_ADD
        )
    },
    "host_amd_epyc_2c_1t": {
        "precision": (
            "measured on this host (Zen 3, AVX2, no avx512_bf16 or AMX): PyTorch has no oneDNN "
            "path for a bf16 product without AVX-512 and runs it in its own reference kernel, "
            "one output at a time (calibrated: about 3.1 ns per output and 0.71 ns per "
            "multiply-add down a column of B, 6.5 ns more per TLB miss; 29 ns and 0.19 ns for "
            "linear's contiguous dots), tens of times slower than fp32 through MKL "
            "(6x16112x14896 bf16 takes 10.4 s), so a bf16 product costs far more time and "
            "static energy than fp32's; and " + BF16_ADD
        )
    },
    "host_amd_epyc_zen4_2c_1t": {
        "precision": (
            "measured on this host (Zen 4, avx512_bf16 and VNNI in 256-bit halves): a bf16 "
            "product takes oneDNN's path (reorders included) and costs about 15 us of dispatch "
            "(a linear's, accumulating onto its bias, 3.5 us more) against 1.3 us for an fp32 "
            "call through MKL and 2.2 us for int8 (the calibrated "
            "dispatch_overhead_s of each dtype, fitted on the host's calibration rows: bf16 "
            "24x24x24 takes 14.7 us, fp32 1.8 us), so for small shapes the static energy of "
            "the longer bf16 call exceeds fp32's; and " + BF16_ADD
        )
    },
    # the detected spec of whatever machine runs graphsval
    "host_cpu": {"precision": BF16_ADD},
}


def expected_failures(target: TargetSpec) -> dict[str, str]:
    """``check -> reason`` for ``target`` (empty for targets of other plugins)."""
    return FINDINGS.get(target.key, {})
