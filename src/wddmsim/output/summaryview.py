"""The run summary (:mod:`wddmsim.output.summary`) as tables and lines, for the terminal and for Markdown.

:func:`sections` turns the summary into a list of :class:`Table` and :class:`Lines`: every label,
column and cell text is decided there, once. :func:`print_summary` draws them on a rich console
(``wddmsim run``, ``wddmsim demo``), :func:`markdown` writes them as Markdown (``summary.md`` of a
report), so the terminal and the report show the same figures in the same words.

Default tables fit :data:`WIDTH` columns; the columns marked ``wide`` appear with ``--wide`` and in
Markdown (the JSON has every figure anyway). The deadline columns (jobs, misses, tardiness) are
there only when some context has a deadline. Times carry their unit and four significant digits,
the precision of the summary's percentiles (``2.925 ms``, ``757.8 µs``, ``2.004 s``); busy
fractions and shares are percentages with one decimal (a share's error in signed percentage
points).

Two counts are told apart by their words: the header's total is what was *sent* on to the driver
(``packets_submitted``: DMA packets, or under hardware scheduling the buffers of
``DxgkDdiSubmitCommandToHwQueue``; VidMm's own and packets sent again count), the Contexts table's
*submitted* what each context's application handed to the OS; when their totals differ a line
under the table says what each counts. Under hardware scheduling a line under the Engines table
gives each engine with a slot limit its slots and the GPU scheduler's queue maps and unmaps (the
point of more queues than slots), and one under "GPU time per process" says why the OS's view is
empty (the GPU's scheduler, not the OS, runs the buffers, so the OS times no DMA packet).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Callable

from ..util.units import time_text

__all__ = ["WIDTH", "Column", "Lines", "Table", "markdown", "pct_text", "plural", "print_summary", "print_table",
           "sections", "time_cell", "time_text"]

#: The widest line a default table or line may take, in columns.
WIDTH = 100


# ---------------------------------------------------------------------------------------- figures
def time_cell(ns) -> str:
    """:func:`time_text` for a right-aligned column: seconds get a space after their one-letter
    unit, so that the digits line up with ``ms``, ``µs`` and ``ns``."""
    text = time_text(ns)
    return text + " " if text.endswith(" s") else text


def pct_text(value) -> str:
    """A percentage with one decimal; ``-`` for None."""
    return "-" if value is None else f"{value:.1f} %"


def _count(value) -> str:
    return "-" if value is None else str(value)


def _fraction(value) -> str:
    """A fraction (a share) as a percentage with one decimal; ``-`` for None."""
    return "-" if value is None else f"{100 * value:.1f} %"


def _signed(value) -> str:
    """A difference of fractions in signed percentage points; ``-`` for None."""
    return "-" if value is None else f"{100 * value:+.1f} pt"


def _number(value) -> str:
    return "-" if value is None else f"{value:g}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 reset``, ``2 resets`` (``many``: the plural when it is not ``word + 's'``)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


# ---------------------------------------------------------------------------------------- model
@dataclass
class Column:
    """A table column: its label, the text of its cell for a row, right-aligned or not, and
    whether only ``--wide`` (and Markdown) shows it."""

    label: str
    cell: Callable[[dict], str]
    right: bool = True
    wide: bool = False


@dataclass
class Table:
    """A titled table: its columns and its rows (each a dict the cells read)."""

    title: str
    columns: list[Column]
    rows: list[dict]


@dataclass
class Lines:
    """Text: ``lead`` (followed by a colon, drawn in ``style``) starts the first line; ``items``
    are joined with ``sep`` (a newline starts a line of its own) and wrapped at :data:`WIDTH`;
    ``details`` follow, one indented line each."""

    lead: str | None
    items: list[str]
    details: list[str] = field(default_factory=list)
    sep: str = ", "
    #: The most details the terminal shows (the rest are counted; Markdown shows them all).
    max_details: int | None = None
    #: How the terminal draws the lead.
    style: str = "bold"

    def text_lines(self) -> list[str]:
        """The lines as the terminal shows them, none wider than :data:`WIDTH`."""
        head = f"{self.lead}: " if self.lead else ""
        out = []
        if self.items or head:
            for paragraph in (head + self.sep.join(self.items)).split("\n"):
                out += textwrap.wrap(paragraph, WIDTH, subsequent_indent="  ", break_long_words=False,
                                     break_on_hyphens=False)
        shown = self.details if self.max_details is None else self.details[:self.max_details]
        for d in shown:
            out += textwrap.wrap(d, WIDTH, initial_indent="  ", subsequent_indent="    ",
                                 break_long_words=False, break_on_hyphens=False)
        if len(shown) < len(self.details):
            out.append(f"  and {len(self.details) - len(shown)} more (all of them in --json and the report)")
        return out


def _col(label: str, key: str, fmt=_count, right: bool = True, wide: bool = False) -> Column:
    return Column(label, lambda row: fmt(row.get(key)), right, wide)


def _text(label: str, key: str, wide: bool = False) -> Column:
    return Column(label, lambda row: str(row.get(key, "")), False, wide)


# ---------------------------------------------------------------------------------------- sections
def sections(s: dict) -> list[Table | Lines]:
    """The summary ``s`` as tables and lines, in the order they are shown."""
    hardware = s.get("scheduling") == "hardware" and s.get("wddm2") and "engines" in s["wddm2"]
    out: list[Table | Lines] = [_header(s, hardware)]
    if hardware:
        out += _hardware(s)
    else:
        out += _software(s)
    if s.get("wddm2"):
        out += _wddm2(s["wddm2"])
    out += _outcomes(s)
    return out


def _header(s: dict, hardware: bool) -> Lines:
    # "sent": what the OS passed on to the driver (DmaPacketQueued; under hardware scheduling the
    # buffers of DxgkDdiSubmitCommandToHwQueue), VidMm's own and packets sent again included. The
    # Contexts table's "submitted" is another count: what the applications handed to the OS.
    what = "Buffers" if hardware else "DMA packets"
    where = "to hardware queues" if hardware else "to the driver"
    last = "" if not s["packets_completed"] else f", the last at {time_text(s['makespan_ns'])}"
    again = f" ({s['resubmissions']} of them again after a preemption or reset)" if s.get("resubmissions") else ""
    policy = "" if hardware or not s.get("policy") else f"  policy {s['policy']}"
    return Lines(None, [
        f"{s['scenario']}  seed {s['seed']}  virtual time {time_text(s['virtual_time_ns'])}  "
        f"{s['scheduling']} scheduling{policy}",
        f"{what}: {s['packets_submitted']} sent {where}{again}, {s['packets_completed']} completed{last}",
        f"{plural(s['interrupts'], 'interrupt')}, {plural(s['dpcs'], 'DPC')}, "
        f"{plural(s['events'], 'simulation event')}",
    ], sep="\n")


def _latency() -> list[Column]:
    return [
        _col("min", "latency_min_ns", time_cell, wide=True),
        _col("mean", "latency_mean_ns", time_cell, wide=True),
        _col("p50", "latency_p50_ns", time_cell),
        _col("p99", "latency_p99_ns", time_cell),
        _col("max", "latency_max_ns", time_cell),
    ]


def _software(s: dict) -> list[Table | Lines]:
    aware = s.get("preemption_aware", False)
    nodes = Table("Nodes", [
        _text("node", "name"),
        _text("engine", "engine"),
        _col("DMA packets", "packets"),
        _col("busy", "busy_pct", pct_text),
        _col("GPU busy", "gpu_busy_pct", pct_text),
        Column("preemption", lambda n: n.get("preemption", "") if aware else "off", right=False, wide=True),
        _col("preemptions", "preemptions"),
        _col("preempt p50", "preempt_latency_p50_ns", time_cell, wide=True),
        _col("preempt max", "preempt_latency_max_ns", time_cell),
        _col("hw queue", "hw_queue_depth", wide=True),
        _col("max queued", "max_queued", wide=True),
        _col("last fence", "last_fence", wide=True),
        _col("hand-offs", "handoffs", wide=True),
        _col("hand-off min", "handoff_min_ns", time_cell, wide=True),
        _col("hand-off mean", "handoff_mean_ns", time_cell, wide=True),
        _col("hand-off max", "handoff_max_ns", time_cell, wide=True),
        _col("idle while waiting", "idle_while_waiting_ns", time_cell, wide=True),
    ], s["nodes"])
    deadlines = any(c.get("deadline_misses") is not None for c in s["contexts"])
    contexts = Table("Contexts (latency: submitted to completed)", [
        _text("context", "context"),
        _text("node", "node"),
        _col("submitted", "submitted"),
        _col("completed", "completed"),
        *_latency(),
        _col("GPU time", "gpu_ns", time_cell, wide=True),
        _col("worst wait", "worst_wait_ns", time_cell, wide=True),
        _col("weight", "weight", _number, wide=True),
        _col("share", "share", _fraction, wide=True),
        _col("share target", "share_target", _fraction, wide=True),
        _col("share error", "share_error", _signed, wide=True),
        *([_col("jobs", "jobs", wide=True),
           _col("deadline misses", "deadline_misses", wide=True),
           _col("tardiness p50", "tardiness_p50_ns", time_cell, wide=True),
           _col("tardiness p99", "tardiness_p99_ns", time_cell, wide=True),
           _col("tardiness max", "tardiness_max_ns", time_cell, wide=True)] if deadlines else []),
        _col("preemptions", "preemptions", wide=True),
        _col("preemption cost", "preemption_cost_ns", time_cell, wide=True),
        _col("preempted", "preempted", wide=True),
        _col("aborted", "aborted", wide=True),
        _col("cancelled", "cancelled", wide=True),
        _col("NullRendering", "null_rendering", wide=True),
    ], s["contexts"])
    out: list[Table | Lines] = [nodes, contexts, *_submitted_note(s, False)]
    for f in s.get("fairness", []):
        out.append(Lines("Fairness", [f"{f['node']}, {f['priority_class']} priority {f['priority']}: Jain's index "
                                      f"{f['jain']:.4f} over {len(f['contexts'])} contending contexts' GPU time"]))
    out += _processes(s)
    return out


def _hardware(s: dict) -> list[Table | Lines]:
    wddm2 = s["wddm2"]
    engines = {e["node"]: e for e in wddm2["engines"]}
    rows = [dict(n, **{k: v for k, v in engines[n["node"]].items() if k not in ("node", "name")}) for n in s["nodes"]]
    nodes = Table("Engines (hardware scheduling)", [
        _text("node", "name"),
        _text("engine", "engine"),
        _col("buffers", "packets"),
        _col("GPU busy", "gpu_busy_pct", pct_text),
        _col("context switches", "context_switches"),
        _col("queue switches", "queue_switches"),
        _col("resets", "resets"),
        _col("queue slots", "hw_queue_slots", wide=True),
        _col("queue maps", "queue_maps", wide=True),
        _col("queue unmaps", "queue_unmaps", wide=True),
    ], rows)
    hw = {c["context"]: c for c in wddm2["contexts"]}
    rows = [dict(c, **{k: v for k, v in hw.get(c["context"], {}).items() if k != "context"}) for c in s["contexts"]]
    contexts = Table("Contexts (latency: submitted to completed)", [
        _text("context", "context"),
        _text("node", "node"),
        _text("band", "band"),
        _col("queues", "queues", wide=True),
        _col("submitted", "submitted"),
        _col("completed", "completed"),
        *_latency(),
        _col("GPU busy", "gpu_busy_ns", time_cell, wide=True),
        _col("GPU preemptions", "gpu_preemptions", wide=True),
        _col("aborted", "aborted", wide=True),
        _col("cancelled", "cancelled", wide=True),
    ], rows)
    return [nodes, *_queue_slots(wddm2["engines"]), contexts, *_submitted_note(s, True), *_processes(s)]


def _queue_slots(engines: list[dict]) -> list[Lines]:
    """Under hardware scheduling, the engines with a slot limit: their slots and how often the
    GPU's scheduler mapped a hardware queue into one and unmapped one (docs/gpu.md, "Hardware
    queue slots"); nothing when every queue stays mapped."""
    limited = [e for e in engines if e.get("hw_queue_slots")]
    if not limited:
        return []
    items = [f"{e['name']} {plural(e['hw_queue_slots'], 'slot')}, {plural(e['queue_maps'], 'map')}, "
             f"{plural(e['queue_unmaps'], 'unmap')}" for e in limited]
    items[-1] += (" (a hardware queue runs only while it holds one of its engine's slots: the GPU's scheduler "
                  "maps a queue with work into a free slot, or into the slot of an idle queue it unmaps)")
    return [Lines("Queue slots", items, sep="; ")]


