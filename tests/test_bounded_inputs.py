"""Every input file is read with a bound (wddmsim/util/inputbound.py): /dev/zero, or a file past the
limit for its kind, is refused in one line with exit 2 after reading one byte past the limit,
instead of being read without end; and a log that is not UTF-8 names the byte and where it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.util import inputbound
from wddmsim.cli import main
from wddmsim.trace import records

ZERO = "/dev/zero"
endless = pytest.mark.skipif(not os.path.exists(ZERO), reason="needs /dev/zero")


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@endless
@pytest.mark.parametrize("args, said", [
    (["run", ZERO], f"wddmsim: error: {ZERO}: cannot read: the file is larger than 64 MiB, the limit for this input "
                    f"(a scenario file)"),
    (["compare", ZERO], f"wddmsim: error: {ZERO}: cannot read: the file is larger than 64 MiB, the limit for this "
                        f"input (a scenario file)"),
    (["check", ZERO], f"wddmsim: error: {ZERO}: not a wddmsim event log: line 1: longer than 64 MiB, the limit for "
                      f"one event"),
    (["decode", "DXGKARG_PATCH", f"@{ZERO}"], f"wddmsim: error: {ZERO}: the file is larger than 1 MiB, the limit "
                                              f"for this input (no DDI structure is)"),
    (["decode", f"@{ZERO}"], f"wddmsim: error: {ZERO}: the file is larger than 16 MiB, the limit for this input "
                             f"(a crash record)"),
])
def test_an_endless_file_is_refused_at_the_limit_for_its_kind(args, said):
    result = invoke(*args)
    assert (result.exit_code, result.output.strip()) == (2, said)


def test_a_scenario_file_one_byte_past_the_limit_is_refused_and_one_at_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(inputbound, "SCENARIO_MAX", 64)
    text = 'name = "x"\n'
    at = tmp_path / "at.toml"
    at.write_text(text + "#" * (64 - len(text) - 1) + "\n")
    assert at.stat().st_size == 64
    past = tmp_path / "past.toml"
    past.write_text(at.read_text() + "\n")
    r = invoke("run", str(past))
    assert (r.exit_code, r.output.strip()) == (
        2, f"wddmsim: error: {past}: cannot read: the file is larger than 64 bytes, the limit for this input "
           f"(a scenario file)")
    r = invoke("run", str(at))
    assert "larger than" not in r.output  # read whole: what it says next is about the scenario itself


def test_an_event_log_line_past_the_limit_names_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "LOG_LINE_MAX", 32)
    log = tmp_path / "long.jsonl"
    log.write_text('{"t": 0, "event": "LogStart"}\n' + '{"t": 0, "event": "' + "x" * 40 + '"}\n')
    r = invoke("check", str(log))
    assert (r.exit_code, r.output.strip()) == (
        2, f"wddmsim: error: {log}: not a wddmsim event log: line 2: longer than 32 bytes, the limit for one event")


def test_a_log_that_is_not_utf8_names_the_byte_and_its_column(tmp_path):
    log = tmp_path / "latin.jsonl"
    log.write_bytes(b'{"t": 0, "event": "LogStart", "name": "caf\xe9"}\n')
    r = invoke("check", str(log))
    assert (r.exit_code, r.output.strip()) == (
        2, f"wddmsim: error: {log}: not a wddmsim event log: line 1: not UTF-8 text (byte 0xe9 at column 43)")


def test_a_cut_last_line_is_still_left_out_with_its_line_number(tmp_path):
    log = tmp_path / "cut.jsonl"
    good = Path(__file__).resolve().parents[1] / "examples" / "priorities.toml"
    events = tmp_path / "e.jsonl"
    assert invoke("run", str(good), "--until", "1ms", "--events", str(events)).exit_code == 0
    lines = events.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:10])
    events_read, cut = records.read_events_cut(str(log))
    assert len(events_read) == len(lines) - 1
    assert cut == (f"its last line is cut short (10 bytes with no end of line): read up to line {len(lines) - 1}, "
                   f"the last whole one")
    with pytest.raises(ValueError, match=f"^line {len(lines)}: "):
        records.read_events(str(log))
