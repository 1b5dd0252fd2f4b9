"""The event log file as JsonlSink writes it: each line is exactly ``json.dumps`` of the event (compact
separators, keys in the order emitted, UTF-8 as is), whatever shortcuts the writer takes (a
structure's members written from the text its reader made, the encoder made once); the same
scenario and seed give a byte-identical file, alone or beside ``--trace``/``--report``; the file
reads back as the events emitted, and ``wddmsim trace``/``report`` take it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import JsonlSink, ListSink, TeeSink, read_events

ROOT = Path(__file__).parent.parent
EXAMPLES = ["game_and_compute", "preemption", "gpu_va", "hardware_scheduling", "native_fence", "tdr", "paging"]


def _documented_line(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_line_is_the_documented_encoding_of_its_event(tmp_path, name):
    sc = load_scenario(str(ROOT / "examples" / f"{name}.toml"))
    path = tmp_path / "log.jsonl"
    sink, kept = JsonlSink(str(path)), ListSink()
    System(sc, trace=TeeSink(sink, kept)).run(until=min(sc.duration, 100_000_000))
    sink.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines == [_documented_line(e) for e in kept.events]
    assert sink.count == len(kept.events) > 10
    assert read_events(str(path)) == kept.events
    assert any(e["event"] == "DdiCall" and e["args"] for e in kept.events)


def test_a_name_outside_ascii_is_written_as_is(tmp_path):
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    sink.emit(5, "ProcessCreate", {"process": 4, "name": "jeu-été.exe", "priority_class": "normal"})
    sink.emit(6, "LogEnd", {})
    sink.close()
    assert path.read_bytes() == ('{"t":5,"event":"ProcessCreate","process":4,"name":"jeu-été.exe",'
                                 '"priority_class":"normal"}\n{"t":6,"event":"LogEnd"}\n').encode()


@pytest.mark.parametrize("process", [True, False])
def test_a_value_json_cannot_write_is_refused(tmp_path, process):
    """In process the emit raises; with a writer process the same error is raised by close()."""
    sink = JsonlSink(str(tmp_path / "log.jsonl"), process=process)
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        sink.emit(0, "Dropped", {"source": {1}})
        sink.close()


def _cli_log(tmp_path, tag: str, *extra: str) -> bytes:
    path = tmp_path / f"{tag}.jsonl"
    res = CliRunner().invoke(main, ["run", str(ROOT / "examples" / "game_and_compute.toml"), "--until", "60ms",
                                    "--events", str(path), *extra])
    assert res.exit_code == 0, res.output
    return path.read_bytes()


def test_the_same_run_gives_a_byte_identical_log_whatever_else_is_written(tmp_path):
    alone = _cli_log(tmp_path, "a")
    assert _cli_log(tmp_path, "b") == alone
    with_all = _cli_log(tmp_path, "c", "--trace", str(tmp_path / "t.json"), "--report", str(tmp_path / "r"),
                        "--presentmon", str(tmp_path / "p.csv"))
    assert with_all == alone
    assert alone.count(b'"event":"DdiCall"') > 100


def test_trace_and_report_from_the_written_log_equal_those_of_the_run(tmp_path):
    _cli_log(tmp_path, "log", "--trace", str(tmp_path / "run-trace.json"), "--report", str(tmp_path / "run-rep"))
    log = str(tmp_path / "log.jsonl")
    runner = CliRunner()
    res = runner.invoke(main, ["trace", log, "-o", str(tmp_path / "trace.json")])
    assert res.exit_code == 0, res.output
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert trace == json.loads((tmp_path / "run-trace.json").read_text())
    assert sum(e.get("cat") == "dma" for e in trace["traceEvents"]) > 10
    res = runner.invoke(main, ["report", log, "-o", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    summary = (tmp_path / "rep" / "summary.json").read_text()
    assert summary == (tmp_path / "run-rep" / "summary.json").read_text()
    assert (tmp_path / "rep" / "summary.md").read_text() == (tmp_path / "run-rep" / "summary.md").read_text()


def test_events_kept_in_memory_hold_plain_dicts():
    sc = load_scenario(str(ROOT / "examples" / "game_and_compute.toml"))
    kept = ListSink()
    System(sc, trace=kept).run(until=20_000_000)
    calls = kept.of("DdiCall")
    assert calls and all(type(e["args"]) is dict for e in calls)
    submit = next(e for e in calls if e["name"] == "DxgkDdiSubmitCommand")
    assert submit["args"]["SubmissionFenceId"] == 1 and submit["args"]["Flags"]["Value"] == 0


def test_names_with_percent_signs_and_values_of_every_json_type(tmp_path):
    path = tmp_path / "log.jsonl"
    sink = JsonlSink(str(path))
    events = [(1, "A%sB", {"k%d": 1, "f": 0.5, "b": True, "n": None, "l": [1, "x"], "d": {"e": -2}, "s": "q\"u"}),
              (2, "A%sB", {"k%d": 2, "f": 1, "b": False, "n": 3, "l": [], "d": {}, "s": ""}),
              (3, "A%sB", {"k%d": "x"}), (4, "Empty", {})]
    for e in events:
        sink.emit(*e)
    sink.close()
    assert path.read_text(encoding="utf-8").splitlines() == [
        _documented_line({"t": t, "event": name, **fields}) for t, name, fields in events]
