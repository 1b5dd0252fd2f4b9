"""Scenario files: unit parsing, defaults, every kind of error message and a full example.

Messages are compared exactly, since they are what a person editing a scenario reads."""

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from wddmsim.scenario import (
    Scenario,
    ScenarioError,
    format_duration,
    load_scenario,
    parse_duration,
    parse_scenario,
    parse_size,
)
from wddmsim.scenario.loader import scenario_from_dict
from wddmsim.scenario.schema import (
    Bursty,
    ComputeBatch,
    Context,
    CopyStream,
    FrameLoop,
    Node,
    ProcessTable,
    Script,
    ScriptPacket,
    Segment,
    WORKLOAD_KINDS,
    field_path,
)
from wddmsim.util.units import format_size

DOCS = Path(__file__).parents[1] / "docs" / "scenarios.md"

# The smallest valid scenario; tests append to it or replace pieces of it.
MINIMAL = """
[[process]]
name = "game"

[[process.context]]
name = "main"
node = "3D"
workload = { kind = "frame_loop", fps = 60, work = "4ms" }
"""

KINDS = "'frame_loop', 'swap_chain', 'compute_batch', 'copy_stream', 'memory_pressure', 'bursty', 'script', 'chain'"


def problems(text: str, source: str = "s.toml") -> list[str]:
    """The problem lines parsing ``text`` reports (the test fails when it parses)."""
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(text, source)
    assert caught.value.path == source
    assert str(caught.value) == "\n".join(caught.value.problems)
    return caught.value.problems


def with_context(*contexts: str, adapter: str = "") -> str:
    """A scenario with one process holding the given [[process.context]] bodies."""
    out = adapter + '\n[[process]]\nname = "p"\n'
    for body in contexts:
        out += f"\n[[process.context]]\n{body}\n"
    return out


def workload(inline: str) -> str:
    return with_context(f'name = "c"\nnode = "3D"\nworkload = {{ {inline} }}')


# ----------------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        (0, 0),
        (16_000, 16_000),
        ("250ns", 250),
        ("1.5us", 1_500),
        ("1.5µs", 1_500),  # MICRO SIGN
        ("1.5\u03bcs", 1_500),  # GREEK SMALL LETTER MU
        ("2ms", 2_000_000),
        ("3s", 3_000_000_000),
        (" 2 ms ", 2_000_000),
        ("0.1ms", 100_000),
        (".5s", 500_000_000),
        ("2.s", 2_000_000_000),
        ("0ns", 0),
    ],
)
def test_parse_duration_forms(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("fast", "expected a duration such as '2ms' or '250us', got 'fast'"),
        ("", "expected a duration such as '2ms' or '250us', got ''"),
        ("2 m s", "expected a duration such as '2ms' or '250us', got '2 m s'"),
        ("1.5ns", "'1.5ns' is not a whole number of nanoseconds"),
        ("-2ms", "a duration cannot be negative, got '-2ms'"),
        (-1, "a duration cannot be negative, got -1"),
        ("250", "expected a duration such as '2ms' or '250us', got '250' "
                "(a duration written as a string needs a unit: ns, us, µs, ms or s)"),
        ("3h", "expected a duration such as '2ms' or '250us', got '3h' "
               "(unknown unit 'h'; use ns, us, µs, ms or s)"),
        ("2MS", "expected a duration such as '2ms' or '250us', got '2MS' "
                "(unknown unit 'MS'; use ns, us, µs, ms or s)"),
        (2.5, "expected a duration such as '2ms' or '250us', got the bare number 2.5 "
              "(a bare number must be a whole number of nanoseconds; write a unit for fractions)"),
        (True, "expected a duration such as '2ms' or '250us', got True"),
        ([1], "expected a duration such as '2ms' or '250us', got [1]"),
    ],
)
def test_parse_duration_errors(value, message):
    with pytest.raises(ValueError) as caught:
        parse_duration(value)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (4096, 4096),
        (0, 0),
        ("4096", 4096),
        ("512B", 512),
        ("64KiB", 65_536),
        ("256MiB", 268_435_456),
        ("1GiB", 1_073_741_824),
        ("1TiB", 1 << 40),
        ("1KB", 1_000),
        ("2MB", 2_000_000),
        ("1GB", 1_000_000_000),
        ("1TB", 10**12),
        ("1.5KiB", 1_536),
        (" 64 KiB ", 65_536),
    ],
)
def test_parse_size_forms(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("big", "expected a size such as '64KiB' or '4096', got 'big'"),
        ("0.5B", "'0.5B' is not a whole number of bytes"),
        ("0.1KiB", "'0.1KiB' is not a whole number of bytes"),
        ("-4KiB", "a size cannot be negative, got '-4KiB'"),
        (-1, "a size cannot be negative, got -1"),
        ("64kib", "expected a size such as '64KiB' or '4096', got '64kib' "
                  "(unknown unit 'kib'; use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"),
        (1.5, "expected a size such as '64KiB' or '4096', got the bare number 1.5 "
              "(a bare number must be a whole number of bytes; write a unit for fractions)"),
        (False, "expected a size such as '64KiB' or '4096', got False"),
    ],
)
def test_parse_size_errors(value, message):
    with pytest.raises(ValueError) as caught:
        parse_size(value)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0ns"),
        (1, "1ns"),
        (250, "250ns"),
        (1_000, "1us"),
        (1_500, "1.5us"),
        (100_000, "100us"),
        (2_000_000, "2ms"),
        (1_000_001, "1000001ns"),
        (1_000_500, "1.0005ms"),  # as short as "1000.5us"; the larger unit wins the tie
        (1_500_000_000, "1.5s"),
        (60_000_000_000, "60s"),
        (16_666_667, "16666667ns"),
    ],
)
def test_format_duration(ns, text):
    assert format_duration(ns) == text
    assert parse_duration(text) == ns


