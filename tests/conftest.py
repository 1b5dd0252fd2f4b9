"""Shared fixtures: the compiler reference tables."""

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def msvc_tables() -> dict:
    return json.loads((DATA / "msvc_layouts.json").read_text())
