"""Policies of the GPU's own scheduler under hardware scheduling (gpu/policy.py, policies/hwprotocol.py):
the band rules are the default policy and unchanged; each shipped GPU policy's defining property,
exactly in virtual time; a researcher's GPU policy from a file; the broken-policy checks on the GPU
side with their messages; a policy named for the other scheduling mode refused in one line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main
from wddmsim.gpu import commands as C
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.gpu.policy import BandPolicy, GpuPolicy
from wddmsim.gpu.scheduler import FOCUS_BAND, IDLE_BAND, NORMAL_BAND, REALTIME_BAND
from wddmsim.policies import PolicyError
from wddmsim.policies.load import make_gpu_policy, make_policies
from wddmsim.sim import Simulator

US = 1_000
MS = 1_000_000
FENCES = 0x80000
EXAMPLES = Path(__file__).parents[1] / "examples"


class Bench:
    """One engine under a GpuScheduler running the GPU policy ``policy`` (a shipped name, with its
    settings, or a gpu-layer GpuPolicy); no command cost, so every instant is exact."""

    def __init__(self, policy="windows", granularity="instruction", **settings):
        self.sim = Simulator()
        self.gpu = GPU(self.sim, [EngineSpec("3D", "3d", command_cost=0, preemption=granularity,
                                             preemption_interval=100 * US)], [("VRAM", "memory", 1 << 20, False)])
        if isinstance(policy, GpuPolicy):
            self.gpu.hw_policy = lambda index: policy
        else:
            host = make_gpu_policy(policy, settings)
            if host is not None:
                host.bind(self.gpu)
        self.hs = self.gpu.hw_scheduler(0)
        self.wptr = {}
        self.next_buf = 0x400000

    def context(self, cid, process, band=NORMAL_BAND, **props):
        self.hs.create_context(cid, process)
        self.hs.set_context(cid, band, **props)
        self.hs.create_queue(cid, cid, 0x100000 + cid * 0x10000, 0x1000)
        self.wptr[cid] = 0

    def submit(self, qid, ns):
        """A buffer of ``ns`` of WORK and its progress fence, on context ``qid``'s queue."""
        addr = self.next_buf
        self.next_buf += 0x1000
        data = C.work(ns)
        self.gpu.memory.write(addr, data)
        ring = C.indirect(addr, len(data)) + C.fence(FENCES + 8 * qid, 1, interrupt=True)
        self.gpu.memory.write(0x100000 + qid * 0x10000 + self.wptr[qid], ring)
        self.wptr[qid] += len(ring)
        self.hs.doorbell(qid, self.wptr[qid])

    def at(self, t, fn, *args):
        self.sim.at(t, lambda: fn(*args))

    def turns(self):
        """(t, cid) each time a context got the engine."""
        return [(t, c) for t, c, state in self.hs.log if state == "running"]


# -- the band rules: the default, unchanged -----------------------------------------------------------------


def test_the_band_rules_are_the_default_policy():
    bench = Bench()
    assert type(bench.hs.policy) is BandPolicy and bench.gpu.hw_policy is None
    for name in ("windows", "priority_quantum"):
        assert make_gpu_policy(name) is None  # the GPU keeps its BandPolicy
        os_policy, gpu_policy = make_policies(name, {"quantum": MS}, hardware=True)
        assert gpu_policy is None and os_policy.quantum == MS  # the OS's settings, as before


def test_naming_windows_under_hardware_scheduling_changes_nothing():
    sc = api.load(EXAMPLES / "hardware_scheduling.toml")
    default = api.run(sc, until="30ms")
    named = api.run(api.load(EXAMPLES / "hardware_scheduling.toml", overrides={"scheduler.policy": "windows"}),
                    until="30ms")
    one, other = named.summary.as_dict(), default.summary.as_dict()
    assert one.pop("policy") == "windows" and other.pop("policy") == "priority_quantum"
    assert one == other