def test_format_duration_rejects_bad_input():
    with pytest.raises(ValueError, match="cannot be negative, got -5"):
        format_duration(-5)
    with pytest.raises(ValueError, match="must be an int, got 1.5"):
        format_duration(1.5)


def test_format_size():
    assert [format_size(n) for n in (0, 512, 4096, 65_536, 4097, 3 << 30)] == [
        "0B", "512B", "4KiB", "64KiB", "4097B", "3GiB"
    ]


# -------------------------------------------------------------------------------- defaults


def test_defaults_of_a_minimal_file():
    s = parse_scenario(MINIMAL)
    assert (s.name, s.description, s.seed, s.duration) == ("", "", 0, 1_000_000_000)
    a = s.adapter
    assert a.hw_queue_depth == 2
    assert (s.driver.class_, s.driver.settings) == (None, {})  # the reference driver, its defaults
    assert a.cpu_cost.model_dump() == {
        "render": 5_000, "patch": 1_000, "submit": 2_000, "isr": 1_000, "dpc": 2_000,
        "present": 5_000,
    }
    assert a.nodes == [
        Node(name="3D", engine="3d"),
        Node(name="Compute", engine="compute"),
        Node(name="Copy", engine="copy"),
    ]
    node = a.nodes[0]
    assert (node.hw_queue_depth, node.copy_bandwidth, node.command_cost) == (None, 16.0, 100)
    assert a.segments == [
        Segment(name="VRAM", kind="memory", size=256 << 20, cpu_visible=False),
        Segment(name="Aperture", kind="aperture", size=64 << 20, cpu_visible=True),
    ]
    assert (s.scheduler.policy, s.scheduler.quantum) == ("priority_quantum", 2_000_000)
    process = s.process[0]
    assert (process.name, process.priority) == ("game", "normal")
    context = process.context[0]
    assert (context.name, context.device, context.node, context.priority) == ("main", 0, "3D", 0)
    assert context.workload == FrameLoop(
        fps=60.0, packets_per_frame=1, work=4_000_000, jitter=0.0, present=True,
        max_frame_latency=3, start=0, count=None,
    )


def test_workload_defaults():
    s = parse_scenario(with_context(
        'name = "a"\nnode = "Compute"\nworkload = { kind = "compute_batch", work = "1us" }',
        'name = "b"\nnode = "Copy"\nworkload = { kind = "copy_stream", size = "1MiB" }',
        'name = "c"\nnode = "3D"\nworkload = { kind = "bursty", work = "1us", mean_gap = "1ms" }',
        'name = "d"\nnode = "3D"\nworkload = { kind = "script", packets = [{ at = 0, work = 5 }] }',
    ))
    assert [c.workload for c in s.process[0].context] == [
        ComputeBatch(batch=8, work=1_000, interval=0, start=0, count=None),
        CopyStream(size=1 << 20, interval=1_000_000, start=0, count=None),
        Bursty(burst=4, work=1_000, mean_gap=1_000_000, start=0, count=None),
        Script(packets=[ScriptPacket(at=0, work=5, repeat=1)], start=0, count=None),
    ]