def _submitted_note(s: dict, hardware: bool) -> list[Lines]:
    """When the header's total and the Contexts table's ``submitted`` differ, one line saying that
    they count two things: what the applications handed to the OS, and what went on to the driver."""
    handed = sum(c["submitted"] for c in s["contexts"])
    if handed == s["packets_submitted"]:
        return []
    if hardware:
        sent = (f"the {plural(s['packets_submitted'], 'buffer')} sent to hardware queues above are those the "
                f"driver took (DxgkDdiSubmitCommandToHwQueue), VidMm's own among them; buffers the OS still "
                f"holds are not counted there")
    else:
        sent = (f"the {plural(s['packets_submitted'], 'DMA packet')} sent to the driver above are those the OS "
                f"passed on to it, VidMm's own and packets sent again among them; packets still waiting in the "
                f"OS's queues are not counted there")
    return [Lines("submitted", [f"the {'buffers' if hardware else 'packets'} the applications handed to the OS, "
                                f"{handed} in all; {sent}"], sep="")]


def _processes(s: dict) -> list[Table | Lines]:
    procs = [p for p in s.get("processes", ()) if p["gpu_busy_ns"] or p["os_busy_ns"]]
    if not procs:
        return []
    out: list[Table | Lines] = [Table("GPU time per process", [
        _text("process", "process"),
        _col("pid", "pid", wide=True),
        _col("GPU's account", "gpu_busy_ns", time_cell),
        _col("OS's view", "os_busy_ns", time_cell),
    ], procs)]
    if all(p["os_busy_ns"] is None for p in procs) and s.get("scheduling") == "hardware":
        out.append(Lines("OS's view", ["none under hardware scheduling: the driver hands the buffers to hardware "
                                       "queues and the GPU's own scheduler decides what runs, so the OS sees no DMA "
                                       "packet start or end to time; the GPU's account is the only one"], sep=""))
    return out


