"""``wddmsim demo``: the built-in scenario, the first thing a new user runs.

Four processes share one adapter for 250 ms of virtual time: a game rendering at 120 frames a
second on the 3D node (three packets and a present per frame), a machine-learning job streaming
compute batches, a copy stream moving 256 KiB every 2 ms on the copy engine (the bytes really
move), and a bursty client that also uses the 3D node. The demo prints the run's summary, then
follows the game's first packet through the event log: rendered, queued, submitted with its
``DXGKARG_SUBMITCOMMAND``, started on the GPU, completed by the ISR's ``DMA_COMPLETED`` and retired
in the DPC. The summary is the one ``wddmsim run`` prints (:mod:`wddmsim.output.summaryview`). Its wall
time and real-time factor (virtual seconds per wall second, the event log kept in memory) go to
standard error. An ``--events`` file that cannot be opened is one line and exit status 2 before the
run; one that fails while it is written (a full disk) keeps its lines so far, and the demo prints
everything else, then ``wddmsim: error: PATH: cannot write: REASON``, exit status 2.
"""

from __future__ import annotations

import click
from rich.console import Console

SCENARIO = """
name = "demo"
description = "A game, a compute job, a copy stream and a bursty client sharing one GPU."
seed = 7
duration = "250ms"

[scheduler]
policy = "priority_quantum"
quantum = "2ms"

[[process]]
name = "game.exe"
priority = "above_normal"
[[process.context]]
name = "render"
node = "3D"
workload = { kind = "frame_loop", fps = 120, packets_per_frame = 3, work = "1500us", jitter = 0.2 }

[[process]]
name = "trainer.exe"
[[process.context]]
name = "compute"
node = "Compute"
workload = { kind = "compute_batch", batch = 8, work = "700us", interval = "1ms" }

[[process]]
name = "backup.exe"
priority = "below_normal"
[[process.context]]
name = "copy"
node = "Copy"
workload = { kind = "copy_stream", size = "256KiB", interval = "2ms" }

[[process]]
name = "browser.exe"
[[process.context]]
name = "raster"
node = "3D"
workload = { kind = "bursty", burst = 4, work = "300us", mean_gap = "8ms" }
"""

_TRIP = ("DdiCall", "QueuePacketStart", "DmaPacketQueued", "DmaPacketStart", "Callback", "DmaPacketStop", "QueuePacketStop")


def _trip(events: list[dict]) -> list[tuple[int, str, str]]:
    """The first packet of the first context, event by event."""
    ctx = next(e["context"] for e in events if e["event"] == "ContextCreate")
    hctx = next(e["hContext"] for e in events if e["event"] == "ContextCreate")
    fence = None
    rows = []
    for e in events:
        name = e["event"]
        if name == "QueuePacketStart" and e["context"] == ctx and e["seq"] == 1:
            rows.append((e["t"], name, f"context {e['context']:#x} packet 1 enters the software queue"))
        elif name == "DdiCall" and e["name"] == "DxgkDdiRender" and not rows:
            rows.append((e["t"], "DxgkDdiRender", f"{e['args']['CommandLength']} bytes of commands -> DMA buffer at {e['args']['pDmaBuffer'] - e['args']['CommandLength']:#x}"))
        elif name == "DdiCall" and e["name"] == "DxgkDdiSubmitCommand" and fence is None and e["args"]["hContext"] == hctx:
            a = e["args"]
            fence = a["SubmissionFenceId"]
            rows.append((e["t"], "DxgkDdiSubmitCommand", f"hContext {a['hContext']:#x} node {a['NodeOrdinal']} fence {fence} "
                         f"range {a['DmaBufferSubmissionStartOffset']}..{a['DmaBufferSubmissionEndOffset']} -> {e['status']}"))
        elif fence is not None and name in ("DmaPacketStart", "DmaPacketStop", "QueuePacketStop") and e.get("fence") == fence and e["node"] == 0:
            rows.append((e["t"], name, f"fence {fence} on node 0"))
        elif fence is not None and name == "Callback" and e["name"] == "DxgkCbNotifyInterrupt":
            dc = e["args"].get("DmaCompleted", {})
            if dc.get("NodeOrdinal") == 0 and dc.get("SubmissionFenceId") == fence:
                rows.append((e["t"], "DxgkCbNotifyInterrupt", f"{e['args']['InterruptType']} fence {fence} (ISR, DIRQL)"))
        if rows and rows[-1][1] == "QueuePacketStop":
            break
    return rows


def run_demo(con: Console, events_path: str | None = None, wide: bool = False) -> int:
    """Run the built-in scenario, print the summary (every column with ``wide``) and one packet's
    trip; return the exit status."""
    from ..runner.stop import RunStop, interrupts

    stop = RunStop()
    with interrupts(stop):
        return _run_demo(con, stop, events_path, wide)


def _run_demo(con: Console, stop, events_path: str | None, wide: bool) -> int:
    """:func:`run_demo`'s work, with the signal handlers of ``stop`` in place: a signal stops the
    run where it is, the summary covers what ran, exit status 130."""
    from .util import UserError, with_failures
    from ..runner.cost import timing_line
    from ..runner.stop import exit_status, stop_line
    from ..scenario import parse_scenario
    from ..output.summaryview import print_summary, print_table
    from ..runner.system import System
    from ..trace import JsonlSink, ListSink, TeeSink
    from ..trace.output import WriteFailed, reason

    scenario = parse_scenario(SCENARIO, "<built-in demo>")
    memory = ListSink()
    sink = memory
    jsonl = None
    failed: list[str] = []
    if events_path:
        try:
            jsonl = JsonlSink(events_path)
        except OSError as e:
            raise UserError(f"{events_path}: cannot write: {reason(e)}") from None
        sink = TeeSink(memory, jsonl)
    try:
        result = System(scenario, trace=sink).run(stop=stop)
    finally:
        if jsonl is not None:
            try:
                jsonl.close()
            except WriteFailed as e:
                failed.append(str(e))
    stop.outputs = True
    con.print(scenario.description)
    print_summary(con, result.summary, wide=wide)
    print_table(con, "The game's first packet, from the event log", ["t", "event", "what happened"],
                [[f"{t / 1e6:.3f} ms", name, text] for t, name, text in _trip(memory.events)], right=[True, False, False])
    con.print("Next: uv run wddmsim run examples/<name>.toml --events out/log.jsonl  (see examples/README.md)")
    line = stop_line(stop, result.end)
    if line:
        click.echo(line, err=True)
    click.echo(timing_line(result.end, result.wall_s), err=True)
    return with_failures(exit_status(stop, 3 if result.bugcheck is not None else 0), failed)
