"""docs/policies.md: the blocks that write examples/policies/my_edf.py are the shipped file, the
file is under 60 lines, and the page's commands do what it says (the policy meets every deadline
of the mixed-deadline workload; a sweep sets it beside the built-ins and draws the comparison)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "policies.md"
FILE = ROOT / "examples" / "policies" / "my_edf.py"


def _blocks() -> list[str]:
    text = DOC.read_text()
    return re.findall(r"<!-- file: examples/policies/my_edf.py -->\n```python\n(.*?)```", text, re.S)


def test_the_walkthrough_blocks_are_the_shipped_file():
    blocks = _blocks()
    assert len(blocks) == 3
    written = [line for block in blocks for line in block.splitlines() if line.strip()]
    shipped = [line for line in FILE.read_text().splitlines() if line.strip()]
    assert written == shipped
    assert len(FILE.read_text().splitlines()) < 60


def test_the_walkthrough_policy_meets_every_deadline_where_windows_does_not(monkeypatch):
    monkeypatch.chdir(ROOT)
    sc = api.load("examples/research/mixed_deadlines.toml", overrides={"duration": "500ms"})
    mine = api.run(api.validate(sc, overrides={"scheduler.policy": "examples/policies/my_edf.py:MyEdf"})).summary
    windows = api.run(sc).summary
    assert [c.deadline_misses for c in mine.contexts] == [0, 0, 0]
    assert [c.jobs for c in mine.contexts] == [50, 30, 15]
    assert sum(c.deadline_misses for c in windows.contexts) > 0
    assert mine.policy.endswith("examples/policies/my_edf.py:MyEdf")


def test_the_pages_run_and_sweep_commands_work(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    run = runner.invoke(main, ["run", "examples/research/mixed_deadlines.toml", "--policy",
                               "examples/policies/my_edf.py:MyEdf", "--until", "200ms"])
    assert run.exit_code == 0, run.output
    rows = tmp_path / "my_edf.csv"
    report = tmp_path / "my_edf"
    swept = runner.invoke(main, ["sweep", "examples/research/mixed_deadlines.toml", "--set",
                                 "scheduler.policy=windows,fifo,edf,examples/policies/my_edf.py:MyEdf",
                                 "--set", "duration=200ms", "--seeds", "1-2", "--workers", "1", "-o", str(rows),
                                 "--report", str(report)])
    assert swept.exit_code == 0, swept.output
    assert (report / "policy_comparison.png").is_file()
    lines = rows.read_text().splitlines()
    assert len(lines) == 1 + 4 * 2
    assert [line.split(",")[0] for line in lines[1:]] == [
        "windows", "windows", "fifo", "fifo", "edf", "edf", "examples/policies/my_edf.py:MyEdf",
        "examples/policies/my_edf.py:MyEdf"]