def _wddm2(wddm2: dict) -> list[Lines]:
    out = []
    h = wddm2.get("hw_scheduling")
    if h is not None:
        out.append(Lines("Hardware queues", [
            plural(h["queues"], "queue"), f"{plural(h['submissions'], 'buffer')} sent",
            plural(h["presents"], "present"), plural(h["suspends"], "suspend"), plural(h["resumes"], "resume"),
            plural(h["page_faults"], "page fault")]))
    va = wddm2["gpu_va"]
    out.append(Lines("GPU virtual addresses", [
        plural(va["address_spaces"], "address space"), plural(va["page_tables"], "page table"),
        f"{plural(va['paging_buffers'], 'paging buffer')} ({plural(va['page_table_updates'], 'page-table update')}, "
        f"{plural(va['tlb_flushes'], 'TLB flush', 'TLB flushes')})"]))
    f = wddm2["fences"]
    out.append(Lines("Monitored fences", [
        f"{f['created']} created", f"{plural(f['gpu_updates'], 'GPU write')} seen",
        f"{f['cpu_signals']} CPU and {f['queued_signals']} queued {'signal' if f['queued_signals'] == 1 else 'signals'}",
        f"{f['cpu_waits']} CPU and {f['queue_waits']} GPU {'wait' if f['queue_waits'] == 1 else 'waits'}",
        plural(f["timeouts"], "timeout"), f"{f['tdr_maxed']} driven to the maximum by a reset"]))
    n = wddm2.get("native_fences")
    if n is not None:
        out.append(Lines("Native fences", [
            f"{n['fences']} live", plural(n["interrupts"], "NATIVE_FENCE_SIGNALED interrupt"),
            plural(n["updates"], "MonitoredValue update"), plural(n["cpu_signals"], "CPU signal")]))
    return out


