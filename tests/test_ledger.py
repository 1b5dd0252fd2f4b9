"""The packet ledger (docs/ledger.md): every example keeps a clean ledger; a model that loses or
doubles a packet fails the run with exit status 4 and the packet's history; ``wddmsim check LOG``
finds what a mutated log lost or doubled, and reads a partial log up to where it ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main
from wddmsim.dxgkrnl.vidsch import VidSch
from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace.ledger import LedgerError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

ENDED = {"packets": ("completed", "cancelled", "aborted"), "paging": ("completed", "cancelled", "aborted"),
         "dma_submissions": ("completed", "preempted", "reset", "aborted"), "presents": ("displayed", "dropped"),
         "progress_fences": ("completed", "cancelled", "aborted")}

#: The exact totals of three examples at their own seed: a reset with cancellations, paging with
#: evictions, hardware scheduling with presents.
EXACT = {
    "tdr": {"packets": {"created": 749, "completed": 745, "cancelled": 3, "aborted": 1, "resubmitted": 1,
                        "in_flight": 0},
            "paging": {"created": 0, "completed": 0, "cancelled": 0, "aborted": 0, "resubmitted": 0, "in_flight": 0,
                       "evictions": 0},
            "dma_submissions": {"created": 747, "completed": 745, "preempted": 1, "reset": 0, "aborted": 1,
                                "in_flight": 0},
            "presents": {"created": 0, "displayed": 0, "dropped": 0, "pending": 0},
            "progress_fences": {"created": 0, "completed": 0, "cancelled": 0, "aborted": 0, "in_flight": 0}},
    "residency": {"packets": {"created": 17, "completed": 16, "cancelled": 0, "aborted": 1, "resubmitted": 0,
                              "in_flight": 0},
                  "paging": {"created": 18, "completed": 18, "cancelled": 0, "aborted": 0, "resubmitted": 0,
                             "in_flight": 0, "evictions": 10},
                  "dma_submissions": {"created": 35, "completed": 34, "preempted": 0, "reset": 0, "aborted": 1,
                                      "in_flight": 0},
                  "presents": {"created": 0, "displayed": 0, "dropped": 0, "pending": 0},
                  "progress_fences": {"created": 0, "completed": 0, "cancelled": 0, "aborted": 0, "in_flight": 0}},
    "hardware_scheduling": {
        "packets": {"created": 182, "completed": 176, "cancelled": 0, "aborted": 0, "resubmitted": 0, "in_flight": 6},
        "paging": {"created": 0, "completed": 0, "cancelled": 0, "aborted": 0, "resubmitted": 0, "in_flight": 0,
                   "evictions": 0},
        "dma_submissions": {"created": 0, "completed": 0, "preempted": 0, "reset": 0, "aborted": 0, "in_flight": 0},
        "presents": {"created": 15, "displayed": 5, "dropped": 8, "pending": 2},
        "progress_fences": {"created": 182, "completed": 176, "cancelled": 0, "aborted": 0, "in_flight": 6}},
}


def test_every_example_keeps_a_clean_ledger_and_three_have_these_exact_totals():
    """Every example at a second seed (the suite runs each at its own): no violation, and every
    item created ended or is in flight; three at their own seed: the exact totals."""
    for path in EXAMPLES:
        totals = System(load_scenario(str(path)), seed=7).run().summary["ledger"]
        for kind, ends in ENDED.items():
            t = totals[kind]
            open_ = t["pending"] if kind == "presents" else t["in_flight"]
            assert t["created"] == sum(t[k] for k in ends) + open_, (path.stem, kind, t)
        if path.stem in EXACT:
            assert System(load_scenario(str(path))).run().summary["ledger"] == EXACT[path.stem], path.stem


# ------------------------------------------------------------------------------ a broken model
def _forget_one_retirement(monkeypatch) -> None:
    """The OS forgets the first packet its DPC should retire: it leaves the hardware queue
    without a QueuePacketStop, without counting."""
    original = VidSch.retire
    state = {"done": False}

    def retire(self):
        for q in self.nodes:
            if q.stopped and not state["done"]:
                state["done"] = True
                q.hw.popleft()
                q.stopped -= 1
        original(self)

    monkeypatch.setattr(VidSch, "retire", retire)



def flat(text: str) -> str:
    """``text`` with its line breaks and indents as single spaces: a violation's words, which
    ``check`` wraps at 100 columns."""
    return " ".join(text.split())


def test_a_model_that_forgets_a_retirement_fails_the_run_with_exit_4_and_the_packets_history(monkeypatch):
    _forget_one_retirement(monkeypatch)
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "deep_queue.toml")])
    assert r.exit_code == 4
    assert r.stdout == ""
    assert r.stderr == (
        "wddmsim: internal error: the model lost track of packet 1 of context 1073742016\n"
        "packet 1 of context 1073742016: completed on the GPU but never retired, while packet 2 of context\n"
        "  1073742016 completed after it on node 0 and was retired (at 2 ms)\n"
        "  its history:\n"
        "            0 ns  QueuePacketStart context=1073742016 process=4096 node=0 seq=1 kind=render queued=1\n"
        "                  hwqueue=0 progress_id=0\n"
        "            0 ns  DmaPacketQueued context=1073742016 node=0 fence=1 kind=render seq=1 depth=1\n"
        "            0 ns  DmaPacketStart context=1073742016 node=0 fence=1 kind=render seq=1 resubmission=0\n"
        "            1 ms  DmaPacketStop context=1073742016 node=0 fence=1 kind=render seq=1 status=Completed\n"
        "            2 ms  QueuePacketStop context=1073742016 node=0 fence=2 kind=render seq=2\n"
        "                  status=Completed hwqueue=0\n"
        "wddmsim: this is a bug of the model, not of the scenario or the driver; please report it with the "
        "scenario and seed\n")


def test_a_model_that_retires_a_packet_twice_raises_from_the_api_and_the_log_is_whole(monkeypatch, tmp_path):
    """The DPC retires the first packet twice: the second QueuePacketStop is a violation, and the
    context's own count (101 completed of 100 created) and VidSch's disagree with the ledger's."""
    original = VidSch.retire
    state = {"done": False}

    def retire(self):
        for q in self.nodes:
            if q.stopped and not state["done"]:
                state["done"] = True
                q.hw.insert(1, q.hw[0])
                q.stopped += 1
        original(self)

    monkeypatch.setattr(VidSch, "retire", retire)
    log = tmp_path / "log.jsonl"
    with pytest.raises(LedgerError) as caught:
        api.run(str(ROOT / "examples" / "deep_queue.toml"), events=str(log))
    found = caught.value.violations
    assert [(v.item, v.message) for v in found] == [
        ("packet 1 of context 1073742016", "QueuePacketStop Completed after the packet ended"),
        ("the packets of context 1073742016 (bench.exe/queue): submitted, completed, cancelled, aborted",
         "the model counts [100, 101, 0, 0], the ledger [100, 100, 0, 0]"),
        ("the packets VidSch retired", "the model counts 101, the ledger 100"),
    ]
    assert [e for _, e, _ in found[0].history] == ["QueuePacketStart", "DmaPacketQueued", "DmaPacketStart",
                                                   "DmaPacketStop", "QueuePacketStop", "QueuePacketStop"]
    assert str(caught.value) == "the model lost track of packet 1 of context 1073742016 (and 2 more)"
    # The log was written whole, LogEnd included, and check finds the same doubled stop.
    assert json.loads(log.read_text().splitlines()[-1])["event"] == "LogEnd"
    r = runner.invoke(main, ["check", str(log)])
    assert r.exit_code == 1
    assert "packet 1 of context 1073742016: QueuePacketStop Completed after the packet ended (at 1 ms)" \
        in flat(r.stdout)


