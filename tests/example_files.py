"""The shipped example scenarios, for the tests that run every one of them: the files, and the
examples that are meant to end in a bug check, with the code they end in (``wddmsim run`` exits
with status 3 for those)."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = sorted(str(p) for p in (Path(__file__).parent.parent / "examples").glob("*.toml"))

#: example name -> the bug check it ends in (examples/README.md lists them).
ENDS_IN_BUGCHECK = {"tdr_failure": 0x116}


def expected_bugcheck(path) -> int | None:
    """The bug check code the example at ``path`` ends in, or None for one that runs to its end."""
    return ENDS_IN_BUGCHECK.get(Path(path).stem)
