"""The summary's research figures (docs/scheduling.md, "Scheduling quality in the summary"): per
context its jobs against their deadlines (``jobs``, ``deadline_misses``, ``tardiness_*``), its
``weight`` and share of its node's GPU time against the share its weight asks for, the
preemptions of its running packets and their cost by the GPU's own account; per node
``idle_while_waiting_ns``; the run's ``policy``. Virtual time is deterministic, so every figure is
exact: each test says where its numbers come from (the default CPU costs of [adapter.cpu_cost]:
render 5 us, patch 1 us, submit 2 us, ISR 1 us, DPC 2 us; an engine's default command_cost 100 ns,
paid by the ring's INDIRECT, the buffer's WORK and the ring's FENCE)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from wddmsim import api
from wddmsim.gpu import commands as C
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.sim import Simulator
from wddmsim.output.summaryview import Table, sections
from wddmsim.sweep import flatten

ROOT = Path(__file__).resolve().parents[1]
US, MS = 1_000, 1_000_000
RENDER, PATCH, SUBMIT, ISR, DPC = 5 * US, 1 * US, 2 * US, 1 * US, 2 * US
CMD = 100  # an engine's command_cost
ZERO_CPU = {"render": 0, "patch": 0, "submit": 0, "isr": 0, "dpc": 0, "present": 0}
RESEARCH = ("weight", "share", "share_target", "share_error", "deadline_misses", "jobs", "tardiness_p50_ns",
            "tardiness_p99_ns", "tardiness_max_ns", "preemptions", "preemption_cost_ns")


def _frames(duration="100ms", deadline="4ms", work="5ms", per_frame=1, cpu=None, command_cost=None, calls=()):
    """One context with a 10 ms period and a ``deadline``: a 100 fps frame loop of ``per_frame``
    buffers of ``work`` each, no present."""
    node = {"name": "3D", "engine": "3d"}
    if command_cost is not None:
        node["command_cost"] = command_cost
    adapter = {"nodes": [node]}
    if cpu is not None:
        adapter["cpu_cost"] = cpu
    return {"duration": duration, "adapter": adapter, "call": list(calls), "process": [{"name": "rt.exe", "context": [
        {"name": "c", "node": "3D", "period": "10ms", "deadline": deadline,
         "workload": {"kind": "frame_loop", "fps": 100, "work": work, "packets_per_frame": per_frame,
                      "present": False}}]}]}


def _deadlines(summary: dict, i: int = 0) -> tuple:
    c = summary["contexts"][i]
    return c["jobs"], c["deadline_misses"], c["tardiness_p50_ns"], c["tardiness_p99_ns"], c["tardiness_max_ns"]


# ---------------------------------------------------------------------------------- deadlines
def test_a_5ms_frame_with_a_4ms_deadline_misses_every_job_by_1ms_exactly():
    """No CPU cost, no command cost: each frame is released at its start, runs 5 ms on the GPU and
    finishes 1 ms after its deadline. Ten frames (0 .. 90 ms) all finish within the 100 ms run."""
    s = api.run(_frames(cpu=ZERO_CPU, command_cost=0)).summary.as_dict()
    assert _deadlines(s) == (10, 10, MS, MS, MS)
    assert s["contexts"][0]["completed"] == 10


def test_the_tardiness_adds_the_known_cpu_and_command_costs():
    """Default costs: the frame's buffer is rendered (5 us), patched and submitted (3 us), then the
    engine decodes the INDIRECT and the WORK before the 5 ms of work and the FENCE after it; the
    ISR's interrupt is the finish. 1 ms + 8 us + 300 ns late, every frame."""
    late = RENDER + PATCH + SUBMIT + 5 * MS + 3 * CMD - 4 * MS
    assert late == 1_008_300
    s = api.run(_frames()).summary.as_dict()
    assert _deadlines(s) == (10, 10, late, late, late)


def test_a_job_is_the_frame_and_finishes_with_its_last_packet():
    """Two 2.5 ms buffers a frame: the second is rendered 5 us after the first and waits behind it
    on the hardware queue, so the frame finishes when the second's fence lands: 8 us (the first's
    render, patch and submit) + 2 x (2.5 ms + 3 commands). Twenty packets, ten jobs."""
    late = RENDER + PATCH + SUBMIT + 2 * (2_500 * US + 3 * CMD) - 4 * MS
    s = api.run(_frames(work="2.5ms", per_frame=2)).summary.as_dict()
    assert s["contexts"][0]["completed"] == 20
    assert _deadlines(s) == (10, 10, late, late, late) == (10, 10, 1_008_600, 1_008_600, 1_008_600)


