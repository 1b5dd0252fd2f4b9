"""The research protocol (wddmsim.policies): what a policy is told and when, what it may ask, how
it is loaded, and the broken-policy zoo: a policy that raises, picks a context that is not ready,
never picks while work waits, or preempts where the driver cannot is stopped with a message that
names the policy, the call and the instant (exit 2 on the command line), never a bug check."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main
from wddmsim.policies import PolicyError

#: Two contexts on one node: a 1 ms packet every 10 ms from ``a``, and ``b``'s batch of 3 ms packets
#: two at a time; no CPU costs and no engine cost per command, so every instant below is exact.
SCENARIO = """
duration = "20ms"
[adapter]
hw_queue_depth = 1
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
preemption = "interval"
preemption_interval = "10us"
[scheduler]
policy = "{policy}"
[[process]]
name = "a.exe"
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
    path.write_text("from wddmsim.policies import Policy\n\n" + textwrap.dedent(body))
    return str(path)


def _scenario(policy: str, **driver) -> api.Scenario:
    sc = api.parse(SCENARIO.format(policy=policy))
    if driver:
        sc = api.validate(sc, overrides={f"driver.{k}": v for k, v in driver.items()})
    return sc


def _stop_message(policy: str, **driver) -> str:
    with pytest.raises(PolicyError) as info:
        api.run(_scenario(policy, **driver))
    return str(info.value)


# -- what the policy is told -----------------------------------------------------------------------------------


RECORDER = """
class Recorder(Policy):
    log = []

    def setup(self):
        type(self).log = []

    def pick(self, node, now):
        return self.os.ready(node)[0]

    def on_ready(self, ctx, now):
        self.log.append((now, "ready", ctx.name))

    def on_idle(self, ctx, now):
        self.log.append((now, "idle", ctx.name))

    def on_queued(self, packet, now):
        self.log.append((now, "queued", packet.context.name, packet.seq))

    def on_started(self, packet, node, now):
        self.log.append((now, "started", packet.context.name, packet.seq, node))

    def on_completed(self, packet, node, gpu_ns, now):
        self.log.append((now, "completed", packet.context.name, packet.seq, gpu_ns))
"""


def test_a_policy_is_told_every_step_of_a_packet_in_order(tmp_path):
    path = _write_policy(tmp_path, RECORDER)
    sc = _scenario(f"{path}:Recorder")
    result = api.run(sc, until="8ms")
    from wddmsim.dxgkrnl.loader import load_class

    log = load_class(f"{path}:Recorder").log
    # At 0 both applications queue; a's frame is picked first (ready first), then b's two packets
    # in turn; the GPU time each got is its work, measured from DmaPacketStart to DmaPacketStop.
    assert log[:12] == [
        (0, "queued", "a.exe/frames", 1),
        (0, "ready", "a.exe/frames"),
        (0, "queued", "b.exe/batch", 1),
        (0, "ready", "b.exe/batch"),
        (0, "queued", "b.exe/batch", 2),
        (0, "idle", "a.exe/frames"),
        (0, "started", "a.exe/frames", 1, 0),
        (1_000_000, "completed", "a.exe/frames", 1, 1_000_000),
        (1_000_000, "started", "b.exe/batch", 1, 0),
        (4_000_000, "completed", "b.exe/batch", 1, 3_000_000),
        (4_000_000, "idle", "b.exe/batch"),
        (4_000_000, "started", "b.exe/batch", 2, 0),
    ]
    assert result.summary.context("b.exe/batch").gpu_ns == 6_000_000


def test_a_timer_fires_at_its_instant_and_the_node_is_looked_at_again(tmp_path):
    # A policy that holds every packet until the next whole 5 ms: the node stays idle meanwhile, which
    # is allowed because a timer is set.
    path = _write_policy(tmp_path, """
    class Gate(Policy):
        def setup(self):
            self.open_at = 5_000_000
            self.timer = None
            self.fired = []

        def pick(self, node, now):
            if now < self.open_at:
                if self.timer is None:
                    self.timer = self.os.set_timer(self.open_at, "open")
                return None
            return self.os.ready(node)[0]

        def on_timer(self, token, now):
            self.fired.append((token, now))
    """)
    sim = api.Simulation(_scenario(f"{path}:Gate"), events=True)
    sim.step(until="9ms")
    starts = [(e.t, e.fields["seq"]) for e in sim.events if e.event == "DmaPacketStart"]
    assert starts[0] == (5_000_000, 1)
    assert sim._system.adapter.vidsch.policy.policy.fired == [("open", 5_000_000)]
    sim.close()