# ------------------------------------------------------------------------------ wddmsim check
@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict:
    """Event logs of three examples: software scheduling, presents, hardware scheduling."""
    d = tmp_path_factory.mktemp("logs")
    out = {}
    for name in ("deep_queue", "video_copy", "hardware_scheduling"):
        path = d / f"{name}.jsonl"
        r = runner.invoke(main, ["run", str(ROOT / "examples" / f"{name}.toml"), "--events", str(path)])
        assert r.exit_code == 0, r.output
        out[name] = [json.loads(line) for line in path.read_text().splitlines()]
    return out


def _write(tmp_path, events: list[dict]) -> str:
    path = tmp_path / "mutated.jsonl"
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
    return str(path)


def _check(path: str, *more):
    return runner.invoke(main, ["check", path, *more])


def test_check_on_a_clean_log_prints_the_verdict_table_and_exits_0(logs, tmp_path):
    path = _write(tmp_path, logs["deep_queue"])
    r = _check(path)
    assert r.exit_code == 0
    assert r.stdout == (
        f"{path}: 1007 events; the run reached its end time at 1.000 s of virtual time\n"
        "item kind        created  ended  in flight  how they ended\n"
        "packets              100    100          0  100 completed, 0 cancelled, 0 aborted; 0 resubmitted\n"
        "paging packets         0      0          0  0 completed, 0 cancelled, 0 aborted; 0 resubmitted; 0\n"
        "                                            evictions\n"
        "DMA submissions      100    100          0  100 completed, 0 preempted, 0 reset, 0 aborted\n"
        "presents               0      0          0  0 displayed, 0 dropped\n"
        "progress fences        0      0          0  0 completed, 0 cancelled, 0 aborted\n"
        "totals: the same as the log's LogEnd summary\n"
        "verdict: clean: every packet, flip, paging operation and progress fence is accounted for\n")
    as_json = json.loads(_check(path, "--json").stdout)
    assert (as_json["verdict"], as_json["violations"], as_json["in_flight"]) == ("clean", [], [])
    assert as_json["totals"] == as_json["logged_totals"] == logs["deep_queue"][-1]["summary"]["ledger"]
    assert as_json["ending"] == {"reason": "time", "t": 1_000_000_000, "partial": False,
                                 "text": "the run reached its end time at 1.000 s of virtual time"}


