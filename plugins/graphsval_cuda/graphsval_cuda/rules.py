"""Rules shared by the datasheet specs and the detected host GPU: how tier
bandwidths, latencies and energies are derived or estimated, each stated in
the provenance it produces."""

from __future__ import annotations

from collections.abc import Mapping

from graphsval_core.plugin_api import MemoryTier, Sourced, derived, estimated, fmt_si

#: L1/shared-memory load width per SM per clock (NVIDIA Volta to Hopper tuning
#: guides: 128 B/clk/SM).
L1_BYTES_PER_CLK_PER_SM = 128

#: A100's L2 read bandwidth, 5120 B/clk for 108 SMs (A100 whitepaper); other
#: parts scale it per SM.
A100_L2_BYTES_PER_CLK = 5120
L2_BYTES_PER_CLK_PER_SM = A100_L2_BYTES_PER_CLK / 108

#: Load-to-use latencies from published pointer-chase microbenchmarks of
#: Volta to Hopper: about 33 cycles for an L1 hit, 200-260 for L2, ~500 ns HBM.
L1_LATENCY_CYCLES = 33
L2_LATENCY_CYCLES = 250
DRAM_LATENCY_NS = 500.0

#: Energy per byte moved, order of magnitude from hardware-facts.md (0.5-1 pJ/B
#: from L1, 2-5 pJ/B from L2, 15-30 pJ/B from DRAM, HBM at the lower end).
FACTS = "hardware-facts.md order of magnitude"


def launch_overhead() -> Sourced:
    """Host-side cost of one PyTorch eager CUDA kernel launch."""
    return estimated(5e-6, "PyTorch eager launch of one CUDA kernel, about 5 us")


def kernel_overhead() -> Sourced:
    """Host-side cost of each further kernel of one call, queued behind the first."""
    return estimated(5e-6, "one more PyTorch eager CUDA kernel launch, about 5 us")


def energy_per_op(peaks: Mapping[str, Sourced], tdp_w: float) -> dict[str, Sourced]:
    """Energy per op per dtype, derived as TDP / dense peak (an upper bound that
    charges the whole board's power to the ALUs)."""
    return {
        dtype: derived(
            tdp_w / peak.value,
            f"TDP {tdp_w:g} W / dense peak {dtype} {fmt_si(peak.value, 'op/s')}",
        )
        for dtype, peak in peaks.items()
    }


def l1_tier(
    *,
    per_sm_bytes: Sourced,
    sms: int,
    clock_hz: float,
    pj_per_byte: float,
    kind: str = "derived",
) -> MemoryTier:
    """Per-SM L1/shared memory; bandwidth = 128 B/clk/SM x SMs x clock."""
    bandwidth = L1_BYTES_PER_CLK_PER_SM * sms * clock_hz
    formula = (
        f"{L1_BYTES_PER_CLK_PER_SM} B/clk/SM L1 load width (NVIDIA tuning guides) x {sms} SMs "
        f"x {fmt_si(clock_hz, 'Hz')}"
    )
    return MemoryTier(
        "l1",
        per_sm_bytes,
        True,
        sms,
        derived(bandwidth, formula) if kind == "derived" else estimated(bandwidth, formula),
        estimated(
            round(L1_LATENCY_CYCLES / clock_hz * 1e9, 1),
            f"~{L1_LATENCY_CYCLES} cycles L1 hit (pointer-chase microbenchmarks)",
        ),
        label="L1 / shared memory per SM",
        energy_per_byte_j=estimated(pj_per_byte * 1e-12, f"{FACTS}: 0.5-1 pJ/B from L1"),
    )


def l2_tier(
    *, capacity: Sourced, bandwidth: Sourced, clock_hz: float, pj_per_byte: float
) -> MemoryTier:
    """The shared L2."""
    return MemoryTier(
        "l2",
        capacity,
        False,
        1,
        bandwidth,
        estimated(
            round(L2_LATENCY_CYCLES / clock_hz * 1e9, 1),
            f"~{L2_LATENCY_CYCLES} cycles L2 hit (pointer-chase microbenchmarks)",
        ),
        label="L2 (shared)",
        energy_per_byte_j=estimated(pj_per_byte * 1e-12, f"{FACTS}: 2-5 pJ/B from L2"),
    )


def l2_bandwidth_by_sm(sms: int, clock_hz: float) -> tuple[float, str]:
    """L2 bandwidth scaled from A100's per SM, with its formula."""
    value = L2_BYTES_PER_CLK_PER_SM * sms * clock_hz
    formula = (
        f"A100's L2 read width per SM ({A100_L2_BYTES_PER_CLK} B/clk / 108 SMs, A100 "
        f"whitepaper) x {sms} SMs x {fmt_si(clock_hz, 'Hz')}"
    )
    return value, formula


def dram_tier(
    *, capacity: Sourced, bandwidth: Sourced, label: str, pj_per_byte: float
) -> MemoryTier:
    """The GPU's device memory (HBM or GDDR)."""
    return MemoryTier(
        "dram",
        capacity,
        False,
        1,
        bandwidth,
        estimated(DRAM_LATENCY_NS, "~500 ns device-memory load (microbenchmarks)"),
        label=label,
        energy_per_byte_j=estimated(
            pj_per_byte * 1e-12, f"{FACTS}: 15-30 pJ/B from DRAM, HBM at the lower end"
        ),
    )