def test_a_met_deadline_counts_with_no_tardiness():
    s = api.run(_frames(deadline="6ms")).summary.as_dict()
    assert _deadlines(s) == (10, 0, 0, 0, 0)


def test_an_unfinished_job_past_its_deadline_at_the_end_is_missed():
    """The run ends at 94.5 ms: the frame released at 90 ms is running, its deadline (94 ms) passed
    half a millisecond ago. It counts as missed by 0.5 ms; the nine before it by 1 008 300 ns (whose
    p50 and p99 are 1 008 000 to four significant digits; the maximum is exact)."""
    s = api.run(_frames(duration="94.5ms")).summary.as_dict()
    assert s["contexts"][0]["completed"] == 9
    assert _deadlines(s) == (10, 10, 1_008_000, 1_008_000, 1_008_300)


def test_an_unfinished_job_before_its_deadline_at_the_end_is_not_counted():
    """The run ends at 93 ms, before the last frame's deadline (94 ms): nine jobs judged."""
    s = api.run(_frames(duration="93ms")).summary.as_dict()
    assert _deadlines(s) == (9, 9, 1_008_300, 1_008_300, 1_008_300)


def test_a_job_keeps_the_deadline_in_force_when_it_was_released():
    """SetSchedulingHints gives the context a 6 ms deadline at 45 ms, while the frame released at
    40 ms runs: that frame keeps its 4 ms deadline and misses, as the four before it; the five
    released after the call meet theirs."""
    call = {"api": "SetSchedulingHints", "at": "45ms", "process": "rt.exe", "context": "c", "deadline": "6ms"}
    s = api.run(_frames(cpu=ZERO_CPU, command_cost=0, calls=[call])).summary.as_dict()
    assert _deadlines(s) == (10, 5, 0, MS, MS)
    assert s["contexts"][0]["weight"] == 1.0


def test_without_a_deadline_there_are_no_deadline_figures():
    s = api.run(ROOT / "examples" / "deep_queue.toml").summary.as_dict()
    assert _deadlines(s) == (None, None, None, None, None)


def test_packets_that_never_complete_leave_their_jobs_unjudged():
    """examples/tdr.toml with a 10 ms deadline for the game: its first frame is met, the second
    hangs and is aborted by the engine reset, the two queued behind it are cancelled when its
    device goes to error. Those three jobs never finish: neither met nor missed."""
    scenario = tomllib.loads((ROOT / "examples" / "tdr.toml").read_text())
    scenario["process"][0]["context"][0]["deadline"] = "10ms"
    c = api.run(scenario).summary.as_dict()["contexts"][0]
    assert (c["context"], c["completed"], c["aborted"], c["cancelled"]) == ("game.exe/render", 1, 1, 3)
    assert (c["jobs"], c["deadline_misses"], c["tardiness_max_ns"]) == (1, 0, 0)


# ---------------------------------------------------------------------------------- shares
def _two(policy: str) -> dict:
    """Two contexts of one priority, weights 1 and 3, each with 200 buffers of 1 ms queued at once:
    always backlogged over the 100 ms run."""
    return {"duration": "100ms", "scheduler": {"policy": policy},
            "adapter": {"nodes": [{"name": "3D", "engine": "3d"}]},
            "process": [{"name": name, "context": [{"name": "c", "node": "3D", "weight": weight, "workload": {
                "kind": "compute_batch", "batch": 200, "count": 1, "work": "1ms"}}]}
                for name, weight in (("a", 1), ("b", 3))]}


@pytest.mark.parametrize(("policy", "about"), [("priority_quantum", (0.5, 0.5)), ("fair", (0.25, 0.75))])
def test_shares_against_the_weights(policy, about):
    """The default policy ignores weights and gives the two about half each: errors of about
    +0.25 (weight 1) and -0.25 (weight 3). The fair-share policy follows them."""
    s = api.run(_two(policy)).summary.as_dict()
    a, b = s["contexts"]
    total = a["gpu_ns"] + b["gpu_ns"]
    assert s["policy"] == policy
    assert (a["weight"], b["weight"]) == (1.0, 3.0)
    assert (a["share_target"], b["share_target"]) == (0.25, 0.75)
    assert (a["share"], b["share"]) == (round(a["gpu_ns"] / total, 6), round(b["gpu_ns"] / total, 6))
    assert a["share_error"] == round(a["gpu_ns"] / total - 0.25, 6)
    assert b["share_error"] == round(b["gpu_ns"] / total - 0.75, 6)
    assert a["share"] == pytest.approx(about[0], abs=0.01) and b["share"] == pytest.approx(about[1], abs=0.01)
    assert a["share_error"] == pytest.approx(about[0] - 0.25, abs=0.01)
    assert b["share_error"] == pytest.approx(about[1] - 0.75, abs=0.01)