def test_band_rules_on_the_bench_a_realtime_context_preempts_at_once():
    # The contrast for FIFO below: the same three contexts under the band rules.
    bench = Bench("windows")
    bench.context(1, "A", IDLE_BAND)
    bench.context(2, "B", REALTIME_BAND)
    bench.context(3, "C")
    bench.submit(1, 3 * MS)
    bench.at(MS, bench.submit, 2, MS)
    bench.at(500 * US, bench.submit, 3, MS)
    bench.sim.run()
    assert bench.turns() == [(0, 1), (MS, 2), (2 * MS, 3), (3 * MS, 1)]
    assert bench.gpu.engines[0].preemptions == 1


# -- the shipped GPU policies ---------------------------------------------------------------------------------


def test_round_robin_gives_each_runnable_context_one_slice_in_turn_whatever_its_band():
    bench = Bench("round_robin", slice=MS)
    bench.context(1, "A", REALTIME_BAND)
    bench.context(2, "B", NORMAL_BAND)
    bench.context(3, "C", IDLE_BAND)
    for cid in (1, 2, 3):
        bench.submit(cid, 5 * MS)
    bench.sim.run()
    # Three runnable: 1, 2, 3, 1, 2, 3, ... one 1 ms slice each (an instruction-level engine stops
    # at once), until each has had its 5 ms: the idle band gets as much as the realtime one.
    assert bench.turns() == [(k * MS, 1 + k % 3) for k in range(15)]
    assert [bench.hs.busy_ns(c) for c in (1, 2, 3)] == [5 * MS] * 3
    assert [bench.hs.preemptions(c) for c in (1, 2, 3)] == [4, 4, 4]
    assert bench.hs.log[-1] == (15 * MS, 3, "idle")


def test_round_robin_a_context_alone_keeps_the_engine_and_a_newcomer_takes_it_at_once():
    bench = Bench("round_robin", slice=MS)
    bench.context(1, "A")
    bench.context(2, "B", FOCUS_BAND)
    bench.submit(1, 5 * MS)
    bench.at(2_500 * US, bench.submit, 2, 2 * MS)
    bench.sim.run()
    # Context 1's slice ended at 1 ms with nobody waiting; context 2 takes the engine the instant
    # it is runnable, then they alternate by slice.
    assert bench.turns() == [(0, 1), (2_500 * US, 2), (3_500 * US, 1), (4_500 * US, 2), (5_500 * US, 1)]
    assert bench.hs.log[-1] == (7 * MS, 1, "idle")


def test_round_robin_slices_stop_at_the_engines_granularity():
    # A 100 us preemption interval: a slice ends at the next interval boundary after the request.
    bench = Bench("round_robin", granularity="interval", slice=250 * US)
    bench.context(1, "A")
    bench.context(2, "B")
    bench.submit(1, MS)
    bench.submit(2, MS)
    bench.sim.run()
    assert bench.turns()[:4] == [(0, 1), (300 * US, 2), (600 * US, 1), (900 * US, 2)]


def test_fifo_runs_contexts_in_the_order_they_became_runnable_and_never_preempts():
    bench = Bench("fifo")
    bench.context(1, "A", IDLE_BAND)
    bench.context(2, "B", REALTIME_BAND)
    bench.context(3, "C")
    bench.submit(1, 3 * MS)
    bench.at(MS, bench.submit, 2, MS)  # realtime, runnable second
    bench.at(500 * US, bench.submit, 3, MS)  # normal, runnable first
    bench.sim.run()
    assert bench.turns() == [(0, 1), (3 * MS, 3), (4 * MS, 2)]
    assert bench.gpu.engines[0].preemptions == 0
    assert [bench.hs.preemptions(c) for c in (1, 2, 3)] == [0, 0, 0]


def test_a_gpu_layer_policy_decides_with_its_deadline_and_timers():
    class Newest(GpuPolicy):
        """The context runnable last first; each keeps the engine 300 us; a timer at 2 ms."""

        def attach(self, fw):
            super().attach(fw)
            self.runnable_order = []
            self.fired = []
            fw.set_timer(2 * MS, "tick")

        def runnable(self, c, now):
            self.runnable_order.append(c)

        def unrunnable(self, c, now):
            self.runnable_order.remove(c)

        def pick(self, now):
            return self.runnable_order[-1]

        def deadline(self, cur, now):
            return cur.run_start + 300 * US if len(self.runnable_order) > 1 else None

        def timer(self, token, now):
            self.fired.append((now, token))

    policy = Newest()
    bench = Bench(policy)
    bench.context(1, "A")
    bench.context(2, "B")
    bench.submit(1, 500 * US)
    bench.at(100 * US, bench.submit, 2, 500 * US)
    bench.sim.run()
    # 2, the newest, takes the engine at 1's deadline, then again at its own (still the newest).
    assert bench.turns() == [(0, 1), (300 * US, 2), (600 * US, 2), (800 * US, 1)]
    assert bench.hs.log[-1] == (MS, 1, "idle")
    assert policy.fired == [(2 * MS, "tick")]


