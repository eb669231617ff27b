"""``--limit N``: a sample of a sweep across regimes and sizes, not its first N.

A sweep file is sorted by dtype and dims, so its first eight entries are eight
M=1 GEMVs of one regime. The sample takes the entries' regime on the target
(the model's prediction), groups them by (dtype, regime), orders each group by
size, and takes evenly spaced entries from each group in turn until it has N:
every regime and dtype is represented and sizes span each group's range. The
result is deterministic and keeps the sweep's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def _spaced(count: int, take: int) -> list[int]:
    """``take`` indices of ``range(count)`` spread evenly, ends included."""
    if take >= count:
        return list(range(count))
    if take == 1:
        return [count // 2]
    return sorted({round(i * (count - 1) / (take - 1)) for i in range(take)})


def spread_sample(
    items: Sequence[T], groups: Sequence[str], sizes: Sequence[float], limit: int
) -> list[T]:
    """``limit`` of ``items`` spread over ``groups`` (one label per item) and,
    within each group, over ``sizes`` (see module doc)."""
    if limit >= len(items):
        return list(items)
    by_group: dict[str, list[int]] = {}
    for i, label in enumerate(groups):
        by_group.setdefault(label, []).append(i)
    # take one group of each dtype in turn ("dtype regime" labels), so that a
    # small limit spans the dtypes before a dtype's many regimes
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    for name in sorted(by_group):
        dtype = name.split(" ")[0]
        rank[name] = seen.get(dtype, 0)
        seen[dtype] = rank[name] + 1
    names = sorted(by_group, key=lambda n: (rank[n], n))
    quota = dict.fromkeys(names, 0)
    left = limit
    while left > 0:  # one more per group in turn, while a group has entries left
        grew = False
        for name in names:
            if left and quota[name] < len(by_group[name]):
                quota[name] += 1
                left -= 1
                grew = True
        if not grew:
            break
    chosen: set[int] = set()
    for name in names:
        members = sorted(by_group[name], key=lambda i: (sizes[i], i))
        chosen.update(members[j] for j in _spaced(len(members), quota[name]))
    return [items[i] for i in sorted(chosen)]