def test_models_built_in_python_match_the_file():
    s = Scenario(process=[ProcessTable(name="game", context=[
        Context(name="main", node="3D", workload=FrameLoop(fps=60, work="4ms")),
    ])])
    assert s == parse_scenario(MINIMAL)
    assert Scenario.model_validate(s.model_dump()) == s


def test_python_construction_runs_the_cross_field_checks():
    with pytest.raises(ValidationError, match="no node named 'GPU'"):
        Scenario(process=[ProcessTable(name="p", context=[
            Context(name="c", node="GPU", workload=CopyStream(size="4KiB")),
        ])])


def test_workload_kinds():
    assert WORKLOAD_KINDS == ("frame_loop", "swap_chain", "compute_batch", "copy_stream", "memory_pressure", "bursty", "script", "chain")


def test_field_path_spelling():
    assert field_path(("process", 0, "context", 2, "workload", "frame_loop", "fps")) == (
        "process[0].context[2].workload.fps"
    )
    assert field_path(("adapter", "nodes", 1, "engine")) == "adapter.nodes[1].engine"
    assert field_path(()) == ""


# ------------------------------------------------------------------------------ field errors


def test_missing_process_table():
    assert problems("") == ["s.toml: process: required field missing"]


def test_every_field_error_is_reported_at_once():
    text = """
seed = "5"
duration = "fast"

[adapter]
ddi_version = "wddm9"
hw_queue_depth = 0

[adapter.cpu_cost]
isr = "-1us"
dpc = "1.5ns"

[[adapter.nodes]]
name = "3D"
engine = "gpu"
hw_queue_depth = 65

[[adapter.nodes]]
name = ""
engine = "copy"
copy_bandwidth = nan
command_cost = 1.5

[[adapter.segments]]
name = "VRAM"
kind = "rom"
size = 4097

[scheduler]
policy = "lottery"
quantum = 0

[[process]]
name = "game"
priority = "urgent"

[[process.context]]
name = "main"
node = 3
device = -1
priority = 8
workload = { kind = "frame_loop", fps = 2000, work = "4ms", jitter = 1.0, packets_per_frame = 0, max_frame_latency = 17, present = "yes" }
"""
    assert problems(text) == [
        "s.toml: seed: expected an integer, got '5'",
        "s.toml: duration: expected a duration such as '2ms' or '250us', got 'fast'",
        "s.toml: adapter.hw_queue_depth: must be at least 1, got 0 (range: 1 .. 64; the model's limit on a hardware queue (VidSch's queue of submitted packets))",
        "s.toml: adapter.cpu_cost.isr: a duration cannot be negative, got '-1us'",
        "s.toml: adapter.cpu_cost.dpc: '1.5ns' is not a whole number of nanoseconds",
        "s.toml: adapter.nodes[0].engine: must be one of '3d', 'compute', 'copy', 'video_decode', "
        "'video_encode', 'video_processing' or 'other', got 'gpu'",
        "s.toml: adapter.nodes[0].hw_queue_depth: must be at most 64, got 65 (range: 1 .. 64; the model's limit on a hardware queue (VidSch's queue of submitted packets))",
        "s.toml: adapter.nodes[1].name: must not be empty",
        "s.toml: adapter.nodes[1].copy_bandwidth: must be a finite number, got nan",
        "s.toml: adapter.nodes[1].command_cost: expected a duration such as '2ms' or '250us', "
        "got the bare number 1.5 (a bare number must be a whole number of nanoseconds; "
        "write a unit for fractions)",
        "s.toml: adapter.segments[0].kind: must be one of 'memory' or 'aperture', got 'rom'",
        "s.toml: adapter.segments[0].size: must be a positive multiple of 4096 bytes, got 4097",
        "s.toml: adapter.ddi_version: the driver's setting now, not the adapter's: write it in the [driver] "
        "table as ddi_version (the OS learns it from the driver's DXGK_DRIVERCAPS and node metadata)",
        "s.toml: scheduler.policy: unknown scheduling policy 'lottery'; the shipped ones are windows, "
        "priority_quantum, strict_priority, fifo, round_robin, priority, fair, edf, llf, partition, mlfq, or name "
        "a class as 'path/to/file.py:Class'",
        "s.toml: scheduler.quantum: must be greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of virtual time))",
        "s.toml: process[0].priority: must be one of 'idle', 'below_normal', 'normal', "
        "'above_normal', 'high' or 'realtime', got 'urgent'",
        "s.toml: process[0].context[0].device: must be at least 0, got -1 (range: 0 .. 63; the model's limit on one process's devices)",
        "s.toml: process[0].context[0].node: expected a string, got 3",
        "s.toml: process[0].context[0].priority: must be at most 7, got 8 (range: -7 .. 7; what D3DKMTSetContextSchedulingPriority accepts)",
        "s.toml: process[0].context[0].workload.fps: must be at most 1000, got 2000 (range: above 0 .. 1000; frames per second; no display and no frame limiter goes past 1000)",
        "s.toml: process[0].context[0].workload.packets_per_frame: must be at least 1, got 0 (range: 1 .. 1000; the model's limit on one frame's packets)",
        "s.toml: process[0].context[0].workload.jitter: must be less than 1, got 1.0 (range: 0 .. below 1; a relative variation: 0 (none) up to, not including, 1 (work never goes to 0))",
        "s.toml: process[0].context[0].workload.present: expected true or false, got 'yes'",
        "s.toml: process[0].context[0].workload.max_frame_latency: must be at most 16, got 17 (range: 1 .. 16; what DXGI's SetMaximumFrameLatency accepts)",
    ]


