"""Shared fixtures: the compiler reference tables; the Hypothesis profile CI runs under; no
terminal width from the environment."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import InMemoryExampleDatabase

# pytester: tests/test_pytest_plugin.py runs pytest on small projects that use wddmsim's plugin.
pytest_plugins = ["pytester"]

# Under CI Hypothesis loads its "ci" profile (derandomized, database None). Its pytest plugin wraps
# a parametrized test's settings once per case, each wrapper the parent of the next, and a wrapper
# caches its database only when that is not None: with a few hundred cases (test_codec has 900) the
# chain overflows the stack. An in-memory database keeps the runs derandomized and the chain cached.
if settings.get_current_profile_name() == "ci":
    settings.register_profile("ci-wddmsim", parent=settings.get_profile("ci"), database=InMemoryExampleDatabase())
    settings.load_profile("ci-wddmsim")

DATA = Path(__file__).parent / "data"

# The commands fit their text output to COLUMNS when it is set (a terminal piped to another
# program). pytest-xdist's workers set COLUMNS=80 and LINES=24, and a person's shell may export
# them: the tests pin the output of a pipe with no COLUMNS (a test that wants one sets it).
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def msvc_tables() -> dict:
    return json.loads((DATA / "msvc_layouts.json").read_text())
