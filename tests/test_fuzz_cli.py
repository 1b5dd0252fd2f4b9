"""Fuzzing the command line the way a careless user or driver author uses it: a bounded,
derandomized share of ``tools/fuzz.py --cli`` (:mod:`wddmsim.testing.clifuzz`): inputs nested
thousands of levels deep, outputs that cannot be written, drivers that raise, exit, return what is
no NTSTATUS, fail to load or never return. Every case ends with an exit status its kind allows and never with an
exception of wddmsim's own."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from wddmsim.testing.clifuzz import KINDS, cli_case, run_case

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: cases of each kind run here (the long campaign runs 10,000 of all kinds); a looping driver takes
#: its own process and a second of the watchdog's time
PER_KIND = {"looping_driver": 3}
DEFAULT_PER_KIND = 24


@pytest.mark.parametrize("kind", KINDS)
def test_careless_command_lines_end_with_their_exit_status_and_no_traceback(tmp_path, kind):
    problems = []
    for i in range(PER_KIND.get(kind, DEFAULT_PER_KIND)):
        case = cli_case(random.Random(f"suite:{kind}:{i}"), kind)
        folder = tmp_path / str(i)
        folder.mkdir()
        problem = run_case(case, folder, EXAMPLES)
        if problem is not None:
            problems.append(problem)
    assert problems == []


def test_a_case_is_made_again_from_its_seed_alone():
    first = cli_case(random.Random("again:7"))
    second = cli_case(random.Random("again:7"))
    assert (first.kind, first.args, first.files, first.expect) == (second.kind, second.args, second.files,
                                                                   second.expect)


def test_the_checker_catches_what_it_is_there_to_catch(tmp_path):
    # A case whose command ends otherwise than its kind allows is reported, with the command line.
    case = cli_case(random.Random("x"), "deep_set")
    case.expect = frozenset({0})
    problem = run_case(case, tmp_path, EXAMPLES)
    assert problem is not None and problem.startswith("deep_set: wddmsim ") and "exit status 2, expected one of [0]" \
        in problem