def test_a_policy_preempts_through_the_os_and_the_packet_comes_back(tmp_path):
    # Preempt b's first packet 500 us after it started; it is resubmitted with what it had left.
    path = _write_policy(tmp_path, """
    class Kick(Policy):
        def setup(self):
            self.kicked = False
            self.preempted = []

        def pick(self, node, now):
            return self.os.ready(node)[0]

        def on_started(self, packet, node, now):
            if packet.context.name == "b.exe/batch" and not self.kicked:
                self.kicked = True
                self.os.set_timer(now + 500_000, node)

        def on_timer(self, node, now):
            assert self.os.preempt(node) is True
            assert self.os.preempt(node) is False  # one request at a time

        def on_preempted(self, packet, node, gpu_ns, now):
            self.preempted.append((packet.context.name, packet.seq, gpu_ns, packet.resubmission))
    """)
    sim = api.Simulation(_scenario(f"{path}:Kick"), events=True)
    sim.step(until="12ms")
    requests = [e for e in sim.events if e.event == "PreemptRequest"]
    assert [(e.t, e.fields["reason"]) for e in requests] == [(1_500_000, "policy")]
    assert sim._system.adapter.vidsch.policy.policy.preempted[0][:3] == ("b.exe/batch", 1, 500_000)
    # It got 500 us the first time and its remaining 2.5 ms when resubmitted: three 3 ms packets
    # completed by 12 ms took 9 ms of GPU time, nothing redone (interval granularity, no save cost).
    result = sim.close()
    assert result.crash is None
    b = result.summary.context("b.exe/batch")
    assert (b.completed, b.preempted, b.gpu_ns) == (3, 1, 9_000_000)


# -- loading ----------------------------------------------------------------------------------------------------


def test_a_policy_file_next_to_the_scenario_is_found(tmp_path):
    _write_policy(tmp_path, """
    class Mine(Policy):
        def pick(self, node, now):
            return self.os.ready(node)[-1]
    """)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy="mine.py:Mine"))
    result = api.run(api.load(scenario), until="5ms")
    assert result.summary.context("b.exe/batch").completed >= 1


def test_settings_are_checked_by_the_policys_model(tmp_path):
    path = _write_policy(tmp_path, """
    from pydantic import BaseModel

    class Slow(Policy):
        class Settings(BaseModel, extra="forbid"):
            delay: int = 0

        def pick(self, node, now):
            return self.os.ready(node)[0]
    """)
    runner = CliRunner()
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy=f"{path}:Slow"))
    ok = runner.invoke(main, ["run", str(scenario), "--set", "scheduler.delay=5", "--until", "2ms"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(main, ["run", str(scenario), "--set", "scheduler.delay=soon"])
    assert bad.exit_code == 2
    assert "scheduler.delay: Input should be a valid integer" in bad.output
    unknown = runner.invoke(main, ["run", str(scenario), "--set", "scheduler.speed=5"])
    assert unknown.exit_code == 2
    assert f"policy {path}:Slow has no setting speed; its settings are delay" in unknown.output


@pytest.mark.parametrize("spec, message", [
    ("nowhere.py:Edf", "scheduler.policy: scheduling policy 'nowhere.py:Edf': file "),
    ("{path}:Missing", "has no Missing; the scheduling policies it defines: Fine, NoPick"),
    ("{path}:NotAPolicy", "NotAPolicy is not a subclass of wddmsim.policies.Policy"),
    ("{path}:NoPick", "NoPick does not define pick(node, now)"),
    ("lottery", "unknown scheduling policy 'lottery'"),
])
def test_a_wrong_path_class_or_name_is_one_line_and_exit_2(tmp_path, monkeypatch, spec, message):
    path = _write_policy(tmp_path, """
    class Fine(Policy):
        def pick(self, node, now):
            return self.os.ready(node)[0]

    class NoPick(Policy):
        pass

    class NotAPolicy:
        pass
    """)
    monkeypatch.chdir(tmp_path)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy="windows"))
    out = CliRunner().invoke(main, ["run", str(scenario), "--policy", spec.format(path=path)])
    assert out.exit_code == 2
    assert message in out.output
    assert "Traceback" not in out.output