def _outcomes(s: dict) -> list[Table | Lines]:
    """Displays, recovery, errors, memory, NullRendering, verifier reports and the bug check."""
    out: list[Table | Lines] = []
    shown = [d for d in s.get("displays", []) if d["presents"]]
    if shown:
        out.append(Table("Displays (latency: present call to display)", [
            Column("source", lambda d: f"{d['source']} ({d['refresh_hz']:g} Hz)", right=False),
            _col("presents", "presents"),
            _col("displayed", "displayed"),
            _col("dropped", "dropped"),
            _col("frame p50", "frame_time_p50_ns", time_cell),
            _col("frame p99", "frame_time_p99_ns", time_cell),
            _col("latency p50", "latency_p50_ns", time_cell),
            _col("latency p99", "latency_p99_ns", time_cell, wide=True),
            _col("latency max", "latency_max_ns", time_cell),
        ], shown))
    out += _recovery(s)
    for c in s["contexts"]:
        if c.get("api_error") and c["api_error"] != "STATUS_DEVICE_REMOVED":
            out.append(Lines(c["context"], [f"an API call failed with {c['api_error']}; the application stopped"]))
    if s.get("gpu_faults"):
        out.append(Lines("GPU faults", [str(s["gpu_faults"])]))
    mem = s.get("memory")
    if mem and (mem["evictions"] or mem["paging_submissions"]):
        out.append(Lines("Memory", [
            *(f"segment {g['id']} {g['used'] // 1024}/{g['size'] // 1024} KiB" for g in mem["segments"]),
            plural(mem["evictions"], "eviction"),
            f"{plural(mem['paging_submissions'], 'paging submission')} on node {mem['paging_node']}",
            f"{mem['bytes_paged_in'] // 1024} KiB in", f"{mem['bytes_paged_out'] // 1024} KiB out",
            plural(mem["context_switches"], "null-context switch", "null-context switches")]))
    if s.get("null_rendering_packets"):
        out.append(Lines("NullRendering", [f"{plural(s['null_rendering_packets'], 'packet')} completed their fence "
                                           f"without running on the GPU; their latency is the submission path's own "
                                           f"cost"]))
    if s["violations"]:
        out.append(Lines(f"{plural(len(s['violations']), 'contract rule')} broken (verifier in report mode)", [],
                         [f"t={v['t']} rule {v['rule']} ({v['name']}): {v['message']}" for v in s["violations"]],
                         max_details=20, style="bold red"))
    if s.get("ledger"):
        out.append(_ledger(s["ledger"]))
    if s.get("bugcheck"):
        out.append(_bugcheck(s))
    return out


