"""Shared for the replay tests: where the PresentMon gold captures are, and each file read once."""

from functools import cache
from pathlib import Path

from wddmsim.replay.capture import Capture, read_capture

DATA = Path(__file__).parents[1] / "data" / "presentmon"
SETS = {"current": "", "v1": "_v1", "v2": "_v2"}
FILES = [f"test_case_{n}{suffix}.csv" for n in (0, 4) for suffix in SETS.values()]


def gold_path(case: int, column_set: str) -> Path:
    return DATA / f"test_case_{case}{SETS[column_set]}.csv"


@cache
def gold(case: int, column_set: str) -> Capture:
    """A gold capture, read once (tests must not change it: Capture holds a list)."""
    return read_capture(gold_path(case, column_set))
