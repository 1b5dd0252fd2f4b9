"""The run summary is one object (:mod:`wddmsim.output.summary`): the terminal tables, ``--json``, the
report's ``summary.json`` and ``summary.md`` (from the run and from its saved log), the event log's
``LogEnd`` and a sweep's row show the same figures; the default tables fit 100 columns and
``--wide`` shows every column; and the JSON holds only what the seed decides."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from wddmsim.cli import main
from wddmsim.cli.demo import SCENARIO as DEMO
from wddmsim.scenario import load_scenario, parse_scenario
from wddmsim.output.report import figures_markdown
from wddmsim.output.report_plots import FIGURES
from wddmsim.output.summaryview import WIDTH, Table, markdown, print_summary, sections, time_text
from wddmsim.sweep import flatten
from wddmsim.runner.system import System

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def drawn(summary: dict, width: int, wide: bool = False) -> str:
    """The summary as the terminal shows it on a console ``width`` columns wide."""
    con = Console(file=io.StringIO(), width=width, highlight=False, color_system=None)
    print_summary(con, summary, wide=wide)
    return con.file.getvalue()


# ---------------------------------------------------------------------------------- one truth
@pytest.mark.parametrize(("example", "status", "must_show"), [
    # an engine timeout: a reset, the 0x141 live dump, a device in error
    ("tdr.toml", 0, ["live dump 0x141 VIDEO_ENGINE_TIMEOUT_DETECTED at 2.020 s",
                     "game.exe/render: device in error, 1 packet aborted, 3 cancelled"]),
    # hardware scheduling: engines, bands, hardware queues
    ("hardware_scheduling.toml", 0, ["6 queues, 182 buffers sent, 15 presents, 1 suspend, 1 resume"]),
    # a run that ends in bug check 0x116 after the 0x117 live dump
    ("tdr_failure.toml", 3, ["BugCheck 0x116 (VIDEO_TDR_FAILURE)", "live dump 0x117 VIDEO_TDR_TIMEOUT_DETECTED"]),
])
def test_every_output_shows_the_same_summary(tmp_path, example, status, must_show):
    path = str(ROOT / "examples" / example)
    crash = str(tmp_path / "crash.json")
    log, r1, r2 = tmp_path / "e.jsonl", tmp_path / "r1", tmp_path / "r2"
    as_json = runner.invoke(main, ["run", path, "--json", "--events", str(log), "--report", str(r1),
                                   "--crash-record", crash])
    assert as_json.exit_code == status, as_json.output
    summary = json.loads(as_json.stdout)
    # The terminal: the tables are drawn from that object and nothing else.
    table = runner.invoke(main, ["run", path, "--crash-record", crash])
    assert table.exit_code == status
    assert table.stdout.startswith(drawn(summary, 200))
    # The event log's last line and both report folders hold the object itself.
    assert json.loads(log.read_text().splitlines()[-1])["summary"] == summary
    assert runner.invoke(main, ["report", str(log), "-o", str(r2)]).exit_code == 0
    for folder in (r1, r2):
        assert json.loads((folder / "summary.json").read_text()) == summary
        pngs = [name for name in FIGURES if (folder / name).exists()]
        assert (folder / "summary.md").read_text() == markdown(summary) + "\n" + figures_markdown(pngs)
    md = (r1 / "summary.md").read_text()
    for text in must_show:
        assert text in table.stdout and text in md, text
    # Each context's figures, with the same text in the terminal and in the report.
    for c in summary["contexts"]:
        cells = [str(c["submitted"]), str(c["completed"]), time_text(c["latency_p50_ns"]),
                 time_text(c["latency_p99_ns"]), time_text(c["latency_max_ns"])]
        row = next(line for line in table.stdout.splitlines() if line.startswith(c["context"] + " "))
        assert [cell for cell in cells if cell not in row] == [], row
        md_row = next(line for line in md.splitlines() if line.startswith(f"| {c['context']} |"))
        assert [cell for cell in cells if f"| {cell} |" not in md_row] == [], md_row
    # A sweep's row is the object flattened.
    sweep = runner.invoke(main, ["sweep", path, "--workers", "1", "--json"])
    assert sweep.exit_code == 0, sweep.output
    (row,) = json.loads(sweep.stdout)
    figures = flatten(summary)
    assert {k: row[k] for k in figures} == figures
    assert set(row) == set(figures) | {"error"}
    assert (row["error"] is None) == (status == 0)


def test_the_summary_names_what_the_log_counts():
    """The words: a context's submitted and completed packets are its QueuePacketStart lines and its
    QueuePacketStop lines with status Completed; a node's DMA packets are its DmaPacketQueued lines
    (a packet submitted again after a preemption counts again: a resubmission); the run's
    packets_completed counts every context's."""
    from wddmsim.trace import ListSink

    log = ListSink()
    s = System(load_scenario(str(ROOT / "examples" / "preemption.toml")), trace=log).run().summary
    handle = {e["name"]: e["context"] for e in log.events if e["event"] == "ContextCreate"}
    for c in s["contexts"]:
        mine = [e for e in log.events if e.get("context") == handle[c["context"]]]
        assert c["submitted"] == sum(e["event"] == "QueuePacketStart" for e in mine)
        assert c["completed"] == sum(e["event"] == "QueuePacketStop" and e["status"] == "Completed" for e in mine)
    for n in s["nodes"]:
        assert n["packets"] == sum(e["event"] == "DmaPacketQueued" and e["node"] == n["node"] for e in log.events)
    assert s["packets_submitted"] == sum(e["event"] == "DmaPacketQueued" for e in log.events) == 52
    assert s["packets_completed"] == sum(e["event"] == "QueuePacketStop" and e["status"] == "Completed"
                                         for e in log.events) == 32
    answered = sum(e["event"] == "Callback" and e["args"].get("InterruptType") == "DXGK_INTERRUPT_DMA_PREEMPTED"
                   for e in log.events)
    assert [n["preemptions"] for n in s["nodes"]] == [answered, 0] == [12, 0]
    queued = [(e["context"], e["seq"]) for e in log.events if e["event"] == "DmaPacketQueued"]
    assert s["resubmissions"] == len(queued) - len(set(queued)) == 18


