"""The minimal example driver (examples/drivers/minimal.py) and its tutorial (docs/driver.md).

The driver passes the conformance suite with exactly the cases its declarations allow; it runs an
example scenario with every packet's fence back at the expected virtual time; it really pages
(the bytes and the GART say so); copies of it with one bug each are caught by `wddmsim verify`
naming the rule; and every snippet and output the tutorial shows is the real thing.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.interface import DeviceInfo, required_entry_points
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from test_paging import evicting_while_running
from wddmsim.trace import ListSink
from wddmsim.verify import verify
from wddmsim.workloads.generators import pattern_of

from test_mmio import MEMORY_PUBLIC, PUBLIC, hardware_violations, strict

ROOT = Path(__file__).parents[1]
MINIMAL = ROOT / "examples" / "drivers" / "minimal.py"
SPEC = "examples/drivers/minimal.py:MinimalDriver"
TUTORIAL = ROOT / "docs" / "driver.md"
MinimalDriver = load_class(f"{MINIMAL}:MinimalDriver", "driver")
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
MS = 1_000_000


def events_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- the conformance suite ---------------------------------------------------------------------------
#: The cases that do not apply to a one-node Vista driver that declares nothing optional, and why.
NOT_APPLICABLE = {
    "processes/several": "the driver schedules one node (not multiple-engine aware)",
    "flips/interval_2": "the driver does not report FlipCaps.FlipInterval",
    "flips/interval_3": "the driver does not report FlipCaps.FlipInterval",
    "flips/interval_4": "the driver does not report FlipCaps.FlipInterval",
    "flips/no_wait": "the driver does not report FlipCaps.FlipOnVSyncWithNoWait",
    "flips/mmio_interval_1": "the driver does not report FlipCaps.FlipOnVSyncMmIo (its flips are DMA-buffer commands)",
    "flips/mmio_immediate": "the driver does not report FlipCaps.FlipOnVSyncMmIo (its flips are DMA-buffer commands)",
    "flips/mmio_no_wait": "the driver does not report FlipCaps.FlipOnVSyncMmIo (its flips are DMA-buffer commands)",
    "flips/hw_flip_queue": "the driver does not support hardware scheduling",
    "interrupts/overlay_vsync": "the driver does not report SupportMultiPlaneOverlay (no overlay planes)",
    "preemption/dma_buffer": "the driver is not PreemptionAware",
    "preemption/primitive": "the driver is not PreemptionAware",
    "preemption/interval": "the driver is not PreemptionAware",
    "preemption/none": "the driver is not PreemptionAware",
    "tdr/engine_reset": "the driver does not report SupportPerEngineTDR",
    "faults/page_fault": "the driver's DDI version has no DmaPageFaulted interrupt",
    "gpu_va/basic": "the driver does not support GPU virtual addressing",
    "gpu_va/fence_chain": "the driver does not support GPU virtual addressing",
    "gpu_va/page_fault": "the driver does not support GPU virtual addressing",
    "hardware_queues/basic": "the driver does not support hardware scheduling",
    "hardware_queues/gpu_wait_chain": "the driver does not support hardware scheduling",
    "hardware_queues/suspend": "the driver does not support hardware scheduling",
    "hardware_queues/hang": "the driver does not support hardware scheduling",
    "hardware_queues/page_fault": "the driver does not support hardware scheduling",
}


def test_verify_passes_every_case_its_declarations_allow_and_only_those():
    report = verify(MinimalDriver)
    d = report.declared
    assert (d.version, d.version_value, d.nodes) == ("vista", 0x1052, 1)
    assert not any((d.multi_engine_aware, d.preemption_aware, d.per_engine_reset, d.cancel_aware,
                    d.virtual_addressing, d.hardware_scheduling, d.flip_interval, d.flip_no_wait, d.page_faults))
    assert report.passed
    assert (report.count("pass"), report.count("fail"), report.count("n/a")) == (20, 0, 24)
    assert {r.case.id: r.reason for r in report.results if r.verdict == "n/a"} == NOT_APPLICABLE
    # The recovery cases a one-node driver gets: an adapter reset after a hang, and after a fault
    # it cannot report, each with the other process's work done.
    verdicts = {r.case.id: r.verdict for r in report.results}
    assert verdicts["tdr/adapter_reset"] == verdicts["faults/page_fault_timeout"] == "pass"


def test_the_cli_verify_exits_0_and_the_tutorial_quotes_its_verdict(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(main, ["verify", SPEC, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["passed"] is True and out["counts"] == {"pass": 20, "fail": 0, "n/a": 24}
    verdict = f"PASS: 20 passed, 0 failed, 24 not applicable; {len(out['rules_exercised'])} rules exercised"
    assert verdict in TUTORIAL.read_text()


def test_the_driver_reaches_the_gpu_only_through_the_register_interface():
    """Statically (imports and attribute uses, as for the reference driver), and over the whole
    suite through proxies that serve nothing but Mmio's and the memory's public operations."""
    assert hardware_violations(MINIMAL) == []
    seen: set = set()
    bad: list = []

    class Guarded(MinimalDriver):
        def __init__(self, info):
            def mem(m):
                return strict(m, MEMORY_PUBLIC, set(), bad)

            super().__init__(DeviceInfo(gpu=strict(info.gpu, PUBLIC, seen, bad, {"memory": mem}),
                                        memory=mem(info.memory), settings=info.settings))

    assert verify(Guarded).count("pass") == 20 and bad == []
    assert seen == {"program_ring", "rptr", "doorbell", "irq_status", "irq_ack", "display_count", "scanout",
                    "segments", "reset_engine", "vsync_interrupt"}


# -- running scenarios -------------------------------------------------------------------------------
def test_deep_queue_retires_every_packet_at_its_exact_virtual_time(tmp_path, monkeypatch):
    """examples/deep_queue.toml: 100 packets of 1 ms, every CPU cost 0, hardware queue depth 2."""
    monkeypatch.chdir(ROOT)
    log = tmp_path / "events.jsonl"
    r = runner.invoke(main, ["run", "examples/deep_queue.toml", "--driver", SPEC, "--json", "--events", str(log)])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert (summary["packets_submitted"], summary["packets_completed"]) == (100, 100)
    assert (summary["interrupts"], summary["dpcs"], summary["violations"]) == (100, 100, [])
    assert summary["contexts"][0]["latency_max_ns"] == 100 * MS
    events = events_of(log)
    start = next(e for e in events if e["event"] == "AdapterStart")
    assert (start["ddi_version"], start["multi_engine_aware"]) == ("vista", 0)
    assert [n["name"] for n in start["nodes"]] == ["3D_0"]
    calls = [e for e in events if e["event"] in ("DdiCall", "Callback")]
    assert Counter(e["name"] for e in calls) == {
        "DxgkDdiCreateDevice": 1, "DxgkDdiRender": 100, "DxgkDdiSubmitCommand": 100,
        "DxgkCbNotifyInterrupt": 100, "DxgkCbNotifyDpc": 100}
    # Two packets fill the hardware queue at 0; each retirement lets the next one in.
    submits = [(e["t"], e["args"]["SubmissionFenceId"], e["args"]["hDevice"]) for e in calls
               if e["name"] == "DxgkDdiSubmitCommand"]
    assert submits == [(0, 1, 0x100), (0, 2, 0x100)] + [((k - 2) * MS, k, 0x100) for k in range(3, 101)]
    # Each submission is one INDIRECT (16 bytes) and one FENCE (20) on the 4 KiB ring.
    doorbells = [(e["wptr"], e["ring_size"]) for e in events if e["event"] == "Doorbell"]
    assert doorbells == [(36 * k, 4096) for k in range(1, 101)]
    # The GPU writes fence k at k ms; the ISR reports it then, and the DPC retires the packet.
    reported = [(e["t"], e["args"]["InterruptType"], e["args"]["DmaCompleted"]["SubmissionFenceId"])
                for e in calls if e["name"] == "DxgkCbNotifyInterrupt"]
    assert reported == [(k * MS, "DXGK_INTERRUPT_DMA_COMPLETED", k) for k in range(1, 101)]
    assert [e["t"] for e in calls if e["name"] == "DxgkCbNotifyDpc"] == [k * MS for k in range(1, 101)]
    stops = [(e["t"], e["fence"], e["status"]) for e in events if e["event"] == "DmaPacketStop"]
    assert stops == [(k * MS, k, "Completed") for k in range(1, 101)]
    retired = [(e["t"], e["seq"]) for e in events if e["event"] == "QueuePacketStop"]
    assert retired == [(k * MS, k) for k in range(1, 101)]


def test_without_preemption_the_game_waits_behind_the_background_buffers(monkeypatch):
    """examples/preemption.toml: a 60 Hz game beside a background job's 20 ms DMA buffers on an engine
    that could stop every 20 us. The minimal driver is not PreemptionAware, so the OS never asks: the
    game's frames wait for whole buffers (40 ms at worst); the reference driver's are preempted in."""
    monkeypatch.chdir(ROOT)

    def run(*driver):
        r = runner.invoke(main, ["run", "examples/preemption.toml", "--json", *driver])
        assert r.exit_code == 0, r.output
        s = json.loads(r.stdout)
        return ({c["context"]: (c["completed"], c["latency_p50_ns"], c["latency_max_ns"], c["preempted"])
                 for c in s["contexts"]}, s["nodes"][0]["preemptions"], s["resubmissions"])

    # The background job's starvation clock starts when its last buffer stopped running, not when
    # it was last picked: it is boosted less often, and the game's median frame waits less. The
    # fourth frame in flight waits inside Present (maximum frame latency 3), which sets the worst.
    assert run("--driver", SPEC) == ({"game.exe/render": (22, 14_650_000, 39_994_199, 0),
                                      "background.exe/job": (8, 25_990_000, 45_992_400, 0)}, 0, 0)
    # The same scenario with the reference driver (its exact figures are test_preemption's business).
    contexts, preemptions, _ = run()
    assert contexts["game.exe/render"][0] == 24 and contexts["game.exe/render"][2] < 2_100_000 and preemptions > 0


def test_a_scenario_names_the_driver_in_its_driver_table(tmp_path):
    scenario = tmp_path / "mine.toml"
    scenario.write_text(textwrap.dedent(f'''
        name = "mine"
        duration = "20ms"
        [driver]
        class = "{MINIMAL.as_posix()}:MinimalDriver"
        [[process]]
        name = "app"
        [[process.context]]
        name = "c"
        node = "3D"
        workload = {{ kind = "script", packets = [{{ at = 0, work = "1ms", repeat = 3 }}] }}
    '''))
    log = tmp_path / "e.jsonl"
    r = runner.invoke(main, ["run", str(scenario), "--json", "--events", str(log)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["packets_completed"] == 3
    start = next(e for e in events_of(log) if e["event"] == "AdapterStart")
    assert start["ddi_version"] == "vista" and len(start["nodes"]) == 1
    # Settings it does not have: it does not load, and says which.
    scenario.write_text(scenario.read_text().replace("[driver]\n", "[driver]\nring_size = 4096\n"))
    r = runner.invoke(main, ["run", str(scenario)])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[0] == ("wddmsim: error: mine: the adapter does not start: the driver's constructor "
                                        "raised ValueError: MinimalDriver has no settings, but was given ring_size")


def test_a_scenario_with_the_reference_drivers_settings_is_refused_as_the_tutorial_says(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(main, ["run", "examples/legacy_driver.toml", "--driver", SPEC])
    assert r.exit_code == 2
    line = r.stderr.splitlines()[0]
    assert line == ("wddmsim: error: legacy_driver: the adapter does not start: the driver's constructor raised "
                    "ValueError: MinimalDriver has no settings, but was given ddi_version, multi_engine_aware")
    assert line in TUTORIAL.read_text()


def test_paging_really_moves_the_bytes_and_maps_the_aperture():
    """Twelve packets that fill 64 KiB allocations through 256 KiB of VRAM, and eight through a
    128 KiB aperture: every TRANSFER, FILL, MAP and UNMAP the driver built left each allocation
    holding its own pattern, and the GART maps each resident aperture allocation's pages onto its
    system pages."""
    trace = ListSink()
    system = System(scenario_from_dict({
        "name": "paging", "duration": "100ms", "seed": 1,
        "adapter": {"hw_queue_depth": 1, "nodes": [{"name": "3D", "engine": "3d"}],
                    "segments": [{"name": "VRAM", "kind": "memory", "size": "256KiB"},
                                 {"name": "Aperture", "kind": "aperture", "size": "128KiB", "cpu_visible": True}]},
        "process": [
            {"name": "streamer", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "memory_pressure", "allocations": 8, "size": "64KiB", "touch": 2, "work": "200us",
                "interval": "3ms", "count": 12}}]},
            {"name": "uploader", "context": [{"name": "c", "node": "3D", "workload": {
                "kind": "memory_pressure", "allocations": 4, "size": "64KiB", "touch": 1, "work": "100us",
                "interval": "5ms", "count": 8, "segment": "aperture"}}]},
        ]}, "<paging>"), driver=MinimalDriver, trace=trace)
    result = system.run()
    assert result.bugcheck is None and result.summary["violations"] == []
    assert [(c["submitted"], c["completed"]) for c in result.summary["contexts"]] == [(12, 12), (8, 8)]
    ops = Counter(e["args"]["Operation"] for e in trace.events
                  if e["event"] == "DdiCall" and e["name"] == "DxgkDdiBuildPagingBuffer")
    assert ops == {0: 36, 1: 4, 5: 8, 6: 6}  # TRANSFER, FILL, MAP_APERTURE_SEGMENT, UNMAP_APERTURE_SEGMENT
    memory = result.summary["memory"]
    assert (memory["evictions"], memory["paging_submissions"], memory["context_switches"]) == (26, 54, 0)
    assert (memory["bytes_paged_in"], memory["bytes_paged_out"]) == (20 * 65536, 20 * 65536)
    assert (memory["bytes_mapped"], memory["bytes_unmapped"]) == (8 * 65536, 6 * 65536)
    gpu = system.gpu
    streamer, uploader = system.contexts
    for i, alloc in enumerate(streamer.workload_allocations):
        where = alloc.address if alloc.resident else alloc.backing
        assert gpu.memory.read(where, 4) == pattern_of(i).to_bytes(4, "little"), f"streamer allocation {i}"
    mapped = 0
    for i, alloc in enumerate(uploader.workload_allocations):
        # An aperture allocation's bytes live in system memory; the GPU wrote them through the GART.
        assert gpu.memory.read(alloc.backing, 4) == pattern_of(i).to_bytes(4, "little"), f"uploader allocation {i}"
        if alloc.resident:
            mapped += 1
            assert [gpu.translate(alloc.address + off) for off in range(0, alloc.size, 4096)] == \
                [alloc.backing + off for off in range(0, alloc.size, 4096)]
    assert mapped == 2


# -- what Windows refuses, and broken copies of the driver ---------------------------------------------------
#: The tutorial's broken.py (docs/driver.md, section 12), written out by the tests that run it.
def broken_py() -> str:
    blocks = marked_blocks("broken.py")
    assert len(blocks) == 1
    return blocks[0] + textwrap.dedent('''

        class NoAck(MinimalDriver):
            """The ISR reports the fence and queues its DPC but never dismisses the interrupt."""

            def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
                if not self.hw.irq_status():
                    return False
                self._report_fence()
                self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
                return True


        class NoQueryCurrentFence(MinimalDriver):
            DxgkDdiQueryCurrentFence = None
    ''')


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """broken.py in a folder of its own; the working directory is the checkout (its load_class
    names minimal.py relative to it)."""
    path = tmp_path / "broken.py"
    path.write_text(broken_py())
    monkeypatch.chdir(ROOT)
    return path


def test_the_required_entry_points_are_the_tutorials_list():
    listed = "\n".join(f"{name} - {why}" for name, why in required_entry_points(0x1052, {"PhysicalSubmission": True}))
    assert listed in TUTORIAL.read_text()
    assert all(callable(getattr(MinimalDriver, name)) for name, _ in required_entry_points(
        MinimalDriver.DXGKDDI_INTERFACE_VERSION, {"PhysicalSubmission": True}))


def test_a_missing_entry_point_is_refused_before_anything_runs(broken):
    r = runner.invoke(main, ["run", "examples/deep_queue.toml", "--driver", f"{broken}:NoQueryCurrentFence"])
    assert r.exit_code == 2
    assert r.stderr.strip() == ("wddmsim: error: deep_queue: the adapter does not start: DxgkDdiQueryCurrentFence "
                                "is missing: every driver implements it")
    assert r.stderr.strip() in TUTORIAL.read_text()


@pytest.mark.parametrize("cls, rule, name, bugcheck, message", [
    ("SilentDpc", 39, "DpcNotifiesDpc", (0xC4, 39, 0, 0, 0),
     "rule 39 (DpcNotifiesDpc): the DPC returned without calling DxgkCbNotifyDpc although 1 event(s) were "
     "reported with DxgkCbNotifyInterrupt since the last one"),
    ("NoAck", 43, "IsrDismissesInterrupt", (0xC4, 43, 0, 0, 0),
     "rule 43 (IsrDismissesInterrupt): the ISR returned TRUE without dismissing the interrupt: causes 0x1 are "
     "still pending in the GPU's interrupt status (ground truth)"),
    ("Typo", None, None, (0x1E, 0xC0000005, 0, 0, 0),
     "driver fault: DxgkDdiSubmitCommand raised AttributeError: 'DXGKARG_SUBMITCOMMAND' object has no attribute "
     "'SubmissionFenceID'"),
])
def test_verify_catches_a_broken_copy_and_names_what_broke(broken, cls, rule, name, bugcheck, message):
    driver = load_class(f"{broken}:{cls}", "driver")
    report = verify(driver, only=["submission/single"])
    assert not report.passed and report.count("fail") == 1
    f = report.results[0].failure
    assert (f.rule, f.rule_name) == (rule, name)
    assert f.messages == [message]
    bc = f.bugcheck
    assert (bc["code"], bc["p1"], bc["p2"], bc["p3"], bc["p4"]) == bugcheck
    if cls == "Typo":
        assert f.crash["struct"] == "DXGKARG_SUBMITCOMMAND" and f.crash["decoded"]["SubmissionFenceId"] == "1"
        assert "pSubmitCommand.SubmissionFenceID" in f.traceback
    else:
        # The crossing: the ISR's report of fence 1, the first completion.
        assert f.event["name"] == "DxgkCbNotifyInterrupt" and f.event["t"] == 1_008_300
        assert f.event["args"]["DmaCompleted"]["SubmissionFenceId"] == 1


# -- the tutorial is the driver's own code and the tools' own output --------------------------------------------
def marked_blocks(marker: str) -> list[str]:
    """The fenced blocks of the tutorial right after ``<!-- marker -->``."""
    text = TUTORIAL.read_text()
    return re.findall(rf"^<!-- {re.escape(marker)} -->\n```\w*\n(.*?)^```$", text, re.M | re.S)


def found_in(snippet: str, source: str) -> bool:
    """``snippet`` is a run of ``source``'s lines, all shifted by the same indentation."""
    lines = snippet.rstrip("\n").split("\n")
    for indent in range(0, 17, 4):
        pad = " " * indent
        shifted = "\n".join(pad + line if line else line for line in lines)
        if f"\n{shifted}\n" in f"\n{source}\n":
            return True
    return False


