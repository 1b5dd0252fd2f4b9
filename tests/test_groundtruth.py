"""Ground-truth checks (dxgkrnl/groundtruth.py): drivers that keep every status and every fence in
range, so that Windows would see nothing wrong, are caught from what the GPU model really ran."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from zoo.groundtruth import DRIVERS, SubmitsWithoutRing

from wddmsim.cli import main
from wddmsim.dxgkrnl.groundtruth import MARK
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.verify.runner import verify
from wddmsim.verify.suite import context, process, scenario, script

TWO_PACKETS = scenario("two", [process("app", context("c", script(("0ns", "1ms", 2))))])


def _run(driver, verifier="strict"):
    trace = ListSink()
    system = System(scenario_from_dict(TWO_PACKETS, "<two>"), driver=driver, trace=trace, verifier=verifier)
    return system, system.run(), trace.events


def _stops(events):
    return [(e["t"], e["fence"]) for e in events if e["event"] == "DmaPacketStop"]


@pytest.mark.parametrize("driver", [pytest.param(d, marks=pytest.mark.rule(d.RULE)) for d in DRIVERS],
                         ids=lambda d: f"rule{d.RULE:03d}-{d.__name__}")
def test_verify_names_the_rule_and_says_ground_truth(driver):
    settings = getattr(driver, "SETTINGS", None)
    report = verify(driver, only=[driver.AREA], settings=settings)
    failed = [r for r in report.results if r.verdict == "fail"]
    assert failed, f"{driver.__name__} passed {driver.AREA}"
    f = failed[0].failure
    assert (f.rule, f.ground_truth) == (driver.RULE, True)
    assert f.bugcheck["code"] == 0xC4 and f.bugcheck["p1"] == driver.RULE
    assert f"rule {driver.RULE} (" in f.messages[0] and MARK in f.messages[0]
    # The reference driver passes the same area: the catch is the break, not the area.
    reference = verify(driver.__mro__[1], only=[driver.AREA], settings=settings)
    assert reference.count("fail") == 0 and reference.count("pass") >= 1


def test_the_reference_driver_runs_two_packets_for_a_millisecond_each():
    system, result, events = _run(None)
    assert result.bugcheck is None
    assert _stops(events) == [(1_008_300, 1), (2_008_600, 2)]
    assert system.adapter.vidsch.truth.judged == {37, 65}


@pytest.mark.rule(37)
def test_a_fence_without_its_buffer_stops_at_the_first_report():
    _, result, events = _run(SubmitsWithoutRing)
    rec = result.bugcheck
    assert (rec.time, int(rec.bugcheck.code), rec.bugcheck.p1, rec.rule) == (8_100, 0xC4, 37, 37)
    assert rec.message == (f"rule 37 (LastCompletedAdvancesOnlyOnCompletion): {MARK} DMA_COMPLETED 1 on node 0 "
                           f"completes fence 1 (render packet of context {rec.message.split('context ')[1].split(')')[0]})"
                           ", but the GPU never ran it")
    assert _stops(events) == []


def test_without_the_verifier_the_lost_work_goes_unnoticed():
    """What Windows sees: both packets 'complete' in microseconds and the run ends clean; the
    engine was busy 200 ns (the two fences) instead of 2 ms."""
    system, result, events = _run(SubmitsWithoutRing, verifier="off")
    assert result.bugcheck is None
    assert _stops(events) == [(8_100, 1), (13_100, 2)]
    assert system.gpu.engines[0].busy_ns == 200
    assert system.adapter.vidsch.truth is None


def test_the_cli_report_names_the_ground_truth_check(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    r = CliRunner().invoke(main, ["verify", "zoo.groundtruth:SubmitsWithoutRing", "--only", "submission"])
    assert r.exit_code == 1
    assert "A ground-truth check" in r.output and "Rule 37 (LastCompletedAdvancesOnlyOnCompletion)" in r.output


# -- the GPU's own account of its time per process (summary "processes") ------------------------------
def _preempted(verifier="strict"):
    zero = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
    data = {"name": "per_process", "duration": "50ms",
            "adapter": {"cpu_cost": zero, "nodes": [{"name": "3D", "engine": "3d", "command_cost": "100ns",
                                                     "preemption": "interval", "preemption_interval": "20us"}]},
            "process": [
                {"name": "bg", "context": [{"name": "c", "node": "3D", "workload": {
                    "kind": "script", "packets": [{"at": "0ns", "work": "20ms"}]}}]},
                {"name": "game", "priority": "high", "context": [{"name": "c", "node": "3D", "workload": {
                    "kind": "script", "packets": [{"at": "5ms", "work": "1ms"}, {"at": "12345us", "work": "2ms"}]}}]}]}
    return System(scenario_from_dict(data, "<per_process>"), verifier=verifier)


def test_gpu_time_per_process_counts_owed_work_on_the_ring_for_the_preempted_process():
    # bg's 20 ms WORK is preempted twice (at 5 ms and 12.345 ms, stopping on a 20 us step); the
    # reference driver resumes it with the owed WORK on its ring, no INDIRECT: still bg's time.
    # bg: INDIRECT + WORK costs (200) + 20 ms + the ring WORK's cost after each preemption (2 x 100)
    # + its last fence (100); the game: INDIRECT + WORK + FENCE (300) + 1 ms, and again + 2 ms.
    system = _preempted()
    result = system.run()
    busy = {p["process"]: (p["gpu_busy_ns"], p["os_busy_ns"]) for p in result.summary["processes"]}
    assert busy == {"bg": (20_000_500, 20_000_500), "game": (3_000_600, 3_000_600)}
    # Every ns the engine was busy is someone's.
    assert sum(v[0] for v in busy.values()) == system.gpu.engines[0].busy_ns == 23_001_100


def test_gpu_time_per_process_in_the_middle_of_a_run_and_without_the_verifier():
    # At 5.01 ms: bg ran to its preemption stop at 5.0002 ms, the game's buffer since then.
    result = _preempted().run(until=5_010_000)
    busy = {p["process"]: p["gpu_busy_ns"] for p in result.summary["processes"]}
    assert busy == {"bg": 5_000_200, "game": 9_800}
    off = _preempted(verifier="off").run(until=5_010_000)
    assert [(p["gpu_busy_ns"], p["os_busy_ns"]) for p in off.summary["processes"]] == [(None, 5_000_200),
                                                                                         (None, 9_800)]


def test_the_run_output_shows_gpu_time_per_process_both_ways(tmp_path):
    example = str(Path(__file__).parent.parent / "examples" / "preemption.toml")
    r = CliRunner().invoke(main, ["run", example])
    assert r.exit_code == 0, r.output
    assert _process_table(r.output) == [["process", "GPU's account", "OS's view"],
                                        ["game.exe", "24.01 ms", "24.01 ms"],
                                        ["background.exe", "175.9 ms", "175.9 ms"]]
    r = CliRunner().invoke(main, ["run", example, "--verifier", "off"])
    assert _process_table(r.output)[1] == ["game.exe", "-", "24.01 ms"]


def _process_table(output: str) -> list[list[str]]:
    """The rows (header first) of the run output's "GPU time per process" table."""
    lines = output.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("GPU time per process")))
    rows = []
    for line in lines[at + 1:]:
        if not line.strip():
            break
        if not line.startswith("─"):
            rows.append([cell for cell in line.strip().split("  ") if cell.strip()])
    return [[cell.strip() for cell in row] for row in rows]
