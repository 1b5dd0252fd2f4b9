"""The report's ``summary.md`` embeds the figures the report wrote (:mod:`wddmsim.output.report`): a
``Figures`` section at its end, per PNG a heading, one line saying what it shows and a Markdown
image linked by its path relative to the folder; a PNG that could not be written is not linked,
and the files written and failed keep the report's order."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wddmsim.output.report import figures_markdown, write_report
from wddmsim.output.summaryview import markdown
from wddmsim.runner.system import System
from wddmsim.scenario import load_scenario
from wddmsim.trace import ListSink
from wddmsim.trace.output import WriteFailed

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def events() -> list[dict]:
    """deep_queue for 10 ms: nothing presents, so three figures (no frame times)."""
    trace = ListSink()
    System(load_scenario(str(ROOT / "examples" / "deep_queue.toml")), trace=trace).run(until=10_000_000)
    return trace.events


def test_the_figures_section_names_describes_and_links_each_png():
    assert figures_markdown(["node_utilisation.png", "queue_depths.png"]) == (
        "## Figures\n"
        "\n"
        "### Node utilisation\n"
        "\n"
        "Each node's busy share of each time bucket: DMA packets running (the OS's view), or under hardware "
        "scheduling its hardware contexts' turns on the engine.\n"
        "\n"
        "![Node utilisation](node_utilisation.png)\n"
        "\n"
        "### Hardware queue depth\n"
        "\n"
        "Each node's packets held, per time bucket (the mean filled, the most at once dotted), and the share of "
        "the run it spent at each depth.\n"
        "\n"
        "![Hardware queue depth](queue_depths.png)\n")
    assert figures_markdown([]) == ""


def test_summary_md_embeds_every_png_the_report_wrote(events, tmp_path):
    written = write_report(events, str(tmp_path))
    names = [Path(p).name for p in written]
    assert names == ["summary.json", "summary.md", "node_utilisation.png", "context_latency.png",
                     "queue_depths.png"]
    md = (tmp_path / "summary.md").read_text()
    summary_part, figures = md.split("\n## Figures\n")
    assert summary_part == markdown(json.loads((tmp_path / "summary.json").read_text()))
    links = re.findall(r"^!\[([^]]+)]\(([^)]+)\)$", md, re.MULTILINE)
    assert links == [("Node utilisation", "node_utilisation.png"),
                     ("Packet latency per context", "context_latency.png"),
                     ("Hardware queue depth", "queue_depths.png")]
    assert all((tmp_path / target).is_file() for _, target in links)  # relative to the folder
    assert re.findall(r"^### (.+)$", figures, re.MULTILINE) == [
        "Node utilisation", "Packet latency per context", "Hardware queue depth"]
    assert md.endswith("![Hardware queue depth](queue_depths.png)\n")


def test_a_png_that_cannot_be_written_is_not_linked_and_the_order_stays(events, tmp_path):
    (tmp_path / "context_latency.png").mkdir()
    (tmp_path / "summary.json").mkdir()
    with pytest.raises(WriteFailed) as info:
        write_report(events, str(tmp_path))
    assert str(info.value) == (f"{tmp_path}: cannot write 2 of the report's 5 files (summary.json, "
                               f"context_latency.png): Is a directory")
    md = (tmp_path / "summary.md").read_text()
    assert re.findall(r"^!\[[^]]+]\(([^)]+)\)$", md, re.MULTILINE) == ["node_utilisation.png", "queue_depths.png"]
    assert "Packet latency per context" not in md


def test_a_log_cut_short_still_links_its_figures(events, tmp_path):
    write_report(events[:-1], str(tmp_path))
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("> **Partial run:**")
    assert "The run summary is missing" in md and "![Node utilisation](node_utilisation.png)\n" in md
