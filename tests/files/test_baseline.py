"""Reading baselines: the vendored V4 files, purposes, and malformed rows."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.files.baseline import (
    BaselineFileError,
    read_baseline,
    read_baseline_file,
    read_many,
)
from graphsval_core.plugins.loader import build_registry

HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"


def test_vendored_v4_files_parse_with_zero_energy_missing():
    registry = build_registry()
    files = read_many(item for _, item in registry.baseline_files())
    by_name = {b.path.rsplit("/", 1)[-1]: b for b in files}
    i7 = by_name["i7_12700k_matmul.calibration.csv"]
    assert i7.purpose_source == "suffix" and len(i7.rows) == 18
    first = i7.rows[0]
    assert (first.shape, first.dtype, first.latency_s) == ("64x64x64", "fp32", 5.778e-06)
    assert first.energy_j is None  # RAPL's sub-ms 0.0 is missing energy, not zero joules
    assert any(r.energy_j for r in i7.rows)  # real readings stay
    orin = by_name["jetson_orin_nano_8gb_vector_add.calibration.csv"]
    assert len(orin.rows) == 4 and "VDD_IN" in orin.rows[0].notes
    assert all(r.purpose == "calibration" for b in files for r in b.select("calibration"))


def test_purpose_column_then_suffix_then_none(tmp_path):
    col = tmp_path / "x.csv"
    col.write_text(
        f"{HEADER},purpose\nh,matmul,8x8x8,fp32,1e-6,,5,,validation\n"
        "h,matmul,9x9x9,fp32,1e-6,,5,,calibration\n"
    )
    b = read_baseline(col)
    assert b.purpose_source == "column" and [r.shape for r in b.select("validation")] == ["8x8x8"]
    suffixed = tmp_path / "y.validation.csv"
    suffixed.write_text(f"{HEADER}\nh,matmul,8x8x8,fp32,1e-6,,5,\n")
    assert read_baseline(suffixed).rows[0].purpose == "validation"
    plain = tmp_path / "z.csv"
    plain.write_text(f"{HEADER}\nh,matmul,8x8x8,fp32,1e-6,,5,\n")
    b = read_baseline(plain)
    assert b.purpose_source == "none" and len(b.select("validation")) == 1


def test_failed_row_has_no_latency(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text(f"{HEADER}\nh,matmul,8x8x8,fp32,,,0,failed: out of memory\n")
    (row,) = read_baseline(path).rows
    assert row.failed and row.notes == "failed: out of memory"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("h,matmul,8x8,fp32,abc,,5,", ":2: latency_s 'abc' is not a number"),
        ("h,matmul,8xAx8,fp32,1e-6,,5,", ":2: shape '8xAx8': dim 'a' is not a positive integer"),
        ("h,matmul,8x8x8,fp32,1e-6,,5", ":2: 7 fields, the header has 8"),
        (
            "h,matmul,8x8x8,fp32,-1,,5,",
            ":2: latency_s '-1' must be a finite number in [1e-12, 86400]",
        ),
        (",matmul,8x8x8,fp32,1e-6,,5,", ":2: empty hardware"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, body, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(f"{HEADER}\n{body}\n")
    with pytest.raises(BaselineFileError) as err:
        read_baseline(path)
    assert str(err.value).startswith(str(path)) and fragment in str(err.value)
    result = CliRunner().invoke(
        cli,
        [
            "registry",
            "lookup",
            "--hw",
            "i7_12700k",
            "--op",
            "matmul",
            "--shape",
            "8x8x8",
            "--dtype",
            "fp32",
            "--baseline",
            str(path),
        ],
    )
    assert result.exit_code == 2 and fragment in result.output


class _Resource:
    """A packaged file as importlib.resources hands it over (no path)."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def read_bytes(self) -> bytes:
        return self.data

    def __str__(self) -> str:
        return f"pkg/{self.name}"


def test_one_read_gives_the_rows_and_the_digest_of_the_bytes(tmp_path):
    data = f"{HEADER}\r\nh,vector_add,64,fp32,1e-6,,3,\r\n".encode()
    path = tmp_path / "x.validation.csv"
    path.write_bytes(data)
    for item in (str(path), path, _Resource("x.validation.csv", data)):
        baseline, digest = read_baseline_file(item)
        assert digest == hashlib.sha256(data).hexdigest()
        assert [r.shape for r in baseline.rows] == ["64"] and baseline.path == str(item)


def test_an_unreadable_or_undecodable_file_is_one_line(tmp_path):
    with pytest.raises(BaselineFileError, match=r"^pkg/y.csv:1: not UTF-8 text \(byte 0: "):
        read_many([_Resource("y.csv", b"\xff" + HEADER.encode())])
    with pytest.raises(BaselineFileError, match=f"^{tmp_path}: is a folder, not a baseline CSV"):
        read_baseline_file(Path(tmp_path))


def test_bad_header(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("hw,op,shape\n")
    with pytest.raises(BaselineFileError, match=":1: header must start with hardware,op"):
        read_baseline(path)


@pytest.mark.parametrize(
    ("header", "said"),
    [
        # a long header was cut at 200 characters with no mark, hiding the misspelt name
        (
            "hardware,op,shape,dtype,latncy_s,energy_j,trial_count,notes" + ",x" * 150,
            "column 5 is 'latncy_s', expected 'latency_s'",
        ),
        (
            "hardware,op,shape,dtype,latency_s,energy_j,trial_count,Notes",
            "column 8 is 'Notes', expected 'notes'",
        ),
        ("hardware,op,shape", "column 4 is missing (the header ends), expected 'dtype'"),
    ],
)
def test_a_bad_header_names_the_first_column_that_differs(tmp_path, header, said):
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n")
    with pytest.raises(BaselineFileError) as caught:
        read_baseline(path)
    assert str(caught.value).endswith(said) and len(str(caught.value)) < 300


def test_registry_lookup(tmp_path):
    ok = CliRunner().invoke(
        cli,
        [
            "registry",
            "lookup",
            "--hw",
            "jetson_orin_nano_8gb",
            "--op",
            "vector_add",
            "--shape",
            "4096",
            "--dtype",
            "fp16",
            "--json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert '"latency_s": 0.00011184000223875046' in ok.output
    missing = CliRunner().invoke(
        cli,
        [
            "registry",
            "lookup",
            "--hw",
            "jetson_orin_nano_8gb",
            "--op",
            "vector_add",
            "--shape",
            "4097",
            "--dtype",
            "fp16",
        ],
    )
    assert missing.exit_code == 2 and "was not measured" in missing.output
