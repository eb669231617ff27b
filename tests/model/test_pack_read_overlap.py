"""A GEMM library that packs a row-major B the caches hold as its kernel
streams it (``TargetSpec.pack_read_overlap``): its packing copy's read of B
costs only the share its kernel's own stream does not do (MKL's fp32 matmul
on the Intel host: a few rows of A and a B of 2-19 MB take about one stream
of B, its linear twin, packed in a pass of its own, 1.4-2.1 times as long)."""

from __future__ import annotations

import pytest

from graphsval_core.datamodel.provenance import estimated
from graphsval_core.datamodel.target import SpecError
from graphsval_core.files.target_spec import spec_from_json, spec_to_json
from graphsval_core.model.predict import predict_batch

#: A B the toy target's caches hold (256 KiB of fp32), and one far beyond them (64 MiB).
HELD, BIG = 256, 4096


def _registry(registry_of, share: float | None = 1.0):
    """The toy target with MKL-like packing (from 3 rows of A, a slow copy so
    that its time shows) and, with ``share``, that share of the copy's read
    done in the kernel's stream."""
    own = {} if share is None else {"pack_read_overlap": {"fp32": estimated(share, "t")}}
    return registry_of(pack_bps=estimated(5e9, "t"), pack_min_rows=estimated(3, "t"), **own)


def _read(reg, op: str, shape: list[int]) -> float:
    """The packing copy's read of B: the packing time less its write at pack_bps."""
    p = predict_batch(reg, "t", op, [shape], "fp32")
    return float(p.pack_s[0]) - shape[1] * shape[2] * 4 / 5e9


def test_a_matmul_s_b_the_caches_hold_is_read_in_the_kernel_s_stream(registry_of):
    shape = [16, HELD, HELD]
    before = _read(_registry(registry_of, None), "matmul", shape)
    assert before > 0  # the copy reads B beside the kernel's own stream
    assert _read(_registry(registry_of), "matmul", shape) == pytest.approx(0.0, abs=1e-15)
    assert _read(_registry(registry_of, 0.25), "matmul", shape) == pytest.approx(0.75 * before)
    p = predict_batch(_registry(registry_of), "t", "matmul", [shape], "fp32")
    assert p.pack_read_hidden.tolist() == [1.0] and p.details(0)["pack_read_hidden"] == 1.0
    assert "(the kernel's own stream does all of its read of B through the caches)" in (
        p.sentence(0)
    )
    half = predict_batch(_registry(registry_of, 0.5), "t", "matmul", [shape], "fp32")
    assert "(the kernel's own stream does 0.5 of its read of B through" in half.sentence(0)


def test_a_b_beyond_the_caches_still_reads_what_they_do_not_keep(registry_of):
    # the share falls off as B outgrows the caches, never at a step a fitted capacity
    # could sit on, and only the caches' part is hidden: what they do not keep comes
    # from main memory at its rate whatever the kernel does
    from graphsval_core.model.terms.residency import inner_capacities

    reg = _registry(registry_of)
    spec = reg.target("t")
    kept = float(inner_capacities(spec.tiers)[-1])
    dram = spec.tiers[-1].effective_bandwidth_bps
    shapes = [[16, n, n] for n in (1536, 2048, 3072, BIG)]
    before = [_read(_registry(registry_of, None), "matmul", s) for s in shapes]
    after = [_read(reg, "matmul", s) for s in shapes]
    hidden = predict_batch(reg, "t", "matmul", shapes, "fp32").pack_read_hidden
    assert all(0 < h < 1 for h in hidden) and list(hidden) == sorted(hidden, reverse=True)
    for (_, k, n), got, was in zip(shapes, after, before, strict=True):
        assert got <= was * (1 + 1e-12)
        assert got >= (k * n * 4 - kept) / dram * (1 - 1e-9)  # main memory's part
    assert after == sorted(after)  # a larger B never reads faster


@pytest.mark.parametrize(
    ("op", "shape"),
    [
        ("linear", [16, HELD, HELD]),  # a transposed weight is packed in a pass of its own
        ("linear", [16, BIG, BIG]),
    ],
)
def test_a_linear_s_weight_is_still_read_to_pack(registry_of, op, shape):
    before = _read(_registry(registry_of, None), op, shape)
    assert before > 0
    assert _read(_registry(registry_of), op, shape) == pytest.approx(before)
    p = predict_batch(_registry(registry_of), "t", op, [shape], "fp32")
    assert p.pack_read_hidden.tolist() == [0.0]
    assert "own stream" not in p.sentence(0) and "pack_read_hidden" not in p.details(0)


def test_an_a_too_short_to_pack_packs_nothing_to_read(registry_of):
    p = predict_batch(_registry(registry_of), "t", "matmul", [[2, HELD, HELD]], "fp32")
    assert p.pack_s.tolist() == [0.0] and p.pack_read_hidden.tolist() == [0.0]


def test_the_share_round_trips_through_a_target_file_and_targets_shows_it(registry_of):
    from graphsval_core.cli.targets_cmd import _detail_rows

    spec = _registry(registry_of, 0.5).target("t")
    again = spec_from_json(spec_to_json(spec))
    assert dict(again.pack_read_overlap) == {"fp32": 0.5}
    assert again.provenance["pack_read_overlap.fp32"].kind == "estimated"
    reg = _registry(registry_of, 0.5)
    rows = {row[0]: row[1] for row in _detail_rows(reg, spec)}
    assert rows["packing read fp32"].startswith("the kernel's own stream does 0.5 of the copy")


@pytest.mark.parametrize(
    ("share", "packs", "words"),
    [
        (1.5, True, "(0, 1]"),
        (0.0, True, "(0, 1]"),
        (1.0, False, "has no pack_bps"),
    ],
)
def test_a_bad_share_is_refused_with_its_name(registry_of, share, packs, words):
    kw = {"pack_bps": estimated(5e9, "t"), "pack_min_rows": estimated(3, "t")} if packs else {}
    with pytest.raises(SpecError, match="pack_read_overlap") as err:
        registry_of(pack_read_overlap={"fp32": estimated(share, "t")}, **kw)
    assert words in str(err.value)


def test_a_share_needs_a_cpu_library_and_caches(registry_of):
    from tests.conftest import tier

    packs = {"pack_bps": estimated(5e9, "t"), "pack_min_rows": estimated(3, "t")}
    share = {"pack_read_overlap": {"fp32": estimated(1.0, "t")}}
    with pytest.raises(SpecError, match="pack_read_overlap.fp32") as err:
        registry_of(architecture="gpu", **packs, **share)
    assert "a gpu target's library does not pack B on the call" in str(err.value)
    with pytest.raises(SpecError, match="pack_read_overlap.fp32") as err:
        registry_of(tiers=[tier("dram", 8 * 1024**3)], **packs, **share)
    assert "no caches to hold B" in str(err.value)