def _index(events, event: str, **match) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == event and all(e[k] == v for k, v in match.items()))


def test_check_finds_a_deleted_queue_packet_stop(logs, tmp_path):
    events = list(logs["deep_queue"])
    del events[_index(events, "QueuePacketStop", seq=5)]
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 1
    assert ("packet 5 of context 1073742016: completed on the GPU but never retired, while packet 6 of context "
            "1073742016 completed after it on node 0 and was retired") in flat(r.stdout)
    # The totals disagree with the log's own summary too.
    assert "the packets total 'completed': the log's LogEnd summary says 100, the replay counts 99" in flat(r.stdout)


def test_check_finds_a_duplicated_dma_packet_stop(logs, tmp_path):
    events = list(logs["deep_queue"])
    i = _index(events, "DmaPacketStop", seq=7)
    events.insert(i + 1, events[i])
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 1
    assert ("packet 7 of context 1073742016: DmaPacketStop Completed (fence 7) while its DMA submission is "
            "completed (fence 7)") in flat(r.stdout)


def test_check_finds_a_duplicated_displayed(logs, tmp_path):
    events = list(logs["video_copy"])
    i = _index(events, "Displayed")
    events.insert(i + 1, events[i])
    shown = events[i]
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 1
    assert f"present {shown['seq']} of context {shown['context']}: Displayed a second time" in flat(r.stdout)


def test_check_finds_a_dropped_progress_fence_completion(logs, tmp_path):
    events = list(logs["hardware_scheduling"])
    i = next(i for i, e in enumerate(events) if e["event"] == "QueuePacketStop" and e["hwqueue"] and e["fence"] == 3)
    lost = events.pop(i)
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 1
    assert (f"progress fence 3 of hardware queue {lost['hwqueue']}: never completed, but progress fence 4 after it "
            f"in the same queue did") in flat(r.stdout)


def test_a_log_without_logend_is_partial_and_clean_up_to_where_it_ends(logs, tmp_path):
    events = logs["hardware_scheduling"][:900]
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 0, r.stdout
    lines = r.stdout.splitlines()
    assert events[-1]["t"] == 15_891_064  # said to four digits, with its unit
    assert lines[0].endswith("900 events; the log has no LogEnd line: the run was cut short at 15.89 ms "
                             "of virtual time and the log covers only what ran until then")
    assert "totals: the log carries no LogEnd summary to compare with" in lines
    assert lines[-1] == "verdict: clean: every packet, flip, paging operation and progress fence is accounted for"


