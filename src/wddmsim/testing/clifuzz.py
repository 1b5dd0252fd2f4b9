"""Random command lines a careless user or driver author would type, for the fuzzers.

Each case is one ``wddmsim`` command line with the files it names, drawn from one of
:data:`KINDS`, and the exit statuses the command may end with. Whatever the case, the command must
end with one of them and never with an exception of its own (a traceback, a RecursionError, an
OSError), within the fuzzer's wall-time bound:

- ``deep_scenario``: a scenario file holding a value nested hundreds to tens of thousands of
  levels deep (arrays or inline tables), given to ``run``, ``compare``, ``sweep`` or ``replay
  --scenario``: exit 2;
- ``deep_set``: such a value given as ``--set KEY=VALUE`` to ``run``, ``sweep`` or ``verify``:
  exit 2;
- ``deep_json``: an event log or a crash record nested that deep (``check``, ``trace``, ``decode
  @FILE``), or an event log whose lines are JSON but not objects: exit 2;
- ``unwritable``: a run whose output (``--events``, ``--trace``, ``--presentmon``, ``--report``,
  ``--crash-record``) cannot be written (``/dev/full``, a path under a regular file): the run's
  own status when it is 3, else 2;
- ``broken_driver``: a driver file (a subclass of the reference driver) whose chosen entry point,
  after a few calls, raises (an exception, ``sys.exit()``), returns what is no NTSTATUS (a string,
  None, a float, bytes, a list), or whose module or constructor fails, given to ``run --driver``:
  exit 2 (it does not load or start) or 3 (a bug check);
- ``looping_driver``: a driver whose chosen entry point, after a few calls, never returns (a busy
  loop, or a sleep in a loop), run in a process of its own with the DDI watchdog's limit at 1 s
  (``WDDMSIM_DDI_WATCHDOG_S``): exit 3 (the watchdog's bug check), the event log whole.

The cases are drawn from a :class:`random.Random` alone, so a case is made again from its seed.
:func:`run_case` runs one in this process (click's runner) and returns what went wrong, or None.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KINDS", "CliCase", "cli_case", "run_case"]

KINDS = ("deep_scenario", "deep_set", "deep_json", "unwritable", "broken_driver", "looping_driver")

#: the example every generated run starts from (small, software-scheduled, presents nothing)
EXAMPLE = "priorities.toml"
#: how deep a generated value is nested: past tomllib's and json's recursion, and far past it
DEPTHS = (600, 1_500, 3_000, 20_000, 100_000)
#: entry points a broken driver breaks, each one every packet crosses or every run calls
ENTRY_POINTS = ("DxgkDdiSubmitCommand", "DxgkDdiRender", "DxgkDdiInterruptRoutine", "DxgkDdiDpcRoutine",
                "DxgkDdiCreateContext", "DxgkDdiCreateDevice", "DxgkDdiStartDevice")
#: what a broken entry point does instead of its work (Python source, indented into the method)
MISDEEDS = (
    "raise ValueError('broken on purpose')",
    "raise KeyError('missing')",
    "return 1 // 0",
    "raise SystemExit(0)",
    "raise SystemExit(3)",
    "import sys; sys.exit()",
    "return 'STATUS_SUCCESS'",
    "return None",
    "return 0.0",
    "return b''",
    "return []",
)
#: whole-driver failures: at import, in the constructor
MODULE_MISDEEDS = ("raise RuntimeError('no import')", "import sys; sys.exit(0)", "def broken(:\n    pass")


@dataclass
class CliCase:
    """One command line: ``args`` after ``wddmsim`` (``{dir}`` stands for the case's folder),
    the ``files`` to write there first (name -> text), and the exit statuses it may end with."""

    kind: str
    args: list[str]
    expect: frozenset[int]
    files: dict[str, str] = field(default_factory=dict)
    #: run in a process of its own with these environment variables (None: in this process)
    env: dict[str, str] | None = None

    def materialise(self, folder: Path, examples: Path) -> list[str]:
        """Write the files into ``folder``; the arguments with the folder and examples filled in."""
        for name, text in self.files.items():
            (folder / name).write_text(text)
        return [a.replace("{dir}", str(folder)).replace("{examples}", str(examples)) for a in self.args]

    def describe(self) -> str:
        return f"{self.kind}: wddmsim {' '.join(self.args)[:300]}"


def _nested(rng: random.Random, depth: int, json_like: bool = False) -> str:
    """A value nested ``depth`` levels deep: arrays, or inline tables / objects."""
    if rng.random() < 0.5:
        return "[" * depth + "1" + "]" * depth
    if json_like:
        return '{"a": ' * depth + "1" + "}" * depth
    return "{ a = " * depth + "1" + " }" * depth


def _example() -> str:
    return "{examples}/" + EXAMPLE


def cli_case(rng: random.Random, kind: str | None = None) -> CliCase:
    """A random case (of ``kind``, else of a random kind)."""
    kind = kind or rng.choice(KINDS)
    depth = rng.choice(DEPTHS)
    if kind == "deep_scenario":
        text = f'name = "deep"\nx = {_nested(rng, depth)}\n'
        command = rng.choice([["run"], ["compare"], ["sweep", "--json", "--set", "scheduler.quantum=1ms,2ms"],
                              ["replay", "{examples}/../tests/data/presentmon/test_case_0_v1.csv", "--scenario"]])
        if command[0] == "replay":
            return CliCase(kind, [*command, "{dir}/deep.toml"], frozenset({2}), {"deep.toml": text})
        return CliCase(kind, [command[0], "{dir}/deep.toml", *command[1:]], frozenset({2}), {"deep.toml": text})
    if kind == "deep_set":
        key = rng.choice(["x", "scheduler.quantum", "adapter.hw_queue_depth", "name"])
        value = _nested(rng, min(depth, 20_000))
        command = rng.choice([["run", _example(), "--until", "1ms"], ["sweep", _example(), "--json"],
                              ["verify", "wddmsim.kmd:ReferenceDriver"]])
        return CliCase(kind, [*command, "--set", f"{key}={value}"], frozenset({2}))
    if kind == "deep_json":
        choice = rng.random()
        if choice < 0.2:
            line = json.dumps(rng.choice([[1, 2], 7, "text", None, True]))
            return CliCase(kind, ["check", "{dir}/log.jsonl"], frozenset({2}), {"log.jsonl": line + "\n"})
        text = _nested(rng, depth, json_like=True)
        if choice < 0.55:
            return CliCase(kind, ["check", "{dir}/log.jsonl"], frozenset({2}), {"log.jsonl": text + "\n"})
        if choice < 0.8:
            return CliCase(kind, ["trace", "{dir}/log.jsonl", "-o", "{dir}/t.json"], frozenset({2}),
                           {"log.jsonl": text + "\n"})
        return CliCase(kind, ["decode", "@{dir}/record.json"], frozenset({2}), {"record.json": '{"x": ' + text + "}"})
    if kind == "unwritable":
        option = rng.choice(["--events", "--trace", "--presentmon", "--report", "--crash-record"])
        where = rng.choice(["/dev/full", "{dir}/file/out", "{dir}/file"])
        example = rng.choice([EXAMPLE, "tdr_failure.toml"])
        # An output that cannot even be opened is refused before the run (2); one that fails as it
        # is written (a full disk) fails after it, and a bug check's status (3) stays the run's.
        expect = frozenset({2, 3}) if example == "tdr_failure.toml" else frozenset({2})
        if option == "--crash-record" and example != "tdr_failure.toml":
            expect = frozenset({0})  # no bug check: no crash record to write
        if where == "{dir}/file" and option != "--report":
            where = "/dev/full"  # a regular file is a fine place for a single output
        return CliCase(kind, ["run", "{examples}/" + example, "--until", "2s" if example == "tdr_failure.toml" else "5ms",
                              option, where], expect, {"file": "a regular file, no folder\n"})
    if kind == "broken_driver":
        if rng.random() < 0.15:
            misdeed = rng.choice(MODULE_MISDEEDS)
            # a syntax error can only be the module's
            where = "module" if misdeed.startswith("def") else rng.choice(["module", "constructor"])
            body = f"{misdeed}\n" if where == "module" else ""
            init = f"    def __init__(self, info):\n        {misdeed}\n" if where == "constructor" else "    pass\n"
            source = "from wddmsim.kmd import ReferenceDriver\n" + body + "\nclass Broken(ReferenceDriver):\n" + init
            return CliCase(kind, ["run", _example(), "--until", "5ms", "--driver", "{dir}/broken.py:Broken"],
                           frozenset({2}), {"broken.py": source})
        entry = rng.choice(ENTRY_POINTS)
        misdeed = rng.choice(MISDEEDS)
        after = rng.randint(0, 4)
        source = (
            "from wddmsim.kmd import ReferenceDriver\n\n\n"
            "class Broken(ReferenceDriver):\n"
            f"    calls = 0\n\n"
            f"    def {entry}(self, *args):\n"
            f"        type(self).calls += 1\n"
            f"        if type(self).calls > {after}:\n"
            f"            {misdeed}\n"
            f"        return super().{entry}(*args)\n"
        )
        extra = ["--events", "{dir}/events.jsonl"] if rng.random() < 0.5 else []
        return CliCase(kind, ["run", _example(), "--until", "20ms", "--driver", "{dir}/broken.py:Broken", *extra],
                       frozenset({0, 2, 3}), {"broken.py": source})
    if kind == "looping_driver":
        entry = rng.choice(ENTRY_POINTS[:5])  # called while the run runs, not while the adapter starts
        loop = rng.choice(["while True:\n                pass", "import time\n            while True:\n                time.sleep(0.01)"])
        after = rng.randint(0, 3)
        source = (
            "from wddmsim.kmd import ReferenceDriver\n\n\n"
            "class Loops(ReferenceDriver):\n"
            "    calls = 0\n\n"
            f"    def {entry}(self, *args):\n"
            "        type(self).calls += 1\n"
            f"        if type(self).calls > {after}:\n"
            f"            {loop}\n"
            f"        return super().{entry}(*args)\n"
        )
        return CliCase(kind, ["run", _example(), "--until", "20ms", "--driver", "{dir}/loops.py:Loops",
                              "--events", "{dir}/events.jsonl"], frozenset({0, 3}), {"loops.py": source},
                       env={"WDDMSIM_DDI_WATCHDOG_S": "1"})
    raise ValueError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}")


def run_case(case: CliCase, folder: Path, examples: Path) -> str | None:
    """Run ``case`` in this process with its files in ``folder``: None when it ended as it may,
    else what went wrong (an exit status it may not end with, or the exception that escaped)."""
    import traceback

    from click.testing import CliRunner

    from ..cli.app import main

    args = case.materialise(folder, examples)
    if case.env is not None:
        return _run_apart(case, args, folder)
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        tb = "".join(traceback.format_exception(type(result.exception), result.exception,
                                                result.exception.__traceback__))
        return f"{case.describe()}\nan exception escaped: {type(result.exception).__name__}\n{tb}"
    if result.exit_code not in case.expect:
        return (f"{case.describe()}\nexit status {result.exit_code}, expected one of {sorted(case.expect)}\n"
                f"{result.output[-3000:]}")
    if _own_traceback(result.output):
        return f"{case.describe()}\na traceback of wddmsim's own code in the output\n{result.output[-3000:]}"
    return None


def _run_apart(case: CliCase, args: list[str], folder: Path) -> str | None:
    """``case`` in a process of its own (a driver that loops needs the DDI watchdog, whose timer a
    fuzzer's own wall-time alarm would switch off in this one); an event log it wrote must be whole
    (its last line a ``LogEnd``)."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "wddmsim", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(case.env or {})})
    output = proc.stdout + proc.stderr
    if proc.returncode not in case.expect:
        return f"{case.describe()}\nexit status {proc.returncode}, expected one of {sorted(case.expect)}\n{output[-3000:]}"
    if _own_traceback(output):
        return f"{case.describe()}\na traceback of wddmsim's own code in the output\n{output[-3000:]}"
    log = folder / "events.jsonl"
    if log.exists():
        lines = log.read_text().splitlines()
        if not lines or '"event":"LogEnd"' not in lines[-1]:
            return f"{case.describe()}\nthe event log is not whole (no LogEnd line at its end)\n{output[-2000:]}"
    return None


def _own_traceback(output: str) -> bool:
    """Whether ``output`` shows a traceback through wddmsim's own code (a driver's traceback, which
    a crash record or a refused driver file shows on purpose, runs through the driver's file)."""
    if "Traceback (most recent call last)" not in output:
        return False
    frames = [line for line in output.splitlines() if line.lstrip().startswith('File "')]
    return any("/wddmsim/" in line and "/wddmsim/kmd/" not in line for line in frames)
