"""Fuzzing ``wddmsim decode``: every structure ``wddmsim layout --list`` knows, on x86 and x64, at
the DDI version it appeared in and at the latest, fed all-zero, all-ones and wrong-length buffers,
random buffers and mutations of valid ones (bits flipped, bytes set to 0 or 0xFF, cut short,
lengthened) through what the command does (:func:`wddmsim.cli.structures.decode_bytes`, the members'
text and JSON, the broken rules explained; :func:`wddmsim.testing.mutate.decode_case`). Each buffer
either decodes, with the structure rules' verdict, or is refused with the one input error the CLI
prints as one line with exit status 2. A few cases go through the command line itself.

tests/test_codec.py round-trips random buffers of the right size through the codec alone; here the
whole decode path is fed what a person may paste. ``tools/fuzz.py`` runs 10^5 of these.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wddmsim.cli import main
from wddmsim.ddi import layout, registry
from wddmsim.testing.mutate import buffer_cases, decodable, decode_case, mutate_bytes, structure_size

CASES = decodable()
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _refusal(name: str, arch: str, version: str, got: int) -> str:
    from wddmsim.ddi import versions

    return (f"fuzz: {name} ({arch}, {versions.ddi_version(version).name}) is "
            f"{structure_size(name, arch, version)} bytes, got {got}")


def _judge(name: str, arch: str, version: str, raw: bytes) -> None:
    """``raw`` decodes (the right size) or is refused with the exact wrong-size message."""
    verdict, detail = decode_case(name, raw, arch, version)
    if len(raw) == structure_size(name, arch, version):
        assert verdict == "decoded" and isinstance(detail, int) and detail >= 0, (name, arch, version, raw.hex())
    else:
        assert (verdict, detail) == ("refused", _refusal(name, arch, version, len(raw)))


def test_every_decodable_structure_is_every_struct_and_union_layout_lists():
    records = {n for n in registry.NAMES if registry.lookup(n).__class__.__name__ == "Record"}
    assert {name for name, _, _ in CASES} == records
    assert len(CASES) == len(set(CASES)) and {a for _, a, _ in CASES} == set(layout.ARCHES)
    assert len(CASES) == 512


def test_zeroed_all_ones_and_wrong_length_buffers_of_every_structure():
    counts = {"decoded": 0, "refused": 0}
    for name, arch, version in CASES:
        for raw in buffer_cases(structure_size(name, arch, version)):
            _judge(name, arch, version, raw)
            counts[decode_case(name, raw, arch, version)[0]] += 1
    # zeros and ones decode; empty, one short, one over and double are refused
    assert counts == {"decoded": 2 * len(CASES), "refused": 4 * len(CASES)}


@FUZZ
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32 - 1), zero_base=st.booleans())
def test_mutations_of_valid_buffers_decode_or_are_refused(case, seed, zero_base):
    name, arch, version = case
    rng = random.Random(seed)
    size = structure_size(name, arch, version)
    base = bytes(size) if zero_base else bytes(rng.getrandbits(8) for _ in range(size))
    _judge(name, arch, version, mutate_bytes(rng, base))


@FUZZ
@given(case=st.sampled_from(CASES), raw=st.binary(max_size=600))
def test_random_buffers_of_any_length_decode_or_are_refused(case, raw):
    _judge(*case, raw)


@pytest.mark.parametrize(("struct", "raw", "code", "last"), ids=["submit-zeros", "submit-ones", "hwqueue-ones",
                                                                  "interrupt-ones"], argvalues=[
    ("DXGKARG_SUBMITCOMMAND", bytes(96), 1,
     ["    Here: hContext/hDevice is NULL but must be non-NULL unless Flags.Paging or Flags.ContextSwitch",
      "      is 1"]),
    ("DXGKARG_SUBMITCOMMAND", b"\xff" * 96, 1,
     ["    adapter (``linked_adapter_count`` == 1), and below the number of linked adapters otherwise.",
      "    Here: EngineOrdinal is 4294967295 but must be 0 on an adapter that is not linked"]),
    ("DXGKARG_SUBMITCOMMANDTOHWQUEUE", b"\xff" * 64, 1,
     ["    Here: HwQueueProgressFenceCpuVa is 0xFFFFFFFFFFFFFFFF but must be 8-byte aligned (a monitored",
      "      fence value is 64 bits)"]),
    ("DXGKARGCB_NOTIFY_INTERRUPT_DATA", b"\xff" * 80, 0,
     ["No contract rule broken: judged from these bytes alone, DXGKARGCB_NOTIFY_INTERRUPT_DATA breaks none",
      "  of the rules one structure can show (rules about the calls around it need a run)."]),
])
def test_the_command_judges_zeroed_and_all_ones_buffers(struct, raw, code, last):
    """The verdict's last lines, wrapped to 100 columns (COLUMNS=100, output piped)."""
    r = CliRunner().invoke(main, ["decode", struct, raw.hex()], env={"COLUMNS": "100"})
    assert r.exit_code == code and r.exception is None or isinstance(r.exception, SystemExit)
    assert r.stdout.splitlines()[-2:] == last


@pytest.mark.parametrize(("args", "message"), [
    (["DXGKARG_SUBMITCOMMAND", "00" * 95], "argument: DXGKARG_SUBMITCOMMAND (x64, wddm3_2) is 96 bytes, got 95"),
    (["DXGKARG_SUBMITCOMMAND", "ff" * 97], "argument: DXGKARG_SUBMITCOMMAND (x64, wddm3_2) is 96 bytes, got 97"),
    (["DXGK_SUBMITCOMMANDFLAGS", "", "--arch", "x86"], "argument: DXGK_SUBMITCOMMANDFLAGS (x86, wddm3_2) is 4 bytes, "
                                                       "got 0"),
    (["DXGK_SUBMITCOMMANDFLAGS", "0g000000"], "argument: not hex: unexpected character 'g'"),
    (["DXGK_SUBMITCOMMANDFLAGS", "000"], "argument: odd number of hex digits (3)"),
    (["DXGK_SUBMITCOMMANDFLAGS", "\u00ff\u00fe"], "argument: not hex: unexpected character 'ÿ'"),
])
def test_the_command_refuses_bad_buffers_with_one_line_and_exit_2(args, message):
    r = CliRunner().invoke(main, ["decode", *args])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.stderr == f"wddmsim: error: {message}\n" and r.stdout == ""


def test_a_binary_file_of_the_wrong_length_through_the_real_process(tmp_path):
    path = tmp_path / "junk.bin"
    path.write_bytes(bytes(range(256)) * 3)
    p = subprocess.run([sys.executable, "-m", "wddmsim", "decode", "DXGKARG_PREEMPTCOMMAND", f"@{path}"],
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"wddmsim: error: {path}: DXGKARG_PREEMPTCOMMAND (x64, wddm3_2) is 16 bytes, got 768\n"
    assert "Traceback" not in p.stderr