def test_an_interrupted_log_is_partial_and_clean(logs, tmp_path):
    events = logs["deep_queue"][:500]
    t = events[-1]["t"]
    events.append({"t": t, "event": "LogEnd", "reason": "interrupted"})
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 0, r.stdout
    assert t == 36_000_000
    assert r.stdout.splitlines()[0].endswith(
        "501 events; partial log: the run was interrupted (SIGINT or SIGTERM) before its end time at 36.00 ms of "
        "virtual time; everything in it covers only what ran until then")
    assert "in flight at the end: packet " in r.stdout


def test_check_refuses_a_file_that_is_not_a_log(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("hello\n")
    r = _check(str(path))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"wddmsim: error: {path}: not a wddmsim event log")


def test_a_sweep_row_whose_ledger_breaks_fails_the_whole_sweep_with_exit_4(monkeypatch, tmp_path):
    _forget_one_retirement(monkeypatch)
    r = runner.invoke(main, ["sweep", str(ROOT / "examples" / "deep_queue.toml"), "--set", "seed=1,2",
                             "--workers", "1", "-o", str(tmp_path / "rows.csv")])
    assert r.exit_code == 4
    assert r.stderr.startswith("wddmsim: internal error: the model lost track of packet 1 of context 1073742016\n")


# ------------------------------------------------------------------------------ bugs the ledger found
@pytest.mark.parametrize(("name", "counts"), [
    # Hardware scheduling: an engine reset put VidMm's system device in error; a later blt present's
    # buffer was queued, then VidMm's page-table write for it failed, and the error reached the
    # application before the present was counted: it was later dropped, never presented.
    ("hw_present_beside_system_device_error", (2, 0, 2)),
    # A flip still on the hardware was replaced at a vsync (dropped), then preempted and cancelled
    # when its context was destroyed: it was dropped, and counted, a second time.
    ("flip_replaced_then_cancelled", (3, 2, 1)),
])
def test_presents_the_ledger_once_found_lost_are_counted_once(name, counts):
    """Two model bugs the ledger found in fuzzed scenarios (tools/fuzz.py, seed 1919, inputs 1541
    and 1848): each present is presented once and shown or dropped once."""
    s = System(load_scenario(str(ROOT / "tests" / "data" / "ledger" / f"{name}.toml"))).run().summary
    shown = s["displays"][0]
    assert (shown["presents"], shown["displayed"], shown["dropped"]) == counts
    assert s["ledger"]["presents"] == dict(zip(("created", "displayed", "dropped", "pending"), (*counts, 0)))


@pytest.mark.parametrize("log, edit, said", [
    ("deep_queue", lambda s: s.update(packets_completed=5),
     "the LogEnd summary's packets_completed (packets retired): the log's LogEnd summary says 5, the replay counts 100"),
    ("deep_queue", lambda s: s.update(packets_submitted=101),
     "the LogEnd summary's packets_submitted (DMA submissions): the log's LogEnd summary says 101, the replay "
     "counts 100"),
    ("deep_queue", lambda s: s.update(virtual_time_ns=5),
     "the LogEnd summary's virtual_time_ns (the run's end time): the log's LogEnd summary says 5, the replay "
     "counts 1000000000"),
    ("deep_queue", lambda s: s["contexts"][0].update(completed=99),
     "(submitted, completed, cancelled, aborted): the log's LogEnd summary says [100, 99, 0, 0], the replay "
     "counts [100, 100, 0, 0]"),
    ("video_copy", lambda s: s["displays"][0].update(displayed=s["displays"][0]["displayed"] + 1),
     "the LogEnd summary's presents (presented, displayed, dropped): the log's LogEnd summary says "),
    ("hardware_scheduling", lambda s: s.update(packets_completed=s["packets_completed"] - 1),
     "the LogEnd summary's packets_completed (progress fences completed): the log's LogEnd summary says "),
])
def test_check_finds_a_logend_summary_edited_after_the_run(logs, tmp_path, log, edit, said):
    # The ledger's own totals in the summary were checked before; its other counts were not, so a
    # summary saying 5 packets completed where the log shows 100 passed as clean.
    events = json.loads(json.dumps(logs[log]))
    assert _check(_write(tmp_path, events)).exit_code == 0
    edit(events[-1]["summary"])
    r = _check(_write(tmp_path, events))
    assert r.exit_code == 1
    assert said in flat(r.stdout)
    assert "totals: the same as the log's LogEnd summary" not in r.stdout
