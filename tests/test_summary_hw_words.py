"""The summary's words for a newcomer (:mod:`wddmsim.output.summaryview`): the header's total is what
was *sent* on to the driver, the Contexts table's *submitted* what the applications handed to the
OS, and a line says so when the two differ; under hardware scheduling the engines' queue slots
with their maps and unmaps are shown, and a line says why the OS's view of GPU time is empty."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from wddmsim.output.summaryview import WIDTH, Lines, markdown, print_summary, sections
from wddmsim.runner.system import System
from wddmsim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def summary_of(example: str) -> dict:
    return System(load_scenario(str(ROOT / "examples" / f"{example}.toml"))).run().summary


def drawn(summary: dict) -> list[str]:
    con = Console(file=io.StringIO(), width=WIDTH, highlight=False, color_system=None)
    print_summary(con, summary)
    return con.file.getvalue().splitlines()


def block(lines: list[str], first: str) -> list[str]:
    """The line that starts with ``first`` and its indented continuation lines."""
    at = next(i for i, line in enumerate(lines) if line.startswith(first))
    out = [lines[at]]
    for line in lines[at + 1:]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


@pytest.fixture(scope="module")
def oversubscribed() -> dict:
    return summary_of("hw_queue_oversubscription")


def test_hardware_queue_slots_show_their_maps_and_unmaps(oversubscribed):
    engines = oversubscribed["wddm2"]["engines"]
    assert [(e["name"], e["hw_queue_slots"], e["queue_maps"], e["queue_unmaps"]) for e in engines] == [
        ("3D_0", 8, 107, 99), ("COPY_0", None, 0, 0)]
    lines = drawn(oversubscribed)
    assert block(lines, "Queue slots:") == [
        "Queue slots: 3D_0 8 slots, 107 maps, 99 unmaps (a hardware queue runs only while it holds one of its",
        "  engine's slots: the GPU's scheduler maps a queue with work into a free slot, or into the slot of",
        "  an idle queue it unmaps)"]
    # between the Engines table and the Contexts table
    at = {title: next(i for i, line in enumerate(lines) if line.startswith(title))
          for title in ("Engines (hardware scheduling)", "Queue slots:", "Contexts (latency")}
    assert at["Engines (hardware scheduling)"] < at["Queue slots:"] < at["Contexts (latency"]
    assert ("**Queue slots:** 3D_0 8 slots, 107 maps, 99 unmaps (a hardware queue runs only while it holds one of "
            "its engine's slots: the GPU's scheduler maps a queue with work into a free slot, or into the slot of "
            "an idle queue it unmaps)") in markdown(oversubscribed).splitlines()


def test_the_os_view_says_why_it_is_empty_under_hardware_scheduling(oversubscribed):
    assert {p["os_busy_ns"] for p in oversubscribed["processes"]} == {None}
    lines = drawn(oversubscribed)
    assert block(lines, "OS's view:") == [
        "OS's view: none under hardware scheduling: the driver hands the buffers to hardware queues and the",
        "  GPU's own scheduler decides what runs, so the OS sees no DMA packet start or end to time; the",
        "  GPU's account is the only one"]
    table = next(i for i, line in enumerate(lines) if line.startswith("GPU time per process"))
    # right under the table: its title, header, rule, one row per process, the blank line after it
    assert lines.index(block(lines, "OS's view:")[0]) == table + 3 + len(oversubscribed["processes"]) + 1


def test_the_header_and_the_contexts_use_two_words_for_two_counts(oversubscribed):
    lines = drawn(oversubscribed)
    assert lines[1] == "Buffers: 230 sent to hardware queues, 211 completed, the last at 99.56 ms"
    assert sum(c["submitted"] for c in oversubscribed["contexts"]) == 218
    assert block(lines, "submitted:") == [
        "submitted: the buffers the applications handed to the OS, 218 in all; the 230 buffers sent to",
        "  hardware queues above are those the driver took (DxgkDdiSubmitCommandToHwQueue), VidMm's own among",
        "  them; buffers the OS still holds are not counted there"]
    assert "Hardware queues: 13 queues, 230 buffers sent, 0 presents, 0 suspends, 0 resumes, 0 page faults" in lines
    game = summary_of("game_and_compute")
    lines = drawn(game)
    assert lines[1] == "DMA packets: 611 sent to the driver, 609 completed, the last at 498.2 ms"
    assert block(lines, "submitted:") == [
        "submitted: the packets the applications handed to the OS, 616 in all; the 611 DMA packets sent to",
        "  the driver above are those the OS passed on to it, VidMm's own and packets sent again among them;",
        "  packets still waiting in the OS's queues are not counted there"]
    assert "**submitted:** the packets the applications handed to the OS, 616 in all; " in markdown(game)


def test_no_note_when_the_counts_agree_and_no_slots_without_a_limit():
    deep = summary_of("deep_queue")
    assert deep["packets_submitted"] == sum(c["submitted"] for c in deep["contexts"]) == 100
    leads = {part.lead for part in sections(deep) if isinstance(part, Lines)}
    assert "submitted" not in leads and "OS's view" not in leads  # the OS's view is there in software
    hw = summary_of("hardware_scheduling")  # its engines have no slot limit: every queue stays mapped
    assert "Queue slots" not in {part.lead for part in sections(hw) if isinstance(part, Lines)}