# -- a researcher's GPU policy, from a file ---------------------------------------------------------------------

#: Two processes on one engine under hardware scheduling, no CPU costs, an engine that stops at once.
SCENARIO = """
duration = "20ms"
[adapter]
scheduling = "hardware"
[adapter.cpu_cost]
render = 0
patch = 0
submit = 0
isr = 0
dpc = 0
present = 0
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
preemption = "instruction"
[driver]
ddi_version = "wddm2_7"
[scheduler]
policy = "{policy}"
[[process]]
name = "a.exe"
priority = "high"
[[process.context]]
name = "frames"
node = "3D"
workload = {{ kind = "frame_loop", fps = 100, work = "1ms", present = false }}
[[process]]
name = "b.exe"
[[process.context]]
name = "batch"
node = "3D"
workload = {{ kind = "compute_batch", batch = 2, work = "3ms", count = 2 }}
"""


def _write_policy(tmp_path, body: str, name: str = "mine.py") -> str:
    path = tmp_path / name
    path.write_text("from wddmsim.policies import HwPolicy\n\n" + textwrap.dedent(body))
    return str(path)


def _stop_message(policy: str) -> str:
    with pytest.raises(PolicyError) as info:
        api.run(api.parse(SCENARIO.format(policy=policy)))
    return str(info.value)


RECORDER = """
class Recorder(HwPolicy):
    log = []

    def setup(self):
        type(self).log = []

    def pick(self, node, now):
        ctx = self.os.ready(node)[0]
        self.log.append((now, "pick", ctx.name, ctx.band, ctx.priority))
        return ctx

    def on_ready(self, ctx, now):
        self.log.append((now, "ready", ctx.name))

    def on_idle(self, ctx, now):
        self.log.append((now, "idle", ctx.name))

    def on_started(self, ctx, node, now):
        self.log.append((now, "started", ctx.name, self.os.running(node) is ctx))

    def on_stopped(self, ctx, node, gpu_ns, now):
        self.log.append((now, "stopped", ctx.name, gpu_ns))

    def on_preempted(self, ctx, node, gpu_ns, now):
        self.log.append((now, "preempted", ctx.name, gpu_ns))

    def on_changed(self, ctx, now):
        self.log.append((now, "changed", ctx.name, ctx.band))
"""


def test_a_researchers_gpu_policy_from_a_file_is_told_every_turn(tmp_path):
    from wddmsim.dxgkrnl.loader import load_class

    path = _write_policy(tmp_path, RECORDER)
    result = api.run(api.parse(SCENARIO.format(policy=f"{path}:Recorder")), until="15ms")
    assert result.crash is None
    log = load_class(f"{path}:Recorder", "policy").log
    # VidMm's paging context runs first and is never shown; the OS's names and the bands the
    # driver programmed are; the batch's two 3 ms buffers drain at once (one turn each batch).
    assert log[:12] == [
        (0, "changed", "a.exe/frames", "focus"),
        (0, "changed", "b.exe/batch", "normal"),
        (532, "ready", "a.exe/frames"),
        (1048, "pick", "a.exe/frames", "focus", 0),
        (1048, "started", "a.exe/frames", True),
        (1048, "ready", "b.exe/batch"),
        (1_001_048, "idle", "a.exe/frames"),
        (1_001_048, "stopped", "a.exe/frames", MS),
        (1_001_048, "pick", "b.exe/batch", "normal", 0),
        (1_001_048, "started", "b.exe/batch", True),
        (7_001_048, "idle", "b.exe/batch"),
        (7_001_048, "stopped", "b.exe/batch", 6 * MS),
    ]
    # FIFO on the GPU: a.exe's frame due at 10 ms waits for b.exe's second batch (never preempted).
    assert (10 * MS, "ready", "a.exe/frames") in log
    assert log[log.index((10 * MS, "ready", "a.exe/frames")) + 1:][:3] == [
        (13_001_048, "idle", "b.exe/batch"),
        (13_001_048, "stopped", "b.exe/batch", 6 * MS),
        (13_001_048, "pick", "a.exe/frames", "focus", 0)]


