"""Flips taken back by a preemption, on a flip queue one deep (MaxQueuedFlipOnVSync = 1).

Two flipping contexts of one game share a 60 Hz source with a compute client on the 3D engine; the
game's above-normal priority preempts the compute buffers, and its flip packets, queued behind them
on the hardware queue, are taken back with them. Two things must hold (docs/guide.md, "Which flip a
vsync shows" and "A flip a preemption took back keeps its place"):

- a flip that was taken back goes back to the GPU: its own place among the source's pending flips
  does not count against it, or the source would wait for a vsync only that flip can bring and
  nothing would be displayed again;
- a waiting flip is shown at the vsync that latches it, though the packet's completion (the fence
  after the flip command) is reported after that vsync: every refresh shows a new frame.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from wddmsim.cli import main

V = 16_666_667  # one refresh at 60 Hz, ns

SCENARIO = '''name = "two_flippers"
seed = 24
duration = "1s"

[adapter]
displays = [60.0]
max_queued_flips = 1

[[process]]
name = "game"
priority = "above_normal"

[[process.context]]
name = "fast"
node = "3D"
workload = { kind = "frame_loop", fps = 100, work = "4ms", present_mode = "flip", sync_interval = 1 }

[[process.context]]
name = "slow"
node = "3D"
workload = { kind = "frame_loop", start = "500ms", fps = 50, work = "4ms", present_mode = "flip", sync_interval = 1 }

[[process]]
name = "trainer"

[[process.context]]
name = "compute"
node = "3D"
workload = { kind = "compute_batch", batch = 2, work = "2ms", interval = "3ms" }
'''


def test_preempted_flips_go_back_and_every_vsync_shows_a_frame(tmp_path):
    scenario, events = tmp_path / "two.toml", tmp_path / "two.jsonl"
    scenario.write_text(SCENARIO)
    r = CliRunner().invoke(main, ["run", str(scenario), "--json", "--events", str(events)])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    log = [json.loads(line) for line in events.read_text().splitlines()]

    taken_back = [e for e in log if e["event"] == "DmaPacketStop" and e["kind"] == "present"
                  and e["status"] == "Preempted"]
    # (52 before issue 26: the trainer, starved by the game, now preempts the node the instant it has
    # waited 20 ms, 24 times, instead of waiting for a free hardware-queue slot: 8 flips are taken
    # back by those, and the game's own preemptions find fewer flips queued behind the trainer.
    # 37 before issue 27: the reference driver declares FlipOnVSyncMmIo, so a flip's packet is an empty
    # submission that no longer stalls the engine until its vsync; the OS flips it with
    # DxgkDdiSetVidPnSourceAddress. Only 4 of those empty flip packets are still queued behind the
    # trainer when a preemption takes the node back.)
    assert len(taken_back) == 4
    # Each flip taken back is submitted again and completes.
    done = {(e["context"], e["seq"]) for e in log
            if e["event"] == "QueuePacketStop" and e["kind"] == "present" and e["status"] == "Completed"}
    late = [e for e in taken_back if e["t"] < 900_000_000]
    assert late and all((e["context"], e["seq"]) in done for e in late)

    # A new frame at every vsync from the first one: 59 in the second, one refresh apart.
    assert [e["t"] for e in log if e["event"] == "Displayed"] == [k * V for k in range(1, 60)]
    source = summary["displays"][0]
    # (65 presents before issue 27: with MMIO flips the game's last frame is not held behind a stalled
    # engine, so one more present is made before the end.)
    assert (source["presents"], source["displayed"], source["dropped"]) == (66, 59, 0)
    contexts = {c["context"]: (c["submitted"], c["completed"]) for c in summary["contexts"]}
    # (With MMIO flips the 3D engine no longer waits for each vsync on the game's flips: the trainer's
    # compute buffers get the time, 240 instead of 36; the game's two contexts share the flip queue's
    # one slot in the order they waited for it.)
    assert contexts == {"game/fast": (99, 93), "game/slow": (35, 29), "trainer/compute": (240, 240)}
