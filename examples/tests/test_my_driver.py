"""A driver team's own tests, written with wddmsim's pytest plugin (docs/testing.md).

Run them against your driver, with wddmsim's conformance suite collected beside them:

    pytest examples/tests --wddm-driver path/to/my_driver.py:MyDriver

Without --wddm-driver they run against wddmsim's reference driver. Each test builds a system around
the driver under test (``wddm_system``), runs it, and asks the event log (docs/events.md) what the
OS saw. The checks speak of the contract, not of one driver's way of keeping it.
"""

# One context submitting three 1 ms DMA buffers at once (docs/scenarios.md).
THREE_PACKETS = {
    "name": "three_packets",
    "duration": "10ms",
    "process": [{"name": "app", "context": [{
        "name": "c", "node": "3D",
        "workload": {"kind": "script", "packets": [{"at": "0ns", "work": "1ms", "repeat": 3}]},
    }]}],
}


def test_each_buffer_is_submitted_once_and_completes_in_order(wddm_system):
    run = wddm_system(THREE_PACKETS).run()
    assert run.bugcheck is None, run.explain()
    assert run.count("DdiCall", name="DxgkDdiSubmitCommand") == 3
    assert [e["fence"] for e in run.events("DmaPacketStop", status="Completed")] == [1, 2, 3]
    assert run.context("app/c")["completed"] == 3


def test_the_dpc_follows_each_completion_within_10us(wddm_system):
    run = wddm_system(THREE_PACKETS).run()
    reported = run.times("Callback", name="DxgkCbNotifyInterrupt", args__InterruptType="DXGK_INTERRUPT_DMA_COMPLETED")
    dpcs = run.times("Callback", name="DxgkCbNotifyDpc")
    assert len(reported) == 3
    assert all(any(0 <= d - t <= 10_000 for d in dpcs) for t in reported)


def test_halfway_through_only_the_first_buffer_is_done(wddm_system):
    run = wddm_system(THREE_PACKETS)
    run.run(until="1.5ms")
    assert run.count("QueuePacketStop", status="Completed") == 1
    run.run()
    assert run.count("QueuePacketStop", status="Completed") == 3


def test_without_overheads_a_hundred_1ms_buffers_take_exactly_100ms(wddm_system):
    # A scenario file, found from this test file's directory: examples/deep_queue.toml.
    run = wddm_system("../deep_queue.toml").run()
    assert run.bugcheck is None, run.explain()
    assert run.last("QueuePacketStop", status="Completed")["t"] == 100_000_000


def test_a_hung_buffer_costs_its_own_device_only(wddm_system):
    run = wddm_system("""
        name = "hang"
        duration = "5s"
        [[process]]
        name = "game"
        context = [{ name = "render", node = "3D", workload = { kind = "script", packets = [{ at = 0, work = "1ms", repeat = 4 }] } }]
        [[process]]
        name = "tool"
        context = [{ name = "copy", node = "Copy", workload = { kind = "script", packets = [{ at = "3s", work = "1ms" }] } }]
        [[fault]]
        kind = "hang"
        process = "game"
        context = "render"
        packet = 2
    """).run()
    assert run.bugcheck is None, run.explain()
    assert run.count("TdrDetected") == 1
    assert run.context("game/render")["device_error"]
    assert run.context("tool/copy")["completed"] == 1
