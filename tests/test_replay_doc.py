"""docs/replay.md holds the comparison tables the model gives today on the shipped captures
(``tools/replay_tables.py`` prints them): a change to the model that moves a figure must update the
document, so the misses it explains are the model's real ones."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_tables_in_docs_replay_md_are_the_models():
    spec = importlib.util.spec_from_file_location("replay_tables", ROOT / "tools" / "replay_tables.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    doc = (ROOT / "docs" / "replay.md").read_text()
    for capture, table in tool.tables().items():
        assert f"{capture}\n\n{table}\n" in doc, f"docs/replay.md: the table of {capture} is out of date"
    assert f"The compositor's cadence\n\n{tool.cadence_table()}\n" in doc, \
        "docs/replay.md: the table of the compositor's cadence is out of date"
