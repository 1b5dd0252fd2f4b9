"""Shared fixtures: the compiler reference tables; the Hypothesis profile CI runs under."""

import json
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import InMemoryExampleDatabase

# Under CI Hypothesis loads its "ci" profile (derandomized, database None). Its pytest plugin wraps
# a parametrized test's settings once per case, each wrapper the parent of the next, and a wrapper
# caches its database only when that is not None: with a few hundred cases (test_codec has 900) the
# chain overflows the stack. An in-memory database keeps the runs derandomized and the chain cached.
if settings.get_current_profile_name() == "ci":
    settings.register_profile("ci-wddmsim", parent=settings.get_profile("ci"), database=InMemoryExampleDatabase())
    settings.load_profile("ci-wddmsim")

DATA = Path(__file__).parent / "data"


def pytest_configure(config):
    # The marker a test that breaks (or demonstrates) a section-13 rule carries (tests/test_zoo.py).
    config.addinivalue_line("markers", "rule(*numbers): the test breaks or demonstrates DDI rule N")


@pytest.fixture(scope="session")
def msvc_tables() -> dict:
    return json.loads((DATA / "msvc_layouts.json").read_text())
