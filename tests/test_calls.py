"""The scenario's [[call]] tables (workloads/calls.py), the priority thunks behind them
(D3DKMTSetContextSchedulingPriority, D3DKMTSetProcessSchedulingPriorityClass), the stepped GPU from a
scenario file, and the messages a bad call gets. Times are virtual ns."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import ApiError
from wddmsim.scenario import ScenarioError, parse_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

US = 1_000
MS = 1_000_000

BASE = """
name = "calls"
duration = "10ms"
[adapter]
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[[process]]
name = "app"
[[process.context]]
name = "a"
node = "3D"
workload = { kind = "compute_batch", batch = 20, count = 1, work = "100us", sync = false }
[[process.context]]
name = "b"
node = "3D"
workload = { kind = "compute_batch", batch = 20, count = 1, work = "100us", sync = false }
"""


def problems(extra: str, base: str = BASE) -> list[str]:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(base + extra, "bad.toml")
    return err.value.problems


@pytest.mark.parametrize(("extra", "message"), [
    ('[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\ncontext = "a"\npriority = 8\n',
     "bad.toml: call[0].priority: must be -7..7, got 8"),
    ('[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\npriority = 1\n',
     "bad.toml: call[0]: a SetContextSchedulingPriority call needs context"),
    ('[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "nope"\ncontext = "a"\npriority = 1\n',
     "bad.toml: call[0].process: no process named 'nope'; the processes are 'app'"),
    ('[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\ncontext = "z"\npriority = 1\n',
     "bad.toml: call[0].context: no context 'z' in process 'app'"),
    ('[[call]]\napi = "SetProcessSchedulingPriorityClass"\nprocess = "app"\npriority_class = "urgent"\n',
     "bad.toml: call[0].priority_class: must be one of 'idle', 'below_normal', 'normal', 'above_normal', 'high', "
     "'realtime', got 'urgent'"),
    ('[[call]]\napi = "SetProcessSchedulingPriorityClass"\nprocess = "app"\npriority_class = "high"\npriority = 1\n',
     "bad.toml: call[0]: priority is not a field of a SetProcessSchedulingPriorityClass call"),
    ('[[call]]\napi = "SetProcessSchedulingPriorityClass"\nprocess = "app"\npriority_class = "high"\n'
     'every = "500us"\nevery_max = "200us"\n',
     "bad.toml: call[0]: every_max (200000 ns) is below every (500000 ns)"),
    ('[[call]]\napi = "SetProcessSchedulingPriorityClass"\nprocess = "app"\npriority_class = "high"\ncount = 3\n',
     "bad.toml: call[0]: count above 1 needs every (the gap between calls)"),
    ('[[call]]\napi = "StepEngine"\nnode = "3D"\n',
     'bad.toml: call[0].api: StepEngine steps a GPU in stepped mode: set adapter.engine_mode = "stepped"'),
    ('[[call]]\napi = "Reboot"\n', "bad.toml: call[0].api: must be one of"),
    ('[[call]]\napi = "MoveWork"\nprocess = "app"\ncontext = "a"\nnode = ["3D", "Video"]\n',
     "bad.toml: call[0].node: no node named 'Video'; the adapter's nodes are '3D'"),
    ('[[call]]\napi = "MoveWork"\nprocess = "app"\ncontext = "a"\nnode = []\n',
     "bad.toml: call[0].node: needs at least one entry"),
    ('[[call]]\napi = "SignalSynchronizationObjectFromCpu"\nprocess = "app"\nfence = "f"\nvalue = 1\n',
     "bad.toml: call[0].fence: no fence named 'f'; declare it in a [[fence]] table"),
])
def test_a_bad_call_names_the_file_the_field_and_the_reason(extra, message):
    got = problems(extra)
    assert len(got) == 1 and got[0].startswith(message), got


def test_the_cli_exits_2_with_the_message_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE + '[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\ncontext = "a"\n'
                          'priority = [1, 9]\n')
    r = CliRunner().invoke(main, ["run", str(bad)])
    assert r.exit_code == 2
    assert f"{bad}: call[0].priority: entry 1: must be -7..7, got 9" in r.output
    assert "Traceback" not in r.output


def test_priority_calls_are_accepted_under_hardware_scheduling():
    """Under hardware scheduling the priority calls reach the driver through
    DxgkDdiSetContextSchedulingProperties (tests/test_hw_priority_calls.py; until issue 26 they were
    refused here); SetSchedulingHints, which informs the software scheduler's policy, is refused."""
    hw = BASE.replace('[adapter]\n', '[adapter]\nscheduling = "hardware"\n')
    sc = parse_scenario(hw + '[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\ncontext = "a"\n'
                             'priority = 1\n[[call]]\napi = "SetProcessSchedulingPriorityClass"\nprocess = "app"\n'
                             'priority_class = "high"\n', "ok.toml")
    assert [c.api for c in sc.call] == ["SetContextSchedulingPriority", "SetProcessSchedulingPriorityClass"]
    got = problems('[[call]]\napi = "SetSchedulingHints"\nprocess = "app"\ncontext = "a"\nweight = 2\n', hw)
    assert got == ["bad.toml: call[0].api: SetSchedulingHints informs the software scheduler's policy; under "
                   "hardware scheduling the GPU decides: use the software scheduler"]