def test_a_gpu_policy_runs_from_the_command_line_and_its_settings_are_checked(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy="windows"))
    runner = CliRunner()
    ok = runner.invoke(main, ["run", str(scenario), "--policy", "round_robin", "--set", "scheduler.slice=500us"])
    assert ok.exit_code == 0, ok.output
    path = _write_policy(tmp_path, RECORDER)
    mine = runner.invoke(main, ["run", str(scenario), "--policy", f"{path}:Recorder", "--until", "5ms"])
    assert mine.exit_code == 0, mine.output
    bad = runner.invoke(main, ["run", str(scenario), "--policy", "round_robin", "--set", "scheduler.slice=soon"])
    assert bad.exit_code == 2
    assert "slice: expected a duration such as '2ms' or '250us', got 'soon'" in bad.output
    unknown = runner.invoke(main, ["run", str(scenario), "--policy", "fifo", "--set", "scheduler.slice=1ms"])
    assert unknown.exit_code == 2
    assert "scheduler.slice: unknown field (policy fifo: it takes no settings)" in unknown.output


# -- the broken-policy zoo on the GPU side ----------------------------------------------------------------------


def test_a_gpu_policy_that_raises_is_stopped_naming_the_call_and_the_instant(tmp_path):
    path = _write_policy(tmp_path, """
    class Raises(HwPolicy):
        def pick(self, node, now):
            if now >= 1_000_000:
                raise KeyError("no such context")
            return self.os.ready(node)[0]
    """)
    assert _stop_message(f"{path}:Raises") == (
        f"GPU scheduling policy {path}:Raises: pick(node=0) at 1001048 ns: raised KeyError: "
        "'no such context' (at mine.py:7 in pick)")


def test_a_gpu_policy_that_picks_a_context_that_is_not_ready_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Stale(HwPolicy):
        def setup(self):
            self.seen = []

        def on_ready(self, ctx, now):
            self.seen.append(ctx)

        def pick(self, node, now):
            return self.seen[0]  # a.exe/frames, runnable or not
    """)
    assert _stop_message(f"{path}:Stale") == (
        f"GPU scheduling policy {path}:Stale: pick(node=0) at 1001048 ns: picked a.exe/frames, which is not "
        "ready; ready: b.exe/batch")


def test_a_gpu_policy_that_leaves_the_engine_idle_while_work_waits_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Lazy(HwPolicy):
        def pick(self, node, now):
            return None
    """)
    assert _stop_message(f"{path}:Lazy") == (
        f"GPU scheduling policy {path}:Lazy: pick(node=0) at 1048 ns: returned None while node 0 is idle and "
        "a.exe/frames is ready, with no timer set: the work would wait forever")


