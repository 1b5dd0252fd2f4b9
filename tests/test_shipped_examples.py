"""Two shipped examples, run as a user runs them: ``examples/flip_no_wait.toml`` (flips with
FlipWithNoWait wait for their vsync in the display's flip registers while the engine carries on)
and ``examples/tdr_failure.toml`` (a run that ends in bug check 0x116, exit status 3). The figures
examples/README.md quotes are asserted here."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.bugcheck import BugCheckCode
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.scenario import load_scenario, scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

ROOT = Path(__file__).parent.parent
FLIP_NO_WAIT = ROOT / "examples" / "flip_no_wait.toml"
TDR_FAILURE = ROOT / "examples" / "tdr_failure.toml"
V = 16_666_667  # one refresh at 60 Hz, ns
MS = 1_000_000


def _context(summary, name):
    return next(c for c in summary["contexts"] if c["context"] == name)


def test_flip_no_wait_example_flips_in_the_display_and_the_engine_carries_on(tmp_path):
    r = CliRunner().invoke(main, ["run", str(FLIP_NO_WAIT), "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    d = s["displays"][0]
    # 30 presents in 500 ms at 60 fps; the last one still waits for its vsync when the run ends.
    assert (d["presents"], d["displayed"], d["dropped"]) == (30, 29, 0)
    assert (d["frame_time_p50_ns"], d["frame_time_p99_ns"]) == (16_666_667, 16_666_667)
    compute = _context(s, "trainer.exe/compute")
    # (180, 180, 10_002_800 before issue 27, when the example's driver was preemption-aware and its flips
    # still DMA-buffer commands, which Windows does not allow (rule 64): the example's driver now keeps
    # DMA-buffer flips by declaring neither FlipOnVSyncMmIo nor PreemptionAware, so the game's frames no
    # longer preempt the compute job's packets.)
    assert (compute["submitted"], compute["completed"], compute["latency_max_ns"]) == (200, 199, 9_996_800)
    assert s["violations"] == []


def test_flip_no_wait_example_events():
    trace = ListSink()
    system = System(load_scenario(str(FLIP_NO_WAIT)), trace=trace)
    system.run()
    flips = trace.of("Flip")
    assert len(flips) == 30 and {(f["interval"], f["no_wait"]) for f in flips} == {(1, 1)}
    subs = [e["args"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand" and e["args"]["Flags"]["Flip"]]
    assert len(subs) == 30 and {a["Flags"]["FlipWithNoWait"] for a in subs} == {1}
    assert system.adapter.caps.MaxQueuedFlipOnVSync == 2
    # Every flip latches at a vsync, one per refresh; each present's packet had completed (the
    # engine went on) before its flip was shown.
    shown = trace.of("Displayed")
    assert [e["displayed"] for e in shown] == [k * V for k in range(1, 30)]
    game = system.contexts[0].handle
    stopped = {e["seq"]: e["t"] for e in trace.of("DmaPacketStop") if e["context"] == game and e["kind"] == "present"}
    assert all(stopped[e["seq"]] < e["displayed"] for e in shown)


def test_the_same_example_with_waiting_flips_stalls_the_engine():
    raw = tomllib.loads(FLIP_NO_WAIT.read_text())
    raw["process"][0]["context"][0]["workload"]["present_mode"] = "flip"
    r = System(scenario_from_dict(raw, str(FLIP_NO_WAIT))).run()
    compute = _context(r.summary, "trainer.exe/compute")
    # The flip holds the engine until its vsync: the compute job gets 58 of its 60 packets through, its
    # worst packet waiting 34 ms (200 packets and 10 ms with no-wait flips, above). (32, 30, 62_646_668
    # before issue 27, with a preemption-aware driver: see above.)
    assert (compute["submitted"], compute["completed"], compute["latency_max_ns"]) == (60, 58, 34_314_734)


def test_tdr_failure_example_ends_in_bug_check_0x116_with_exit_status_3(tmp_path):
    crash = tmp_path / "crash.json"
    r = CliRunner().invoke(main, ["run", str(TDR_FAILURE), "--crash-record", str(crash)])
    assert r.exit_code == 3, r.output
    assert "BugCheck 0x116 (VIDEO_TDR_FAILURE)" in r.output
    assert "live dump 0x117 VIDEO_TDR_TIMEOUT_DETECTED" in r.output
    record = json.loads(crash.read_text())
    assert record["bugcheck"]["code"] == 0x116
    r = CliRunner().invoke(main, ["run", str(TDR_FAILURE), "--json", "--crash-record", str(crash)])
    assert r.exit_code == 3
    b = json.loads(r.stdout)["bugcheck"]
    assert (b["code"], b["p3"], b["rule"]) == (0x116, int(NTSTATUS.STATUS_UNSUCCESSFUL), 108)


def test_tdr_failure_example_timeline():
    trace = ListSink()
    r = System(load_scenario(str(TDR_FAILURE)), trace=trace).run()
    assert r.bugcheck.bugcheck.code == BugCheckCode.VIDEO_TDR_FAILURE
    # The third frame's buffer (queued at 33.33 ms, a frame slot every 16.67 ms) hangs: the watchdog
    # asks for preemption 500 ms after it started, TdrDelay (500 ms) later the adapter is reset, and
    # the failed DxgkDdiResetFromTimeout stops the machine then.
    (hang_start,) = [e["t"] for e in trace.of("DmaPacketStart") if e["seq"] == 3]
    assert [e["t"] for e in trace.of("PreemptRequest")] == [hang_start + 500 * MS]
    (tdr,) = trace.of("TdrDetected")
    assert tdr["t"] == r.end == hang_start + 1000 * MS
    calls = [e["name"] for e in trace.of("DdiCall") if e["name"] in ("DxgkDdiResetFromTimeout", "DxgkDdiResetEngine")]
    assert calls == ["DxgkDdiResetFromTimeout"]