def test_missing_fields_and_empty_lists():
    text = """
duration = "0s"

[adapter]
nodes = []

[[process]]
priority = "high"
context = []

[[process]]
name = "p"

[[process.context]]
name = "c"
workload = { kind = "bursty" }
"""
    assert problems(text) == [
        "s.toml: duration: must be greater than 0, got 0 (range: above 0 .. 3600s; an event log of a busy run grows about 3 MB per virtual second, so an hour is already gigabytes of log)",
        "s.toml: adapter.nodes: needs at least 1 entry, got none (range: 1 .. 64; engines an adapter reports as nodes: the model's limit)",
        "s.toml: process[0].name: required field missing",
        "s.toml: process[0].context: needs at least 1 entry, got none (range: 1 .. 64; the model's limit on one process's GPU contexts)",
        "s.toml: process[1].context[0].node: required field missing",
        "s.toml: process[1].context[0].workload.work: required field missing",
        "s.toml: process[1].context[0].workload.mean_gap: required field missing",
    ]


def test_wrong_container_types():
    text = """
adapter = 5
scheduler = "fifo"

[process]
name = "p"
"""
    assert problems(text) == [
        "s.toml: adapter: expected a table, got 5",
        "s.toml: scheduler: expected a table, got 'fifo'",
        "s.toml: process: expected an array (or [[...]] tables), got a table",
    ]


def test_too_many_nodes():
    nodes = "".join(
        f'\n[[adapter.nodes]]\nname = "n{i}"\nengine = "{"3d" if i == 0 else "other"}"\n'
        for i in range(65)
    )
    assert problems(nodes + MINIMAL) == ["s.toml: adapter.nodes: allows at most 64 entries, got 65 (range: 1 .. 64; engines an adapter reports as nodes: the model's limit)"]


def test_dates_are_described_as_dates():
    assert problems("duration = 2024-01-02\n" + MINIMAL) == [
        "s.toml: duration: expected a duration such as '2ms' or '250us', "
        "got datetime.date(2024, 1, 2)",
    ]
    assert problems('description = 2024-01-02\n' + MINIMAL) == [
        "s.toml: description: expected a string, got the date/time 2024-01-02",
    ]


# ------------------------------------------------------------------------------ unknown keys


