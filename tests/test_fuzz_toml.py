"""Fuzzing scenario files: every file in examples/*.toml broken the ways an edited file is (bytes
flipped, cut at a random point, lines deleted or duplicated, values of another type, huge,
negative, NaN or infinite numbers, unknown keys, tables written twice, bytes that are not UTF-8;
:func:`wddmsim.testing.mutate.mutate_toml`) through the loader ``wddmsim run`` uses
(:func:`wddmsim.cli.util.load_scenario_file`). Each file either loads as a valid scenario or is
refused with a :class:`~wddmsim.cli.util.UserError` every line of which names the file; never
another exception. A few go through the command line: exit status 2, no traceback.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.cli import main
from wddmsim.cli.util import ScenarioProblems, UserError, load_scenario_file
from wddmsim.scenario import Scenario
from wddmsim.testing.mutate import mutate_toml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
FAULTS = (ROOT / "examples" / "faults.toml").read_text()
#: where the byte 0xFF lands in faults.toml when written inside its 'kind = "page_fault"'
BAD_BYTE_AT = FAULTS.index('kind = "page_fault"') + len('kind = "page_')


def _load(path: Path):
    """The scenario, or the refusal's lines; any other exception propagates (a failure)."""
    try:
        return load_scenario_file(str(path))
    except UserError as e:
        return e.message.splitlines()


@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(example=st.sampled_from(EXAMPLES), seed=st.integers(0, 2**32 - 1))
def test_mutated_examples_load_or_are_refused_naming_the_file(example, seed, tmp_path_factory):
    path = tmp_path_factory.mktemp("toml") / example.name
    path.write_bytes(mutate_toml(random.Random(seed), example.read_text()))
    got = _load(path)
    if not isinstance(got, Scenario):
        assert got and all(line.startswith(f"{path}: ") for line in got), got


def _mutated(tmp_path: Path, old: str, new: str | bytes) -> Path:
    path = tmp_path / "faults.toml"
    if isinstance(new, bytes):
        text = FAULTS.encode()
        at = text.index(old.encode())
        path.write_bytes(text[:at] + new + text[at + len(old):])
    else:
        assert old in FAULTS
        path.write_text(FAULTS.replace(old, new, 1))
    return path


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("fps = 120", "fps = nan", "process[0].context[0].workload.fps: must be a finite number, got nan"),
    ("fps = 120", "fps = inf", "process[0].context[0].workload.fps: must be a finite number, got inf"),
    ("fps = 120", "fps = -inf", "process[0].context[0].workload.fps: must be a finite number, got -inf"),
    ("packet = 5", "packet = -5", "fault[0].packet: must be at least 1, got -5 (range: 1 .. 1,000,000,000; the context's n-th packet, from 1)"),
    ("seed = 1", 'seed = "1"', "seed: expected an integer, got '1'"),
    ("seed = 1", "seed = 1979-05-27T07:32:00Z", "seed: expected an integer, got the date/time 1979-05-27T07:32:00+00:00"),
    ("seed = 1", 'seed = 1\ncolour = "red"', "colour: unknown field"),
    ('duration = "100ms"', 'duration = "-5ms"', "duration: a duration cannot be negative, got '-5ms'"),
    ("seed = 1", "seed = 1\nseed = 2", "line 11, column 9: cannot overwrite a value"),
    ('name = "faults"', 'name = "faults"\n[adapter]\n[adapter]', "line 10, column 9: cannot declare ('adapter',) twice"),
    ('kind = "page_fault"', b'kind = "page_\xfffault"', f"cannot read: not UTF-8 text (byte 0xff at offset {BAD_BYTE_AT})"),
])
def test_each_kind_of_damage_gets_its_exact_message(tmp_path, old, new, problem):
    path = _mutated(tmp_path, old, new)
    assert _load(path) == [f"{path}: {problem}"]


def test_a_file_cut_short_names_the_line_and_column(tmp_path):
    path = tmp_path / "faults.toml"
    path.write_bytes(FAULTS.encode()[:1500])
    assert _load(path) == [f"{path}: line 53, column 18: expected '=' after a key in a key/value pair"]


def test_an_empty_file_lacks_its_processes(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_bytes(b"")
    assert _load(path) == [f"{path}: process: required field missing"]


def test_the_scenario_problems_are_one_error_each(tmp_path):
    path = _mutated(tmp_path, "packet = 5", 'packet = -5\nfatal = "yes"')
    with pytest.raises(ScenarioProblems) as info:
        load_scenario_file(str(path))
    assert info.value.problems == [f"{path}: fault[0].packet: must be at least 1, got -5 (range: 1 .. 1,000,000,000; the context's n-th packet, from 1)",
                                   f"{path}: fault[0].fatal: expected true or false, got 'yes'"]


@pytest.mark.parametrize(("old", "new"), [
    ("fps = 120", "fps = nan"),
    ('kind = "page_fault"', b'kind = "page_\xfffault"'),
    ("seed = 1", "seed = 1\nseed = 2"),
    ('name = "faults"', 'name = "faults"\n[[adapter]]'),
])
def test_the_command_exits_2_without_a_traceback(tmp_path, old, new):
    path = _mutated(tmp_path, old, new)
    r = CliRunner().invoke(main, ["run", str(path), "--until", "1ms"])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.stderr.startswith(f"wddmsim: error: {path}: ") and "Traceback" not in r.output