def test_a_gpu_policy_that_preempts_a_node_that_does_not_exist_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Wild(HwPolicy):
        def pick(self, node, now):
            return self.os.ready(node)[0]

        def on_started(self, ctx, node, now):
            self.os.preempt(7)
    """)
    assert _stop_message(f"{path}:Wild") == (
        f"GPU scheduling policy {path}:Wild: os.preempt(node=7) at 1048 ns: there is no node 7")


def test_a_broken_gpu_policy_ends_the_command_with_exit_2_and_no_bug_check(tmp_path):
    path = _write_policy(tmp_path, """
    class Lazy(HwPolicy):
        def pick(self, node, now):
            return None
    """)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy=f"{path}:Lazy"))
    out = CliRunner().invoke(main, ["run", str(scenario)])
    assert out.exit_code == 2
    assert out.output.splitlines()[-1].startswith(
        f"wddmsim: error: GPU scheduling policy {path}:Lazy: pick(node=0) at 1048 ns")
    assert "bug check" not in out.output.lower()


# -- a policy for the other scheduling mode -----------------------------------------------------------------------

GPU_POLICIES = "windows, priority_quantum, round_robin, fifo (wddmsim policies), or a wddmsim.policies.HwPolicy class"
OS_POLICIES = ("windows, priority_quantum, strict_priority, fifo, round_robin, priority, fair, edf, llf, partition, "
               "mlfq (wddmsim policies), or a wddmsim.policies.Policy class")


@pytest.mark.parametrize("policy, hardware, message", [
    ("edf", True, "scheduler.policy: policy edf schedules the OS's software queues; under hardware scheduling name a "
                  f"GPU policy: {GPU_POLICIES}"),
    ("strict_priority", True, "scheduler.policy: policy strict_priority schedules the OS's software queues; under "
                              f"hardware scheduling name a GPU policy: {GPU_POLICIES}"),
    ("{path}:Soft", True, "scheduler.policy: policy {path}:Soft schedules the OS's software queues (Soft is a "
                          f"wddmsim.policies.Policy); under hardware scheduling name a GPU policy: {GPU_POLICIES}"),
    ("{path}:Hard", False, "scheduler.policy: policy {path}:Hard schedules the GPU's hardware contexts (Hard is a "
                           f"wddmsim.policies.HwPolicy); under software scheduling name an OS policy: {OS_POLICIES}"),
])
def test_a_policy_of_the_other_scheduling_mode_is_one_line_and_exit_2(tmp_path, policy, hardware, message):
    path = tmp_path / "both.py"
    path.write_text(textwrap.dedent("""
    from wddmsim.policies import HwPolicy, Policy

    class Soft(Policy):
        def pick(self, node, now):
            return self.os.ready(node)[0]

    class Hard(HwPolicy):
        def pick(self, node, now):
            return self.os.ready(node)[0]
    """))
    scenario = tmp_path / "s.toml"
    text = SCENARIO.format(policy="windows")
    scenario.write_text(text if hardware else text.replace('scheduling = "hardware"', 'scheduling = "software"'))
    out = CliRunner().invoke(main, ["run", str(scenario), "--policy", policy.format(path=path)])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(message.format(path=path)), out.output


def test_a_name_resolves_per_scheduling_mode():
    from wddmsim.policies.fifo import Fifo as OsFifo
    from wddmsim.policies.hw_fifo import Fifo as GpuFifo
    from wddmsim.policies.hw_round_robin import RoundRobin as GpuRoundRobin

    assert make_policies("fifo", {}, hardware=False)[0]._cls is OsFifo
    assert make_policies("fifo", {}, hardware=True)[1]._cls is GpuFifo
    host = make_policies("round_robin", {"slice": "1ms"}, hardware=True)[1]
    assert host._cls is GpuRoundRobin and host._settings.slice == MS


def test_the_policies_command_lists_the_mode_each_policy_is_for():
    out = CliRunner().invoke(main, ["policies"])
    assert out.exit_code == 0
    rows = [line.split()[:2] for line in out.output.splitlines()]
    assert ["round_robin", "software"] in rows and ["round_robin", "hardware"] in rows
    assert ["windows", "hardware"] in rows and ["edf", "software"] in rows and ["edf", "hardware"] not in rows
    shown = CliRunner().invoke(main, ["policies", "--show", "round_robin", "--gpu"])
    assert shown.exit_code == 0 and "class RoundRobin(HwPolicy):" in shown.output


def test_the_gpu_policy_docs_policies_md_writes_runs(tmp_path):
    import re

    text = (Path(__file__).parents[1] / "docs" / "policies.md").read_text()
    section = text[text.index("## Under hardware scheduling"):]
    (tmp_path / "slices.py").write_text(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    sc = api.load(EXAMPLES / "hardware_scheduling.toml",
                  overrides={"scheduler.policy": f"{tmp_path / 'slices.py'}:Slices", "scheduler.slice": "1ms"})
    result = api.run(sc, until="20ms")
    # Bands ignored: the idle-band indexer completes work in the first 20 ms too, which under the
    # band rules it does not.
    assert result.crash is None and all(c.completed > 0 for c in result.summary.contexts)
    bands = api.run(api.load(EXAMPLES / "hardware_scheduling.toml"), until="20ms")
    assert bands.summary.context("indexer/background").completed == 0