def test_unknown_keys_at_every_depth():
    text = """
titel = "x"

[adapter]
nodez = 3

[adapter.cpu_cost]
irq = "1us"

[[adapter.nodes]]
name = "3D"
engine = "3d"
queue = 2

[[adapter.segments]]
name = "VRAM"
kind = "memory"
size = "1MiB"
visible = true

[[adapter.segments]]
name = "GART"
kind = "aperture"
size = "1MiB"

[scheduler]
timeslice = "1ms"

[[process]]
name = "p"
nice = 1

[[process.context]]
name = "c"
node = "3D"
engine = "3d"
workload = { kind = "script", packets = [{ at = 0, work = 1, when = 2 }], fps = 3 }
"""
    assert problems(text) == [
        "s.toml: adapter.cpu_cost.irq: unknown field; did you mean 'isr'?",
        "s.toml: adapter.nodes[0].queue: unknown field",
        "s.toml: adapter.segments[0].visible: unknown field; did you mean 'cpu_visible'?",
        "s.toml: adapter.nodez: unknown field; did you mean 'nodes'?",
        "s.toml: scheduler.timeslice: unknown field",
        "s.toml: process[0].context[0].workload.packets[0].when: unknown field",
        "s.toml: process[0].context[0].workload.fps: unknown field",
        "s.toml: process[0].context[0].engine: unknown field",
        "s.toml: process[0].nice: unknown field",
        "s.toml: titel: unknown field",
    ]


# --------------------------------------------------------------------------------- workloads


def test_unknown_workload_kind_lists_the_kinds():
    assert problems(workload('kind = "frame_loops", fps = 60')) == [
        f"s.toml: process[0].context[0].workload.kind: unknown workload kind 'frame_loops'; "
        f"the workload kinds are {KINDS}",
    ]


def test_non_string_workload_kind():
    assert problems(workload("kind = 3")) == [
        f"s.toml: process[0].context[0].workload.kind: unknown workload kind 3; "
        f"the workload kinds are {KINDS}",
    ]


def test_missing_workload_kind_lists_the_kinds():
    assert problems(workload('fps = 60, work = "1ms"')) == [
        f"s.toml: process[0].context[0].workload.kind: required field missing; "
        f"the workload kinds are {KINDS}",
    ]


def test_workload_that_is_not_a_table():
    text = with_context('name = "c"\nnode = "3D"\nworkload = "frame_loop"')
    assert problems(text) == ["s.toml: process[0].context[0].workload: expected a table, got 'frame_loop'"]


def test_missing_workload():
    assert problems(with_context('name = "c"\nnode = "3D"')) == [
        "s.toml: process[0].context[0].workload: required field missing",
    ]


def test_workload_field_paths_leave_out_the_kind_tag():
    text = with_context(
        'name = "a"\nnode = "3D"\nworkload = { kind = "compute_batch", work = "1us", batch = 0 }',
        'name = "b"\nnode = "3D"\nworkload = { kind = "copy_stream", size = "65MiB" }',
        'name = "c"\nnode = "3D"\nworkload = { kind = "copy_stream", size = 0, interval = "x" }',
        'name = "d"\nnode = "3D"\nworkload = { kind = "bursty", work = "1us", mean_gap = 0, burst = 0 }',
        'name = "e"\nnode = "3D"\nworkload = { kind = "frame_loop", fps = 0, work = "1ms", count = 0 }',
        'name = "f"\nnode = "3D"\nworkload = { kind = "frame_loop", fps = inf, work = "1ms", start = -1 }',
    )
    assert problems(text) == [
        "s.toml: process[0].context[0].workload.batch: must be at least 1, got 0 (range: 1 .. 100,000; the model's limit on one flush)",
        "s.toml: process[0].context[1].workload.size: must be at most 64MiB, got 65MiB (range: 1B .. 64MiB; the "
        "bytes of one fill or copy command, the largest the model builds)",
        "s.toml: process[0].context[2].workload.size: must be at least 1B, got 0 (range: 1B .. 64MiB; the bytes of "
        "one fill or copy command, the largest the model builds)",
        "s.toml: process[0].context[2].workload.interval: expected a duration such as '2ms' or "
        "'250us', got 'x'",
        "s.toml: process[0].context[3].workload.burst: must be at least 1, got 0 (range: 1 .. 100,000; the model's limit on one burst)",
        "s.toml: process[0].context[3].workload.mean_gap: must be greater than 0, got 0 (range: above 0 .. 3600s; a span that must last, within the longest run (1 hour of virtual time))",
        "s.toml: process[0].context[4].workload.count: must be at least 1, got 0 (range: 1 .. 1,000,000,000; a count that high is never reached within a run: leave it out to run until the end)",
        "s.toml: process[0].context[4].workload.fps: must be greater than 0, got 0 (range: above 0 .. 1000; frames per second; no display and no frame limiter goes past 1000)",
        "s.toml: process[0].context[5].workload.start: a duration cannot be negative, got -1",
        "s.toml: process[0].context[5].workload.fps: must be a finite number, got inf",
    ]