def test_json_holds_only_what_the_seed_decides(tmp_path):
    path = str(ROOT / "examples" / "game_and_compute.toml")
    first = runner.invoke(main, ["run", path, "--json", "--until", "50ms"])
    second = runner.invoke(main, ["run", path, "--json", "--until", "50ms"])
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert "wall" not in first.stdout and "real_time" not in first.stdout
    assert first.stderr.startswith("wall time ") and "real-time factor" in first.stderr


# ---------------------------------------------------------------------------------- 100 columns
def _summaries():
    for path in EXAMPLES:
        yield path.name, System(load_scenario(str(path))).run().summary
    yield "demo", System(parse_scenario(DEMO, "<demo>")).run().summary


@pytest.fixture(scope="module")
def every_summary():
    return dict(_summaries())


@pytest.mark.parametrize("name", [p.name for p in EXAMPLES] + ["demo"])
def test_the_default_tables_fit_100_columns(every_summary, name):
    summary = every_summary[name]
    natural = drawn(summary, 1000)
    assert max(len(line) for line in natural.splitlines()) <= WIDTH
    # On a 100-column terminal nothing is wrapped, squeezed or cut: the same text.
    assert drawn(summary, WIDTH) == natural


@pytest.mark.parametrize("name", ["tdr.toml", "hardware_scheduling.toml", "flips.toml", "paging.toml"])
def test_wide_shows_every_column(every_summary, name):
    summary = every_summary[name]
    default, wide = drawn(summary, 1000), drawn(summary, 1000, wide=True)
    for part in sections(summary):
        if not isinstance(part, Table):
            continue
        header = " ".join(c.label for c in part.columns)
        shown = " ".join(c.label for c in part.columns if not c.wide)
        assert " ".join(next(line for line in wide.splitlines() if line.startswith(part.columns[0].label + " "))
                        .split()) == header
        assert shown in " ".join(default.split())
    assert max(len(line) for line in wide.splitlines()) > WIDTH


def test_the_demo_and_run_wide_options(tmp_path):
    r = runner.invoke(main, ["demo"])
    assert r.exit_code == 0 and max(len(line) for line in r.stdout.splitlines()) <= WIDTH
    r = runner.invoke(main, ["demo", "--wide"])
    assert r.exit_code == 0 and "hand-off mean" in r.stdout and "worst wait" in r.stdout
    assert "Next: uv run wddmsim run examples/<name>.toml" in r.stdout
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "deep_queue.toml"), "--wide", "--until", "5ms"])
    assert r.exit_code == 0 and "last fence" in r.stdout
    assert "last fence" not in runner.invoke(main, ["run", str(ROOT / "examples" / "deep_queue.toml"),
                                                    "--until", "5ms"]).stdout


@pytest.mark.parametrize(("ns", "text"), [
    (None, "-"), (0, "0 ns"), (999, "999 ns"), (1000, "1.000 µs"), (757_798, "757.8 µs"), (999_960, "1.000 ms"),
    (2_925_000, "2.925 ms"), (31_930_000, "31.93 ms"), (498_218_700, "498.2 ms"), (2_003_992_000, "2.004 s"),
    (1_234_567_000_000, "1235 s"),
])
def test_times_carry_their_unit_and_four_significant_digits(ns, text):
    assert time_text(ns) == text
