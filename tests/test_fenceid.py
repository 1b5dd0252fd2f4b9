"""Submission fence ids on the DDI (ddi/fenceid.py): 32-bit ids handed out from the OS's count,
read back past the wrap, compared as serial numbers."""

from __future__ import annotations

from wddmsim.ddi.fenceid import U32, after, from_ddi, to_ddi

TOP = 1 << 32


def test_the_ddi_carries_the_low_32_bits():
    assert [to_ddi(f) for f in (1, U32, TOP, TOP + 5)] == [1, U32, 0, 5]


def test_a_reported_id_is_read_relative_to_the_last_completed_one():
    # Ahead of the last completed fence, across the wrap.
    assert from_ddi(0, U32) == TOP
    assert from_ddi(3, TOP - 2) == TOP + 3
    assert from_ddi(U32, TOP - 20) == U32
    # Behind it (a report going backwards stays behind, for rule 33 to see).
    assert from_ddi(U32 - 1, TOP + 2) == TOP - 2
    assert from_ddi(5, 10) == 5
    # Without a wrap nothing changes.
    assert all(from_ddi(f, 100) == f for f in range(90, 200))


def test_serial_number_order():
    assert after(0, U32) and after(5, U32 - 5) and after(2, 1)
    assert not after(U32, 0) and not after(7, 7) and not after(1, 2)


def _across_the_wrap(first: int):
    from wddmsim.scenario import scenario_from_dict

    return scenario_from_dict({
        "name": "wrap", "duration": "20ms",
        "adapter": {"cpu_cost": {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0},
                    "nodes": [{"name": "3D", "engine": "3d", "first_fence_id": first}]},
        "process": [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
            "kind": "script", "packets": [{"at": "1ms", "work": "100us", "repeat": 4}]}}]}],
    }, "<wrap>")


def test_past_the_wrap_0_is_a_fence_id_like_any_other():
    # The ids go U32 - 1, U32, 0, 1: the driver is handed 0 and its completion is read as the
    # OS's 2**32 (Microsoft's pages reserve no value of the UINT).
    from wddmsim.runner.system import System
    from wddmsim.trace import ListSink

    trace = ListSink()
    result = System(_across_the_wrap(U32 - 1), trace=trace).run()
    ids = [e["args"]["SubmissionFenceId"] for e in trace.of("DdiCall") if e["name"] == "DxgkDdiSubmitCommand"]
    assert ids == [U32 - 1, U32, 0, 1]
    assert [e["fence"] for e in trace.of("QueuePacketStop")] == [U32 - 1, U32, TOP, TOP + 1]
    assert (result.bugcheck, result.summary["packets_completed"], result.summary["violations"]) == (None, 4, [])


def test_the_first_fence_id_is_not_0_the_value_of_a_fence_slot_before_anything_completes():
    import pytest

    from wddmsim.scenario import ScenarioError

    with pytest.raises(ScenarioError) as e:
        _across_the_wrap(0)
    assert "adapter.nodes[0].first_fence_id: must be at least 1, got 0" in str(e.value)
    assert ("the first is not 0, the value a node's fence slot holds before anything completes (past 2**32 - 1 the "
            "ids wrap to 0)") in str(e.value)
