"""--update-floors and a floor lowered earlier: raising it keeps its
``lowered_from`` and reason while it is still below that value, and drops
them once it is back at or above it (both were dropped on any raise)."""

from __future__ import annotations

from graphsval_core.files.floors import read_floors, update_floors, write_floors

KEY = "toy/vector_add"
LOWERED = {
    KEY: {
        "pass": 6,
        "records": 9,
        "lowered_from": 9,
        "reason": "new L2 data",
        "recapture_within_min": 0.8,
    }
}


def test_a_raise_still_below_the_lowered_from_keeps_its_record(tmp_path):
    new, said = update_floors({KEY: (8, 10)}, LOWERED, [KEY], None)
    assert new[KEY] == {
        "pass": 8,
        "records": 10,
        "lowered_from": 9,
        "reason": "new L2 data",
        "recapture_within_min": 0.8,
    }
    assert said == [
        f"{KEY}: floor 6 -> 8 (still below 9, the floor it was lowered from: its reason kept)"
    ]
    path = tmp_path / "floors.json"
    write_floors(path, new)
    assert read_floors(path) == new  # a file read strictly again


def test_a_raise_back_to_the_lowered_from_drops_its_record():
    for passed in (9, 10):
        new, said = update_floors({KEY: (passed, 10)}, LOWERED, [KEY], None)
        assert new[KEY] == {"pass": passed, "records": 10, "recapture_within_min": 0.8}
        assert said == [
            f"{KEY}: floor 6 -> {passed} (back at or above 9, the floor it was lowered from: "
            "its reason dropped)"
        ]


def test_a_floor_never_lowered_is_raised_as_before():
    new, said = update_floors({KEY: (8, 10)}, {KEY: {"pass": 6, "records": 9}}, [KEY], None)
    assert new[KEY] == {"pass": 8, "records": 10} and said == [f"{KEY}: floor 6 -> 8"]


def test_a_floor_lowered_twice_keeps_the_first_lowered_from_and_both_reasons():
    # 9 -> 6 (LOWERED), raised to 8, lowered to 5: lowered_from stays 9, not 8.
    raised, _ = update_floors({KEY: (8, 10)}, LOWERED, [KEY], None)
    twice, said = update_floors({KEY: (5, 10)}, raised, [KEY], "a slower kernel")
    assert twice[KEY] == {
        "pass": 5,
        "records": 10,
        "lowered_from": 9,
        "reason": "a slower kernel; before that: new L2 data",
        "recapture_within_min": 0.8,
    }
    assert said == [f"{KEY}: floor 8 -> 5 (lowered: a slower kernel)"]
    # Lowered straight again from 6 (its lowered_from 9): the same.
    again, _ = update_floors({KEY: (4, 10)}, LOWERED, [KEY], "again")
    assert again[KEY]["lowered_from"] == 9
    assert again[KEY]["reason"] == "again; before that: new L2 data"
    # A raise between the two floors (8 < 9) keeps the record ...
    between, said = update_floors({KEY: (8, 10)}, twice, [KEY], None)
    assert between[KEY] == {**twice[KEY], "pass": 8}
    assert said == [
        f"{KEY}: floor 5 -> 8 (still below 9, the floor it was lowered from: its reason kept)"
    ]
    # ... and a raise at or above the first floor drops it.
    for passed in (9, 10):
        back, _ = update_floors({KEY: (passed, 10)}, between, [KEY], None)
        assert back[KEY] == {"pass": passed, "records": 10, "recapture_within_min": 0.8}


def test_a_first_lowering_records_the_floor_and_its_reason():
    new, said = update_floors({KEY: (4, 10)}, {KEY: {"pass": 6}}, [KEY], "why")
    assert new[KEY] == {"pass": 4, "records": 10, "lowered_from": 6, "reason": "why"}
    assert said == [f"{KEY}: floor 6 -> 4 (lowered: why)"]
