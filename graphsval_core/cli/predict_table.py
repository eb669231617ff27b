"""``graphsval predict``'s output, column by column.

The predictions of every (op, dtype) batch are gathered into one table of
numpy columns in the input's order (:func:`gather`), then written as CSV a
column at a time (:func:`write_csv`: numbers to ten significant digits, an
absent term empty), or turned into rows for the table and JSON
formats. No Python loop over a shape's fields: 100,000 predictions are
written in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO, Any

import numpy as np

#: The columns of ``predict --format csv``, in order.
CSV_COLUMNS = (
    "hardware",
    "op",
    "shape",
    "dtype",
    "latency_s",
    "energy_j",
    "regime",
    "binding_tier",
    "launch_s",
    "exposed_compute_s",
    "exposed_memory_s",
    "first_touch_s",
    "pack_s",
    "hidden_s",
    "compute_s",
    "memory_s",
)
#: Columns gathered beside the CSV's, for the rollup (not written).
EXTRA_COLUMNS = ("energy_static_j",)
#: The text columns (the rest are numbers).
TEXT_COLUMNS = ("hardware", "op", "shape", "dtype", "regime", "binding_tier")


def shape_strings(shapes: np.ndarray) -> list[str]:
    """``[[1024, 1024, 512], ...]`` -> ``["1024x1024x512", ...]``."""
    rows = np.asarray(shapes, dtype=np.int64)
    if rows.ndim == 1:
        rows = rows[:, None]
    columns = [list(map(str, rows[:, k].tolist())) for k in range(rows.shape[1])]
    return ["x".join(parts) for parts in zip(*columns, strict=True)] if columns else []


def gather(n: int, parts: Sequence[tuple[np.ndarray, Any]]) -> dict[str, np.ndarray]:
    """One table of ``n`` rows from ``parts``: each an index array (the rows it
    fills) and the :class:`~graphsval_core.model.prediction.Prediction` of
    those rows. A term a predictor does not report is NaN."""
    table: dict[str, np.ndarray] = {}
    for name in (*CSV_COLUMNS, *EXTRA_COLUMNS):
        table[name] = np.empty(n, dtype=object) if name in TEXT_COLUMNS else np.full(n, np.nan)
    for index, pred in parts:
        table["hardware"][index] = pred.target
        table["op"][index] = pred.op
        table["dtype"][index] = pred.dtype
        table["shape"][index] = shape_strings(pred.shapes)
        table["regime"][index] = np.asarray(pred.regime).astype(str)
        table["binding_tier"][index] = np.asarray(pred.binding_tier).astype(str)
        for name in (*CSV_COLUMNS, *EXTRA_COLUMNS):
            if name in TEXT_COLUMNS:
                continue
            value = getattr(pred, name, None)
            if value is not None:
                table[name][index] = np.asarray(value, dtype=np.float64)
    return table


#: How a number is written: ten significant digits (a model's prediction
#: carries no more), three times faster to write than the shortest round trip.
NUMBER_FORMAT = "%.10g"
#: Rows formatted at a time (bounds the memory of one formatting).
CHUNK = 32768


def _text(values: np.ndarray) -> np.ndarray:
    """Text cells, quoted where the csv module would quote them."""
    out = values
    if any(c in v for v in set(values.tolist()) for c in ',"\n\r'):
        out = np.array(
            [
                '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n\r') else v
                for v in values
            ],
            dtype=object,
        )
    return out


def write_csv(table: dict[str, np.ndarray], stream: IO[str]) -> None:
    """``table`` as CSV on ``stream``: the heading, then one line per row
    (numbers to :data:`NUMBER_FORMAT`, an absent number empty), formatted
    :data:`CHUNK` rows at a time by one ``%`` over the whole chunk."""
    n = len(table["hardware"])
    line = ",".join("%s" if name in TEXT_COLUMNS else NUMBER_FORMAT for name in CSV_COLUMNS)
    cells = np.empty((n, len(CSV_COLUMNS)), dtype=object)
    absent = False
    for k, name in enumerate(CSV_COLUMNS):
        if name in TEXT_COLUMNS:
            cells[:, k] = _text(table[name])
        else:
            cells[:, k] = table[name]
            absent = absent or bool(np.isnan(table[name]).any())
    stream.write(",".join(CSV_COLUMNS) + "\n")
    for start in range(0, n, CHUNK):
        block = cells[start : start + CHUNK]
        text = ((line + "\n") * len(block)) % tuple(block.ravel().tolist())
        if absent:  # NaN: a term the predictor does not report
            for _ in range(2):  # twice: two absent cells side by side share a comma
                text = text.replace(",nan,", ",,")
            text = text.replace(",nan\n", ",\n")
        stream.write(text)


def rows(table: dict[str, np.ndarray]) -> Iterator[dict[str, Any]]:
    """The table's rows as dicts of plain values (an absent term None)."""
    columns = {
        name: table[name].tolist()
        if name in TEXT_COLUMNS
        else [None if v != v else v for v in table[name].tolist()]
        for name in CSV_COLUMNS
    }
    for i in range(len(table["hardware"])):
        yield {name: columns[name][i] for name in CSV_COLUMNS}