def test_every_snippet_the_tutorial_takes_from_minimal_py_is_in_it_verbatim():
    source = MINIMAL.read_text()
    snippets = marked_blocks("from examples/drivers/minimal.py")
    assert len(snippets) == 16
    missing = [s.splitlines()[0] for s in snippets if not found_in(s, source)]
    assert missing == []


@pytest.mark.parametrize("command", [
    "verify broken.py:SilentDpc --only submission/single",
    "verify broken.py:Typo --only submission/single",
])
def test_the_failures_the_tutorial_shows_are_what_verify_prints(broken, command):
    (excerpt,) = marked_blocks(f"output of: {command}")
    args = [f"{broken}{a[len('broken.py'):]}" if a.startswith("broken.py:") else a for a in command.split()]
    r = runner.invoke(main, args)
    assert r.exit_code == 1
    printed = " ".join(r.stdout.split())  # rich wraps long lines at its console width
    for line in excerpt.splitlines():
        if line.strip() != "...":
            assert " ".join(line.split()) in printed, line


# -- what the OS must not ask of a Vista driver ---------------------------------------------------------------
def test_a_vista_driver_needs_no_get_node_metadata():
    """Windows asks DxgkDdiGetNodeMetadata of WDDM 1.3 drivers and later only; the minimal driver
    has none, and the OS knows its node 0 as the 3D engine."""
    assert not hasattr(MinimalDriver, "DxgkDdiGetNodeMetadata")
    scenario = scenario_from_dict({"name": "meta", "duration": "10ms", "process": [
        {"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 2}]}}]}]}, "<meta>")
    system = System(scenario, driver=MinimalDriver)
    assert system.run().summary["packets_completed"] == 2
    assert system.adapter.node_names == ["3D_0"]


def test_vidmm_sends_no_windows_8_flag_to_a_vista_driver():
    """An eviction while the device's packet runs (test_paging.evicting_while_running)."""
    result = System(evicting_while_running(), driver=MinimalDriver).run()
    assert result.bugcheck is None, result.bugcheck.message
    assert result.summary["contexts"][0]["completed"] == 4
    # Flags.ContextSwitch is Windows 8's: the evictions waited for the running packet instead.
    memory = result.summary["memory"]
    assert memory["context_switches"] == 0 and memory["evictions"] > 0