def test_a_context_that_never_contended_has_no_target():
    s = api.run(ROOT / "examples" / "deep_queue.toml").summary.as_dict()
    c = s["contexts"][0]
    assert (c["weight"], c["share"], c["share_target"], c["share_error"]) == (1.0, 1.0, None, None)


# ---------------------------------------------------------------------------------- preemption
def _preemption(granularity: str | None = None, save: str | None = None) -> dict:
    scenario = tomllib.loads((ROOT / "examples" / "preemption.toml").read_text())
    node = scenario["adapter"]["nodes"][0]
    if granularity is not None:
        node["preemption"] = granularity
    if save is not None:
        node["preemption_save"] = save
    return scenario


@pytest.mark.parametrize(("granularity", "save"), [
    (None, 0),  # the example: a stop every 20 us of WORK keeps all progress, and saving is free
    ("interval", 50 * US),  # each stop saves the buffer's state: 50 us of engine time
    ("instruction", 20 * US),
])
def test_the_backgrounds_preemptions_and_their_cost(granularity, save):
    """examples/preemption.toml: the game preempts the background job's 20 ms buffers 12 times; each
    time the job's packet is the one running, and the stop inside it costs the engine its state
    save. One of the twelve requests (at 1.0083 ms) comes as a job buffer has just reached the
    engine, its WORK decoded but not begun: the engine stops before it and decodes it again after
    the resume, one command_cost more. The game is never preempted; the per-context counts add up to the
    node's answers."""
    s = api.run(_preemption(granularity, None if not save else f"{save // US}us")).summary.as_dict()
    game, job = s["contexts"]
    assert (game["preemptions"], game["preemption_cost_ns"]) == (0, 0)
    assert (job["context"], job["preemptions"], job["preemption_cost_ns"]) == \
        ("background.exe/job", 12, 12 * save + CMD)
    assert s["nodes"][0]["preemptions"] == game["preemptions"] + job["preemptions"]
    assert job["preempted"] == 18  # with the packets queued behind the running one


def test_a_preemption_at_a_buffer_boundary_takes_no_running_packet_back():
    """At dma_buffer granularity the job's 20 ms buffer runs to its end: an answer that finds it
    finished takes nothing back, so the node answers more preemptions than the contexts suffered,
    and no stop inside a buffer costs anything."""
    s = api.run(_preemption("dma_buffer", "50us")).summary.as_dict()
    answered = s["nodes"][0]["preemptions"]
    suffered = sum(c["preemptions"] for c in s["contexts"])
    assert 0 < suffered < answered
    assert [c["preemption_cost_ns"] for c in s["contexts"]] == [0, 0]


def _engine(granularity: str, save: int):
    sim = Simulator()
    gpu = GPU(sim, [EngineSpec("3D", "3d", 100, 4.0, granularity, 100_000, save)],
              [("VRAM", "memory", 1 << 20, False), ("Ap", "aperture", 1 << 20, False)])
    e = gpu.engines[0]
    e.program_ring(0x10000, 4096)
    gpu.irq.connect(lambda msg: (gpu.irq.ack(gpu.irq.status), True)[-1])
    return sim, gpu, e


def _ring(gpu, e, buffer: bytes) -> None:
    gpu.memory.write(0x20000, buffer)
    data = C.indirect(0x20000, len(buffer)) + C.fence(0x40000, 1, interrupt=True)
    gpu.memory.write(0x10000, data)
    e.doorbell(len(data))


@pytest.mark.parametrize(("at", "state", "cost"), [
    # mid-WORK at 700 ns (INDIRECT 0..100, decode 100..200, WORK 200..1200): stop there, save only
    (700, (0x20000, 12, 24, 500), 50),
    # at 1250 the second WORK is decoded (1200..1300) but not begun: stop before it, decode it again
    (1250, (0x20000, 12, 24, 0), 50 + 100),
])
def test_the_engines_own_account_of_a_stop(at, state, cost):
    sim, gpu, e = _engine("instruction", 50)
    _ring(gpu, e, C.work(1000) + C.work(5000))
    sim.at(at, e.request_preempt)
    sim.run()
    assert tuple(e.preempt_state) == state
    assert e.preempt_cost_ns == cost


def test_a_stall_on_a_wait_is_decoded_again_after_the_resume():
    sim, gpu, e = _engine("dma_buffer", 30)
    _ring(gpu, e, C.wait(0x50000, 1))
    sim.at(1000, e.request_preempt)
    sim.run()
    assert tuple(e.preempt_state) == (0x20000, 0, e.preempt_state[2], 0)
    assert e.preempt_cost_ns == 30 + 100