def test_script_workload_errors():
    text = with_context(
        'name = "a"\nnode = "3D"\nworkload = { kind = "script", count = 2, packets = [{ at = 0, work = 1 }] }',
        'name = "b"\nnode = "3D"\nworkload = { kind = "script", packets = [] }',
        'name = "c"\nnode = "3D"\n'
        'workload = { kind = "script", packets = [{ at = "1ms", work = 1 }, { work = 1, repeat = 0 }] }',
    )
    assert problems(text) == [
        "s.toml: process[0].context[0].workload.count: a script workload takes no count; "
        "its packets list is the whole of it",
        "s.toml: process[0].context[1].workload.packets: needs at least 1 entry, got none (range: 1 .. 100,000; the model's limit on one script's hand-placed submissions)",
        "s.toml: process[0].context[2].workload.packets[1].at: required field missing",
        "s.toml: process[0].context[2].workload.packets[1].repeat: must be at least 1, got 0 (range: at least 1; packets at that moment: above 1,000,000 it is cut to the submissions the run has time for, or refused when more than that fit)",
    ]


# ------------------------------------------------------------------------ cross-field errors


def test_adapter_cross_field_errors_all_at_once():
    text = """
[[adapter.nodes]]
name = "3D"
engine = "3d"

[[adapter.nodes]]
name = "Second"
engine = "3d"

[[adapter.nodes]]
name = "3D"
engine = "copy"

[[adapter.segments]]
name = "VRAM"
kind = "memory"
size = "1MiB"

[[adapter.segments]]
name = "VRAM"
kind = "memory"
size = "1MiB"
""" + MINIMAL
    assert problems(text) == [
        "s.toml: adapter.nodes[1].engine: a second node with engine '3d' (nodes[0] is one "
        "already); an adapter has exactly one",
        "s.toml: adapter.nodes[2].name: duplicate node name '3D' (nodes[0] has it)",
        "s.toml: adapter.segments[1].name: duplicate segment name 'VRAM' (segments[0] has it)",
        "s.toml: adapter.segments: an adapter needs at least one segment of kind 'aperture'",
    ]


def test_adapter_without_3d_node_or_memory_segment():
    text = """
[adapter]
nodes = [{ name = "Copy", engine = "copy" }]
segments = [{ name = "GART", kind = "aperture", size = "1MiB" }]
""" + with_context('name = "c"\nnode = "Copy"\nworkload = { kind = "copy_stream", size = 4096 }')
    assert problems(text) == [
        "s.toml: adapter.nodes: an adapter needs exactly one node with engine '3d', found none",
        "s.toml: adapter.segments: an adapter needs at least one segment of kind 'memory'",
    ]


def test_node_names_are_case_sensitive():
    text = """
[adapter]
nodes = [{ name = "3D", engine = "3d" }, { name = "3d", engine = "copy" }]
""" + MINIMAL
    assert [n.name for n in parse_scenario(text).adapter.nodes] == ["3D", "3d"]


def test_adapter_errors_come_with_other_field_errors():
    text = """
seed = -1

[adapter]
nodes = [{ name = "A", engine = "3d" }, { name = "A", engine = "copy" }]
""" + MINIMAL
    assert problems(text) == [
        "s.toml: seed: must be at least 0, got -1 (range: 0 .. 2**64-1; a seed is a 64-bit unsigned number)",
        "s.toml: adapter.nodes[1].name: duplicate node name 'A' (nodes[0] has it)",
    ]


def test_context_on_unknown_node():
    text = with_context('name = "c"\nnode = "GPU"\nworkload = { kind = "frame_loop", fps = 60, work = 1 }')
    assert problems(text) == [
        "s.toml: process[0].context[0].node: no node named 'GPU'; the adapter's nodes are "
        "'3D', 'Compute', 'Copy'",
    ]