def _ledger(led: dict) -> Lines:
    """The packet ledger's line (docs/ledger.md): a run whose ledger found a violation fails
    before any summary is shown, so a summary always says everything is accounted for."""
    p, pr = led["packets"], led["presents"]
    items = [f"{plural(p['created'], 'packet')} ({p['in_flight']} in flight)",
             f"{plural(pr['created'], 'present')} ({pr['pending']} pending)"]
    if led["paging"]["created"]:
        items.append(f"{plural(led['paging']['created'], 'paging packet')} ({led['paging']['in_flight']} in flight)")
    if led["progress_fences"]["created"]:
        pf = led["progress_fences"]
        items.append(f"{plural(pf['created'], 'progress fence')} ({pf['in_flight']} in flight)")
    return Lines("Ledger", ["every packet, flip, paging operation and progress fence is accounted for: "
                            + ", ".join(items)], sep="")


def _recovery(s: dict) -> list[Lines]:
    tdr = s.get("tdr")
    if not tdr or not (tdr["engine_resets"] or tdr["adapter_resets"] or tdr["live_dumps"]):
        return []
    from ..ddi.bugcheck import BugCheckCode, describe_parameters

    # A live dump's first three parameters are the OS's own pointers (0 in the model); its fourth
    # is explained as decode explains it.
    details = [f"live dump 0x{d['code']:X} {BugCheckCode(d['code']).name} at {time_text(d['t'])}: "
               + describe_parameters(d["code"], (0, 0, 0, d["p4"]))[3] for d in tdr["live_dumps"]]
    details += [f"{c['context']}: device in error, {plural(c['aborted'], 'packet')} aborted, {c['cancelled']} cancelled"
                for c in s["contexts"] if c.get("device_error")]
    return [Lines("Recovery", [plural(tdr["engine_resets"], "engine reset"),
                               plural(tdr["adapter_resets"], "adapter reset")], details)]


