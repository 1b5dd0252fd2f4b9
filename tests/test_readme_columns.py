"""Every ``uv run wddmsim ...`` command of the README, run as a person runs it in a terminal 100
columns wide with its output piped (``COLUMNS=100``, standard output and error not a terminal):
it ends with exit status 0, prints no traceback, and no line of what it prints (either stream) is
wider than 100 columns. Each runs in a folder laid out as a fresh clone, after the README commands
that write the files it reads (``check out/tdr.jsonl`` after the run that writes the log)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
WIDTH = 100


def readme_commands() -> list[str]:
    """The arguments of each ``uv run wddmsim`` command in the README, in order (a trailing
    ``# comment`` dropped), the set-up line's ``demo`` among them."""
    text = (ROOT / "README.md").read_text()
    return re.findall(r"(?:^|&& )uv run wddmsim (.+?)(?:\s+#.*)?$", text, re.M)


COMMANDS = readme_commands()


def columns(line: str) -> int:
    """How many terminal columns ``line`` takes (East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def clone(tmp: Path) -> Path:
    """A folder laid out as a fresh clone for the README's commands: the inputs they read and ``out/``."""
    (tmp / "tests").mkdir(parents=True)
    (tmp / "out").mkdir()
    (tmp / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    (tmp / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    shutil.copy(ROOT / "out" / "README.md", tmp / "out" / "README.md")
    return tmp


def wddmsim(args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(WIDTH)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "wddmsim", *shlex.split(args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_readme_has_its_commands():
    assert len(COMMANDS) >= 30
    assert COMMANDS[0] == "demo" and "check out/tdr.jsonl" in COMMANDS


@pytest.mark.parametrize("index", range(len(COMMANDS)), ids=[c[:60] for c in COMMANDS])
def test_a_readme_command_fits_100_columns_with_no_traceback(index, tmp_path):
    here = clone(tmp_path)
    line = COMMANDS[index]
    # The files under out/ this command reads (an argument, not an option's value): run the
    # earlier README command that writes each first.
    words = shlex.split(line)
    for before, word in zip(["", *words], words):
        if word.startswith("out/") and not before.startswith("-"):
            writer = next(c for c in COMMANDS[:index] if word in shlex.split(c))
            assert wddmsim(writer, here).returncode == 0, writer
    r = wddmsim(line, here)
    assert r.returncode == 0, (line, r.stderr[-2000:])
    assert "Traceback" not in r.stdout + r.stderr
    wide = [f"{columns(text)}: {text}" for text in (r.stdout + r.stderr).splitlines() if columns(text) > WIDTH]
    assert wide == [], line