def test_duplicate_process_names():
    assert problems(MINIMAL + MINIMAL) == [
        "s.toml: process[1].name: duplicate process name 'game' (process[0] has it)",
    ]


def test_duplicate_context_names_within_a_process_only():
    body = 'name = "c"\nnode = "3D"\nworkload = { kind = "frame_loop", fps = 60, work = 1 }'
    assert problems(with_context(body, body)) == [
        "s.toml: process[0].context[1].name: duplicate context name 'c' in process 'p' "
        "(process[0].context[0] has it)",
    ]
    two_processes = with_context(body) + with_context(body).replace('name = "p"', 'name = "q"')
    assert [p.context[0].name for p in parse_scenario(two_processes).process] == ["c", "c"]


def test_scenario_cross_field_errors_all_at_once():
    text = """
[adapter]
nodes = [{ name = "3D", engine = "3d" }, { name = "Copy", engine = "copy" }]

[[process]]
name = "p"

[[process.context]]
name = "c"
node = "Compute"
workload = { kind = "frame_loop", fps = 60, work = "1ms" }

[[process.context]]
name = "c"
node = "3d"
workload = { kind = "copy_stream", size = "1MiB" }

[[process]]
name = "p"

[[process.context]]
name = "x"
node = "Copy"
workload = { kind = "copy_stream", size = "1MiB" }
"""
    assert problems(text) == [
        "s.toml: process[0].context[0].node: no node named 'Compute'; the adapter's nodes are "
        "'3D', 'Copy'",
        "s.toml: process[0].context[1].name: duplicate context name 'c' in process 'p' "
        "(process[0].context[0] has it)",
        "s.toml: process[0].context[1].node: no node named '3d'; the adapter's nodes are "
        "'3D', 'Copy'",
        "s.toml: process[1].name: duplicate process name 'p' (process[0] has it)",
    ]


def test_scenario_cross_field_checks_wait_for_valid_fields():
    text = "seed = -1\n" + MINIMAL + MINIMAL.replace('node = "3D"', 'node = "GPU"')
    assert problems(text) == ["s.toml: seed: must be at least 0, got -1 (range: 0 .. 2**64-1; a seed is a 64-bit unsigned number)"]


def test_copy_stream_may_run_on_any_node():
    text = with_context('name = "c"\nnode = "Compute"\nworkload = { kind = "copy_stream", size = 4096 }')
    assert parse_scenario(text).process[0].context[0].node == "Compute"


# ---------------------------------------------------------------------- reading and syntax


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("seed = \n", "line 1, column 8: invalid value"),
        ("seed = 1\n[adapter\n", "line 2, column 9: expected ']' at the end of a table declaration"),
        ('name = "a"\nname = "b"\n', "line 2, column 11: cannot overwrite a value"),
        ("seed = [1,\n", "line 2, column 1: invalid value"),
    ],
)
def test_toml_syntax_errors_give_line_and_column(text, where):
    assert problems(text) == [f"s.toml: {where}"]


def test_syntax_error_in_a_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n\n[[process]]\nname = = "p"\n')
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.problems == [f"{path}: line 4, column 8: invalid value"]


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.path == str(path)
    assert caught.value.problems == [f"{path}: cannot read: no such file"]
    assert str(caught.value) == f"{path}: cannot read: no such file"


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(tmp_path))
    assert str(caught.value) == f"{tmp_path}: cannot read: it is a directory"


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}: cannot read: not UTF-8 text (byte 0xe9 at offset 11)"


def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.encode())
    assert load_scenario(path).name == "bom"


def test_name_defaults_to_the_file_stem(tmp_path):
    path = tmp_path / "late_night.toml"
    path.write_text(MINIMAL)
    assert load_scenario(path).name == "late_night"
    path.write_text('name = "given"\n' + MINIMAL)
    assert load_scenario(str(path)).name == "given"
    assert parse_scenario(MINIMAL).name == ""
    assert parse_scenario(MINIMAL, "builtin/idle.toml").name == "idle"


def test_errors_from_a_file_name_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("seed = -1\n" + MINIMAL)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.path == str(path)
    assert caught.value.problems == [f"{path}: seed: must be at least 0, got -1 (range: 0 .. 2**64-1; a seed is a 64-bit unsigned number)"]