def _bugcheck(s: dict) -> Lines:
    from ..ddi.bugcheck import BugCheck, describe

    b = s["bugcheck"]
    lines = describe(BugCheck(b["code"], b["p1"], b["p2"], b["p3"], b["p4"]))
    if b.get("rule") is not None:
        lines.append(f"Rule broken: {b['rule']} ({_rule_name(b['rule'])})")
    lines.append(b["message"])
    return Lines(f"Bug check at {time_text(s['virtual_time_ns'])}", [], lines, style="bold red")


def _rule_name(number: int) -> str:
    from ..ddi.rules.catalog import catalog

    return next((r.name for r in catalog() if r.number == number), "not in the catalogue")


# ---------------------------------------------------------------------------------------- terminal
def print_summary(con, summary: dict, wide: bool = False) -> None:
    """Draw the summary on the rich console ``con``: the default columns, or every one with
    ``wide``."""
    from rich.text import Text

    after_lines = False
    for part in sections(summary):
        if isinstance(part, Lines):
            after_lines = True
            for i, line in enumerate(part.text_lines()):
                text = Text(line)
                if i == 0 and part.lead:
                    text.stylize(part.style, 0, len(part.lead) + 1)
                con.print(text, soft_wrap=True)
            continue
        if after_lines:
            con.print()
            after_lines = False
        cols = [c for c in part.columns if wide or not c.wide]
        print_table(con, part.title, [c.label for c in cols], [[c.cell(row) for c in cols] for row in part.rows],
                    right=[c.right for c in cols])
        con.print()


def print_table(con, title: str, labels: list[str], rows: list[list[str]], right: list[bool] | None = None) -> None:
    """A table in the summary's style: a bold title, a rule under the header, no vertical lines,
    cells never wrapped. Columns are right-aligned but for the first, unless ``right`` says."""
    from rich import box
    from rich.table import Table as RichTable

    right = right if right is not None else [i > 0 for i in range(len(labels))]
    t = RichTable(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1),
                  show_edge=False, pad_edge=False)
    for label, r in zip(labels, right):
        t.add_column(label, justify="right" if r else "left", no_wrap=True)
    for row in rows:
        t.add_row(*row)
    con.print(t)


# ---------------------------------------------------------------------------------------- Markdown
def markdown(summary: dict) -> str:
    """The summary as Markdown: a heading, then every table with all its columns and every line
    (a block with details, such as the recovery or the bug check, under its own heading)."""
    out = [f"# {summary['scenario']} (seed {summary['seed']})", ""]
    for part in sections(summary):
        if isinstance(part, Lines):
            if part.details:
                out += [f"## {part.lead}", ""]
                if part.items:
                    out += [part.sep.join(part.items), ""]
                out += [f"- {d}" for d in part.details]
            elif part.sep == "\n":
                out += [f"{item}  " for item in part.items[:-1]] + [part.items[-1]]
            else:
                out.append((f"**{part.lead}:** " if part.lead else "") + part.sep.join(part.items))
            out.append("")
            continue
        out += [f"## {part.title}", "",
                "| " + " | ".join(c.label for c in part.columns) + " |",
                "|" + "|".join("---:" if c.right else "---" for c in part.columns) + "|"]
        out += ["| " + " | ".join(c.cell(row).rstrip() for c in part.columns) + " |" for row in part.rows]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