# ---------------------------------------------------------------------------------- idle while waiting
def _batch(depth: int, cpu=None) -> dict:
    """Ten 1 ms buffers of one context, queued at once, on a hardware queue ``depth`` deep."""
    adapter = {"hw_queue_depth": depth, "nodes": [{"name": "3D", "engine": "3d"}]}
    if cpu is not None:
        adapter["cpu_cost"] = cpu
    return {"duration": "100ms", "adapter": adapter, "process": [{"name": "batch.exe", "context": [
        {"name": "c", "node": "3D", "workload": {"kind": "compute_batch", "batch": 10, "count": 1, "work": "1ms"}}]}]}


@pytest.mark.parametrize(("depth", "cpu", "idle"), [
    # one slot, a 10 us submission and nothing else: before each of the ten buffers the node waits
    # for the worker's submission
    (1, dict(ZERO_CPU, submit=10 * US), 10 * 10 * US),
    # one slot, default costs: patch + submit before the first; then after each completion the ISR,
    # the DPC, the worker woken after the DPC's cost, and patch + submit again
    (1, None, PATCH + SUBMIT + 9 * (ISR + DPC + PATCH + SUBMIT)),
    # two slots: the next buffer is submitted while one runs; only the first submission is idle
    (2, dict(ZERO_CPU, submit=10 * US), 10 * US),
])
def test_idle_while_waiting_is_the_submission_path_between_packets(depth, cpu, idle):
    s = api.run(_batch(depth, cpu)).summary.as_dict()
    assert s["nodes"][0]["idle_while_waiting_ns"] == idle
    assert s["contexts"][0]["completed"] == 10


def test_idle_while_waiting_of_a_policy_that_waits():
    """priority_quantum hands the node between two backlogged contexts only when the hardware queue
    has drained of the previous one's packets; FIFO keeps it full."""
    quantum = api.run(_two("priority_quantum")).summary.as_dict()["nodes"][0]["idle_while_waiting_ns"]
    fifo = api.run(_two("fifo")).summary.as_dict()["nodes"][0]["idle_while_waiting_ns"]
    assert fifo == PATCH + SUBMIT  # the first submission only
    assert quantum > fifo


# ---------------------------------------------------------------------------------- everywhere
def test_hardware_scheduling_has_none_of_the_measures():
    s = api.run(ROOT / "examples" / "hardware_scheduling.toml", until="50ms").summary.as_dict()
    assert s["scheduling"] == "hardware" and s["policy"] == "priority_quantum"
    assert [n["idle_while_waiting_ns"] for n in s["nodes"]] == [None] * len(s["nodes"])
    for c in s["contexts"]:
        assert isinstance(c["weight"], float)
        assert [c[k] for k in RESEARCH[1:]] == [None] * (len(RESEARCH) - 1), c["context"]


def test_the_figures_are_columns_of_a_sweep_row_and_of_the_wide_tables():
    s = api.run(_frames()).summary.as_dict()
    row = flatten(s)
    assert row["contexts.0.deadline_misses"] == 10 and row["policy"] == "priority_quantum"
    assert row["nodes.0.idle_while_waiting_ns"] == s["nodes"][0]["idle_while_waiting_ns"]
    assert all(f"contexts.0.{k}" in row for k in RESEARCH)

    def labels(summary):
        tables = {t.title.split(" (")[0]: t for t in sections(summary) if isinstance(t, Table)}
        return ([c.label for c in tables["Nodes"].columns if c.wide],
                [c.label for c in tables["Contexts"].columns if c.wide],
                [c.label for c in tables["Contexts"].columns if not c.wide])

    nodes, wide, default = labels(s)
    assert "idle while waiting" in nodes
    assert {"weight", "share", "share target", "share error", "jobs", "deadline misses", "tardiness p50",
            "tardiness p99", "tardiness max", "preemptions", "preemption cost"} <= set(wide)
    assert default == ["context", "node", "submitted", "completed", "p50", "p99", "max"]
    # Without a deadline anywhere, no deadline column.
    _, wide, _ = labels(api.run(ROOT / "examples" / "deep_queue.toml").summary.as_dict())
    assert "deadline misses" not in wide and "jobs" not in wide and "share error" in wide


def test_the_typed_summary_carries_them():
    s = api.run(_frames())
    c = s.summary.context("rt.exe/c")
    assert (c.jobs, c.deadline_misses, c.tardiness_max_ns, c.weight) == (10, 10, 1_008_300, 1.0)
    assert s.summary.policy == "priority_quantum"
    assert s.summary.node("3D_0").idle_while_waiting_ns == 10 * (PATCH + SUBMIT)