def test_scenario_from_dict():
    assert scenario_from_dict({"process": [{"name": "p", "context": [
        {"name": "c", "node": "Copy", "workload": {"kind": "copy_stream", "size": "8KiB"}},
    ]}]}).process[0].context[0].workload.size == 8192
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(["not", "a", "table"])
    assert caught.value.problems == ["<dict>: expected a table, got an array"]


# ---------------------------------------------------------------------------- documentation


def doc_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(), re.S)


def test_documented_error_example():
    (_driver, bad, _) = doc_blocks("toml")
    (expected,) = doc_blocks("text")
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(bad, "bad.toml")
    assert str(caught.value) == expected.rstrip("\n")


def test_documented_driver_table():
    (driver, _, _) = doc_blocks("toml")
    s = parse_scenario(driver + MINIMAL)
    assert s.driver.settings == {"ddi_version": "wddm2_7", "engines": {
        "Copy": {"ring_buffer_fence_release": True, "max_in_flight_hw_queue_buffers": 2}}}


def test_full_example_from_the_docs(tmp_path):
    (_, _, complete) = doc_blocks("toml")
    path = tmp_path / "example.toml"
    path.write_text(complete, encoding="utf-8")
    s = load_scenario(path)
    assert s.name == "game_and_video"
    assert s.description == "A 60 fps game, a video player and a background uploader on one adapter."
    assert (s.seed, s.duration) == (42, 500_000_000)

    a = s.adapter
    assert a.hw_queue_depth == 4
    assert s.driver.class_ is None
    assert s.driver.settings == {"ddi_version": "wddm2_7", "multi_engine_aware": True, "ring_size": "128KiB",
                                 "dma_buffer_size": "16KiB", "engines": {"Copy": {"ring_size": "16KiB"}}}
    assert a.cpu_cost.model_dump() == {
        "render": 4_000, "patch": 500, "submit": 1_500, "isr": 1_000, "dpc": 3_000,
        "present": 6_000,
    }
    assert a.nodes == [
        Node(name="3D", engine="3d", hw_queue_depth=8, copy_bandwidth=16.0, command_cost=80),
        Node(name="Copy", engine="copy", hw_queue_depth=None, copy_bandwidth=32.0, command_cost=100),
        Node(name="Video", engine="video_decode", hw_queue_depth=None, copy_bandwidth=16.0, command_cost=100),
    ]
    assert a.node("Copy").copy_bandwidth == 32.0
    assert a.segments == [
        Segment(name="VRAM", kind="memory", size=1 << 30, cpu_visible=False),
        Segment(name="Aperture", kind="aperture", size=256 << 20, cpu_visible=True),
    ]
    assert (s.scheduler.policy, s.scheduler.quantum) == ("priority_quantum", 1_000_000)

    assert [(p.name, p.priority) for p in s.process] == [
        ("game", "high"), ("player", "normal"), ("indexer", "idle"),
    ]
    contexts = [(c.name, c.device, c.node, c.priority) for p in s.process for c in p.context]
    assert contexts == [
        ("render", 0, "3D", 2),
        ("upload", 0, "Copy", 0),
        ("decode", 0, "Video", 0),
        ("overlay", 0, "3D", -1),
        ("hash", 1, "3D", 0),
    ]
    workloads = [c.workload for p in s.process for c in p.context]
    assert workloads == [
        FrameLoop(fps=60.0, packets_per_frame=3, work=1_500_000, jitter=0.2, present=True,
                  max_frame_latency=2, start=0, count=None),
        CopyStream(size=4 << 20, interval=16_000_000, start=2_000_000, count=None),
        Bursty(burst=2, work=3_000_000, mean_gap=33_000_000, start=0, count=10),
        Script(packets=[ScriptPacket(at=0, work=200_000, repeat=1),
                        ScriptPacket(at=5_000_000, work=50_000, repeat=3)],
               start=10_000_000, count=None),
        ComputeBatch(batch=16, work=250_000, interval=5_000_000, start=0, count=4),
    ]
    assert [w.kind for w in workloads] == [
        "frame_loop", "copy_stream", "bursty", "script", "compute_batch",
    ]
