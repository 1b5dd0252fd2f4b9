"""The OS never has more DMA packets on a node's hardware queue than the queue's depth: the node's
one worker thread patches and submits one packet at a time, and a wake-up that comes while it is
busy does not start a second one (the summary's ``max_queued`` and every ``DmaPacketQueued``
``depth``)."""

from pathlib import Path

import pytest

from wddmsim.cli.util import build_system, load_scenario_file
from wddmsim.trace import ListSink

EXAMPLES = sorted(Path(__file__).resolve().parent.parent.glob("examples/*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_no_node_holds_more_packets_than_its_depth(path):
    sink = ListSink()
    result = build_system(load_scenario_file(str(path), ()), trace=sink, verifier="strict").run()
    for node in result.summary["nodes"]:
        assert node["max_queued"] <= node["hw_queue_depth"], node
    depths = {n["node"]: n["hw_queue_depth"] for n in result.summary["nodes"]}
    assert all(e["depth"] <= depths[e["node"]] for e in sink.of("DmaPacketQueued"))


def test_paging_submissions_wait_for_the_worker():
    """examples/paging.toml: VidMm queues paging buffers while the Copy node's worker is submitting
    one; each next one is submitted a submission's cost (3 us) later, never at once past the
    depth of 2."""
    sink = ListSink()
    result = build_system(load_scenario_file("examples/paging.toml", ()), trace=sink, verifier="strict").run()
    copy = result.summary["nodes"][1]
    assert (copy["name"], copy["hw_queue_depth"], copy["max_queued"]) == ("COPY_0", 2, 2)
    fence7 = next(e for e in sink.of("DmaPacketQueued") if e["node"] == 1 and e["fence"] == 7)
    assert (fence7["t"], fence7["kind"], fence7["seq"], fence7["depth"]) == (4_021_000, "paging", 4, 2)