# -- the broken-policy zoo ----------------------------------------------------------------------------------------


def test_a_policy_that_raises_is_stopped_naming_the_call_and_the_instant(tmp_path):
    path = _write_policy(tmp_path, """
    class Raises(Policy):
        def pick(self, node, now):
            if now >= 1_000_000:
                raise KeyError("no such queue")
            return self.os.ready(node)[0]
    """)
    msg = _stop_message(f"{path}:Raises")
    assert msg == (f"scheduling policy {path}:Raises: pick(node=0) at 1000000 ns: raised KeyError: "
                   "'no such queue' (at mine.py:7 in pick)")


def test_a_policy_that_picks_a_context_that_is_not_ready_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Stale(Policy):
        def setup(self):
            self.seen = []

        def on_ready(self, ctx, now):
            self.seen.append(ctx)

        def pick(self, node, now):
            return self.seen[0]  # a.exe/frames, ready or not
    """)
    msg = _stop_message(f"{path}:Stale")
    assert msg == (f"scheduling policy {path}:Stale: pick(node=0) at 1000000 ns: picked a.exe/frames, which "
                   "is not ready; ready: b.exe/batch")


def test_a_policy_that_never_picks_while_work_waits_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Lazy(Policy):
        def pick(self, node, now):
            return None
    """)
    msg = _stop_message(f"{path}:Lazy")
    assert msg == (f"scheduling policy {path}:Lazy: pick(node=0) at 0 ns: returned None while node 0 is "
                   "idle and a.exe/frames, b.exe/batch are ready, with no timer set: the work would wait forever")


def test_a_policy_that_preempts_without_preemption_support_is_stopped(tmp_path):
    path = _write_policy(tmp_path, """
    class Eager(Policy):
        def pick(self, node, now):
            return self.os.ready(node)[0]

        def on_started(self, packet, node, now):
            self.os.preempt(node)
    """)
    msg = _stop_message(f"{path}:Eager", ddi_version="win7")
    assert msg == (f"scheduling policy {path}:Eager: os.preempt(node=0) at 0 ns: the driver did not declare "
                   "preemption (DXGK_DRIVERCAPS.PreemptionAware); a policy checks self.os.can_preempt first")


def test_a_broken_policy_ends_the_command_with_exit_2_and_no_bug_check(tmp_path):
    path = _write_policy(tmp_path, """
    class Lazy(Policy):
        def pick(self, node, now):
            return None
    """)
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(policy=f"{path}:Lazy"))
    out = CliRunner().invoke(main, ["run", str(scenario)])
    assert out.exit_code == 2
    assert out.output.splitlines()[-1].startswith(f"wddmsim: error: scheduling policy {path}:Lazy: pick(node=0) at 0 ns")
    assert "bug check" not in out.output.lower()


def test_the_os_keeps_the_contract_under_any_policy_order(tmp_path):
    # Whatever order a policy picks, packets of one context leave in order and fence ids are the
    # OS's: per node consecutive from 1 in submission order.
    path = _write_policy(tmp_path, """
    class Last(Policy):
        def pick(self, node, now):
            return self.os.ready(node)[-1]
    """)
    sim = api.Simulation(_scenario(f"{path}:Last"), events=True)
    sim.step(until="20ms")
    starts = [e for e in sim.events if e.event == "DmaPacketStart"]
    by_ctx: dict = {}
    for e in starts:
        by_ctx.setdefault(e.fields["context"], []).append(e.fields["seq"])
    assert all(seqs == sorted(seqs) for seqs in by_ctx.values())
    fences = [e.fields["fence"] for e in starts]
    assert fences == list(range(1, len(fences) + 1))
    assert sim.close().crash is None
