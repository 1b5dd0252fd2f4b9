"""The compiled modules (``wddmsim._native``, built by ``hatch_build.py``) and their fallback.

Whether this build compiled them or not, the suite passes; these tests check the switch itself:
``WDDMSIM_PURE=1`` runs the sources, a build that compiled them is used, the two give the same
event log byte for byte, and the classes interpreted code subclasses stay subclassable.
"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import wddmsim._native as native
from wddmsim.sim import StopSimulation, Timer

ROOT = Path(__file__).parents[1]
SUMS = Path(native.__file__).with_name(native.SUMS)
COMPILED_HERE = SUMS.exists() and native._fresh()

PROBE = (
    "import wddmsim._native as n, importlib\n"
    "for m in n.COMPILED: importlib.import_module(m)\n"
    "print(repr(n.status()))\n"
)


def _status(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "WDDMSIM_PURE"}
    if pure:
        env["WDDMSIM_PURE"] = "1"
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return eval(out.stdout)


def test_pure_switch_runs_the_sources():
    status = _status(pure=True)
    assert set(status) == set(native.COMPILED)
    assert all(v == "pure: WDDMSIM_PURE is set" for v in status.values()), status


@pytest.mark.skipif(not COMPILED_HERE, reason="this build compiled nothing (no compiler): the sources run")
def test_a_compiled_build_is_used():
    assert _status(pure=False) == {name: "compiled" for name in native.COMPILED}


def test_every_compiled_source_rebuilds_the_editable_install():
    """``uv run`` rebuilds when a compiled module's source changes, so a stale one is never kept."""
    keys = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["cache-keys"]
    files = {k["file"] for k in keys if "file" in k}
    for name in native.COMPILED:
        assert Path(native.source_path(name)).relative_to(ROOT).as_posix() in files, name
    assert {"pyproject.toml", "hatch_build.py", "src/wddmsim/_native.py"} <= files


def test_what_interpreted_code_subclasses_stays_subclassable():
    class Stop(StopSimulation):
        pass

    class Handle(Timer):
        __slots__ = ()

    assert issubclass(Stop, Exception) and Handle([0, 0, None, None]).cancelled


@pytest.mark.skipif(not COMPILED_HERE, reason="this build compiled nothing (no compiler): the sources run")
def test_compiled_and_pure_logs_are_the_same_bytes(tmp_path):
    logs = []
    for pure in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "WDDMSIM_PURE"}
        if pure:
            env["WDDMSIM_PURE"] = "1"
        log = tmp_path / f"{'pure' if pure else 'compiled'}.jsonl"
        subprocess.run([sys.executable, "-m", "wddmsim", "run", str(ROOT / "examples" / "game_and_compute.toml"),
                        "--until", "100ms", "--events", str(log)], env=env, check=True, capture_output=True)
        logs.append(log.read_bytes())
    assert logs[0] == logs[1] and len(logs[0]) > 1000