def test_move_work_is_refused_for_a_frame_loop():
    base = BASE.replace('workload = { kind = "compute_batch", batch = 20, count = 1, work = "100us", sync = false }',
                        'workload = { kind = "frame_loop", fps = 60, work = "1ms" }', 1)
    got = problems('[[call]]\napi = "MoveWork"\nprocess = "app"\ncontext = "a"\nnode = "3D"\n', base)
    assert got == ["bad.toml: call[0].context: a frame_loop workload cannot be moved; MoveWork moves compute_batch, "
                   "bursty, script workloads"]


def test_the_priority_thunks_check_their_arguments():
    system = System(parse_scenario(BASE, "<calls>"))
    kmt = system.kmt
    a = system.contexts[0]
    for bad in (8, -8):
        with pytest.raises(ApiError) as err:
            kmt.SetContextSchedulingPriority(a, bad)
        assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    with pytest.raises(ApiError) as err:
        kmt.SetProcessSchedulingPriorityClass(a.process, "urgent")
    assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    kmt.DestroyContext(system.contexts[1])
    with pytest.raises(ApiError) as err:
        kmt.SetContextSchedulingPriority(system.contexts[1], 1)
    assert err.value.status == NTSTATUS.STATUS_INVALID_PARAMETER
    assert a.priority == 0 and a.process.priority_class == "normal"


def test_a_ready_context_changes_level_and_keeps_working():
    """Both contexts have 20 packets queued from 0; at 1 ms b is raised above a. From a's running
    buffer on, b runs all its remaining packets, then a resumes; nothing is lost and the policy's
    levels stay consistent (a context that goes idle after a change leaves its new level)."""
    extra = '[[call]]\napi = "SetContextSchedulingPriority"\nprocess = "app"\ncontext = "b"\npriority = 3\nat = "1ms"\n'
    trace = ListSink()
    system = System(parse_scenario(BASE + extra, "<calls>"), trace=trace)
    result = system.run()
    assert result.bugcheck is None
    a, b = system.contexts
    assert (a.completed, b.completed) == (20, 20)
    names = {e["context"]: e["name"][-1] for e in trace.events if e["event"] == "ContextCreate"}
    order = "".join(names[e["context"]] for e in trace.events
                    if e["event"] == "DmaPacketStop" and e["status"] == "Completed")
    # Until 1 ms a and b share the node (the quantum is 2 ms: a holds it); at 1 ms b preempts.
    assert order == "a" * 11 + "b" * 20 + "a" * 9
    assert [e["t"] for e in trace.events if e["event"] == "ContextPriority"] == [1 * MS]
    assert not system.adapter.vidsch.policy.has_ready(0)


STEPPED = """
name = "stepped"
duration = "10ms"
[adapter]
engine_mode = "stepped"
cpu_cost = { render = 0, patch = 0, submit = 0, isr = 0, dpc = 0, present = 0 }
[[adapter.nodes]]
name = "3D"
engine = "3d"
command_cost = 0
[[process]]
name = "app"
[[process.context]]
name = "a"
node = "3D"
workload = { kind = "script", packets = [{ at = 0, work = "1ms", repeat = 2 }] }
[[call]]
api = "StepEngine"
node = "3D"
at = "5ms"
"""


def test_a_stepped_gpu_runs_nothing_until_a_step_from_the_scenario():
    """The manual-advance GPU from a scenario file: the packets sit on the engine until the step at
    5 ms, which runs one submission at that instant; the second is held to the end."""
    trace = ListSink()
    system = System(parse_scenario(STEPPED, "<stepped>"), trace=trace)
    system.run()
    done = [(e["t"], e["seq"]) for e in trace.events if e["event"] == "QueuePacketStop"]
    assert done == [(5 * MS, 1)]
    calls = [(e["t"], e["api"], e["process"], e["status"]) for e in trace.events if e["event"] == "ScenarioCall"]
    assert calls == [(5 * MS, "StepEngine", 0, "STATUS_SUCCESS")]
    assert system.contexts[0].completed == 1
