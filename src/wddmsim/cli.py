"""The ``wddmsim`` command line.

``run`` runs a scenario, ``demo`` shows what crosses the DDI for one submission, ``verify`` runs the
conformance suite; ``layout`` and ``decode`` (which read the DDI structures the way a debugger's
``dt`` does) live in :mod:`wddmsim.structcmd`, and ``rules``, ``sweep`` and ``replay`` in modules of
their own. Bad input from a person (an unknown structure, bytes of the wrong length, text that is
not hex, a missing file) gets one clear line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os

import click
from rich.console import Console
from rich.table import Table

from . import __version__


class UserError(click.ClickException):
    """A mistake in what the person asked for: one line on stderr, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"wddmsim: error: {self.message}", err=True)


def _console() -> Console:
    """Rich console; when stdout is not a terminal, wide enough that no member name is cut."""
    con = Console(highlight=False)
    if not con.is_terminal:
        con = Console(highlight=False, width=200)
    return con


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: an executable model of how Windows submits work to a GPU (WDDM)."""


def _print_bugcheck(con: Console, record: dict) -> None:
    """The stop a crash record holds, parameter by parameter: as ``wddmsim decode @RECORD`` shows it."""
    from .structcmd import print_stop

    print_stop(con, record)


# ---------------------------------------------------------------------------------------- run
class ScenarioProblems(UserError):
    """Every problem of a scenario file, one per line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems

    def show(self, file=None) -> None:
        for line in self.problems:
            click.echo(f"wddmsim: error: {line}", err=True)


def _load(path: str, sets=()):
    """The scenario file at ``path`` with the ``--set PATH=VALUE`` assignments ``sets`` made on
    it (see :mod:`wddmsim.scenario.overrides`), or the error listing its problems (exit 2)."""
    from .scenario import OverrideError, ScenarioError, load_scenario, parse_override

    try:
        return load_scenario(path, [parse_override(text) for text in sets])
    except OverrideError as e:
        raise UserError(str(e)) from None
    except ScenarioError as e:
        raise ScenarioProblems(e.problems) from None


def _duration(text: str | None, option: str) -> int | None:
    from .scenario import parse_duration

    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError as e:
        raise UserError(f"{option}: {e}") from None


def _ms(ns) -> str:
    """Nanoseconds as milliseconds with microsecond precision."""
    if ns is None:
        return "-"
    return f"{ns / 1e6:.3f} ms"


def print_summary(con: Console, summary: dict) -> None:
    """The run summary as tables: the run, per node, per context."""
    con.print(
        f"[bold]{summary['scenario']}[/bold]  seed {summary['seed']}  "
        f"virtual time {_ms(summary['virtual_time_ns'])}  "
        f"{summary['packets_retired']}/{summary['packets_submitted'] - summary.get('resubmissions', 0)} "
        f"packets retired/submitted"
        f"{' (' + str(summary['resubmissions']) + ' resubmitted after preemption)' if summary.get('resubmissions') else ''}  "
        f"{summary['interrupts']} interrupts  {summary['events']} events"
    )
    w2 = summary.get("wddm2")
    if summary.get("scheduling") == "hardware" and w2:
        _print_hardware(con, summary, w2)
    else:
        _print_software(con, summary)
    if w2:
        _print_wddm2(con, w2)
    _print_outcomes(con, summary)


def _print_hardware(con: Console, summary: dict, w2: dict) -> None:
    """Hardware scheduling: engines and contexts as the GPU's scheduler saw them."""
    engines = {e["node"]: e for e in w2["engines"]}
    nodes = Table(title="Engines (hardware scheduling)", title_justify="left")
    for col in ("node", "engine", "buffers", "GPU busy %", "context switches", "queue switches", "resets"):
        nodes.add_column(col, justify="left" if col in ("node", "engine") else "right")
    for n in summary["nodes"]:
        e = engines[n["node"]]
        nodes.add_row(n["name"], n["engine"], str(n["packets"]), f"{n['gpu_busy_pct']:.1f}", str(e["context_switches"]),
                      str(e["queue_switches"]), str(e["resets"]))
    con.print(nodes)
    hw = {c["context"]: c for c in w2["contexts"]}
    ctxs = Table(title="Contexts (latency: queued to retired)", title_justify="left")
    for col in ("context", "node", "band", "queues", "submitted", "retired", "GPU busy", "preempted", "p50", "p99", "max"):
        ctxs.add_column(col, justify="left" if col in ("context", "node", "band") else "right")
    for c in summary["contexts"]:
        h = hw[c["context"]]
        ctxs.add_row(c["context"], c["node"], h["band"], str(h["queues"]), str(c["submitted"]), str(c["completed"]),
                     _ms(h["gpu_busy_ns"]), "-" if h["gpu_preemptions"] is None else str(h["gpu_preemptions"]),
                     _ms(c["latency_p50_ns"]), _ms(c["latency_p99_ns"]), _ms(c["latency_max_ns"]))
    con.print(ctxs)
    s = w2["hwsch"]
    con.print(f"[bold]Hardware queues:[/bold] {s['queues']} queue(s), {s['submissions']} buffer(s) submitted, "
              f"{s['presents']} present(s), {s['suspends']} suspend(s), {s['resumes']} resume(s), "
              f"{s['page_faults']} page fault(s)")


def _print_wddm2(con: Console, w2: dict) -> None:
    """GPU virtual addresses and monitored fences (both WDDM 2.x modes)."""
    va = w2["gpu_va"]
    con.print(f"[bold]GPU virtual addresses:[/bold] {va['address_spaces']} address space(s), {va['page_tables']} page "
              f"table(s), {va['paging_buffers']} paging buffer(s) ({va['page_table_updates']} page-table update(s), "
              f"{va['tlb_flushes']} TLB flush(es))")
    f = w2["fences"]
    con.print(f"[bold]Monitored fences:[/bold] {f['created']} created, {f['gpu_updates']} GPU write(s) seen, "
              f"{f['cpu_signals']} CPU and {f['queued_signals']} queued signal(s), {f['cpu_waits']} CPU and "
              f"{f['queue_waits']} GPU wait(s), {f['timeouts']} timeout(s), {f['tdr_maxed']} driven to the maximum "
              f"by a reset")
    n = w2.get("native_fences")
    if n is not None:
        con.print(f"[bold]Native fences:[/bold] {n['fences']} live, {n['interrupts']} NATIVE_FENCE_SIGNALED "
                  f"interrupt(s), {n['updates']} MonitoredValue update(s), {n['cpu_signals']} CPU signal(s)")


def _print_software(con: Console, summary: dict) -> None:
    nodes = Table(title="Nodes", title_justify="left")
    for col in ("node", "engine", "packets", "busy %", "GPU busy %", "hw queue", "max queued", "last fence",
                "preemption", "preempted", "preempt p50", "preempt max"):
        nodes.add_column(col, justify="left" if col in ("node", "engine", "preemption") else "right")
    aware = summary.get("preemption_aware", False)
    for n in summary["nodes"]:
        count = n.get("preemptions", 0)
        nodes.add_row(n["name"], n["engine"], str(n["packets"]), f"{n['busy_pct']:.1f}", f"{n['gpu_busy_pct']:.1f}",
                      str(n["hw_queue_depth"]), str(n["max_queued"]), str(n["last_fence"]),
                      n.get("preemption", "") if aware else "off", str(count),
                      _ms(n["preempt_latency_p50_ns"]) if count else "-",
                      _ms(n["preempt_latency_max_ns"]) if count else "-")
    con.print(nodes)
    handed = [n for n in summary["nodes"] if n.get("handoffs")]
    if handed:
        con.print("[bold]Hand-offs[/bold] (a context stops, a waiting other one starts): " + "; ".join(
            f"{n['name']} {n['handoffs']}, min {_ms(n['handoff_min_ns'])} mean {_ms(n['handoff_mean_ns'])} "
            f"max {_ms(n['handoff_max_ns'])}" for n in handed))
    ctxs = Table(title="Contexts (latency: queued to retired)", title_justify="left")
    for col in ("context", "node", "submitted", "retired", "min", "mean", "p50", "p99", "max", "GPU time",
                "worst wait"):
        ctxs.add_column(col, justify="left" if col in ("context", "node") else "right")
    for c in summary["contexts"]:
        ctxs.add_row(c["context"], c["node"], str(c["submitted"]), str(c["completed"]), _ms(c.get("latency_min_ns")),
                     _ms(c.get("latency_mean_ns")), _ms(c["latency_p50_ns"]), _ms(c["latency_p99_ns"]),
                     _ms(c["latency_max_ns"]), _ms(c.get("gpu_ns")), _ms(c.get("worst_wait_ns")))
    con.print(ctxs)
    for f in summary.get("fairness", []):
        con.print(f"[bold]Fairness[/bold] {f['node']}, {f['priority_class']} priority {f['priority']}: Jain's index "
                  f"{f['jain']:.4f} over {len(f['contexts'])} contending contexts' GPU time")
    procs = [p for p in summary.get("processes", ()) if p["gpu_busy_ns"] or p["os_busy_ns"]]
    if procs:
        # The GPU's own account beside the OS's view (DmaPacketStart..DmaPacketStop), per process.
        con.print("[bold]GPU time per process[/bold] (the GPU's account / the OS's view): " + ", ".join(
            f"{p['process']} {'-' if p['gpu_busy_ns'] is None else _ms(p['gpu_busy_ns'])} / {_ms(p['os_busy_ns'])}"
            for p in procs))


def _print_outcomes(con: Console, summary: dict) -> None:
    """Displays, recovery, errors, memory, NullRendering and verifier reports."""
    shown = [d for d in summary.get("displays", []) if d["presents"]]
    if shown:
        disp = Table(title="Displays (latency: present call to display)", title_justify="left")
        for col in ("source", "refresh", "presents", "displayed", "dropped", "frame p50", "frame p99",
                    "latency p50", "latency p99", "latency max"):
            disp.add_column(col, justify="left" if col == "source" else "right")
        for d in shown:
            disp.add_row(str(d["source"]), f"{d['refresh_hz']:g} Hz", str(d["presents"]), str(d["displayed"]),
                         str(d["dropped"]), _ms(d["frame_time_p50_ns"]), _ms(d["frame_time_p99_ns"]),
                         _ms(d["latency_p50_ns"]), _ms(d["latency_p99_ns"]), _ms(d["latency_max_ns"]))
        con.print(disp)
    tdr = summary.get("tdr")
    if tdr and (tdr["engine_resets"] or tdr["adapter_resets"] or tdr["live_dumps"]):
        from .ddi.bugcheck import BugCheckCode

        con.print(f"[bold]Recovery:[/bold] {tdr['engine_resets']} engine reset(s), {tdr['adapter_resets']} adapter reset(s)")
        for d in tdr["live_dumps"]:
            con.print(f"  live dump 0x{d['code']:X} {BugCheckCode(d['code']).name} at {_ms(d['t'])}"
                      + (f" (P4 {d['p4']})" if d["p4"] else ""))
        for c in summary["contexts"]:
            if c.get("device_error"):
                con.print(f"  {c['context']}: device in error, {c['aborted']} packet(s) aborted, "
                          f"{c['cancelled']} cancelled")
    for c in summary["contexts"]:
        if c.get("api_error") and c["api_error"] != "STATUS_DEVICE_REMOVED":
            con.print(f"[bold]{c['context']}[/bold]: an API call failed with {c['api_error']}; the application stopped")
    if summary.get("gpu_faults"):
        con.print(f"GPU faults: {summary['gpu_faults']}")
    mem = summary.get("memory")
    if mem and (mem["evictions"] or mem["paging_submissions"]):
        segs = ", ".join(f"segment {s['id']} {s['used'] // 1024}/{s['size'] // 1024} KiB" for s in mem["segments"])
        con.print(f"[bold]Memory:[/bold] {segs}; {mem['evictions']} eviction(s), {mem['paging_submissions']} paging "
                  f"submission(s) on node {mem['paging_node']}, {mem['bytes_paged_in'] // 1024} KiB in, "
                  f"{mem['bytes_paged_out'] // 1024} KiB out, {mem['context_switches']} null-context switch(es)")
    if summary.get("null_rendering_packets"):
        con.print(f"NullRendering: {summary['null_rendering_packets']} packet(s) completed their fence without "
                  f"running on the GPU; their latency is the submission path's own cost.")
    if summary["violations"]:
        con.print(f"[bold red]{len(summary['violations'])} contract rule(s) broken (verifier in report mode):[/bold red]")
        for v in summary["violations"][:20]:
            con.print(f"  t={v['t']} rule {v['rule']} ({v['name']}): {v['message']}")


def build_system(scenario, **kw):
    """A :class:`~wddmsim.system.System`, or the :class:`UserError` that says why it cannot be
    built: a scenario or driver setting the driver refuses, a driver Windows would not start, an
    application call that fails at creation."""
    from .dxgkrnl import ApiError
    from .dxgkrnl.errors import AdapterStartError
    from .system import ConfigError, System

    try:
        return System(scenario, **kw)
    except ConfigError as e:
        raise ScenarioProblems([f"{scenario.name}: {p}: {r}" for p, r in e.problems]) from None
    except AdapterStartError as e:
        raise ScenarioProblems([f"{scenario.name}: the adapter does not start: {p}" for p in e.problems]) from None
    except ApiError as e:
        raise UserError(f"{scenario.name}: the scenario cannot start: {e}") from None


def execute(scenario, *, seed=None, until=None, events=None, as_json=False, verifier="strict",
            crash_record="wddmsim-crash.json", con: Console | None = None, trace=None, presentmon=None,
            report=None, driver=None, memory=False) -> int:
    """Build and run ``scenario``; print the summary; return the exit status (3 after a bug check).
    ``trace``: also write the run's timeline as Chrome trace JSON there; ``presentmon``: the
    PresentMon-style CSV of its presents; ``driver``: the driver's class (instead of the
    scenario's). On standard error after the run: its wall time and real-time factor, and with
    ``memory`` the peak resident memory (:mod:`wddmsim.runcost`)."""
    from .runcost import memory_line, peak_rss_bytes, timing_line, writer_peak_rss_bytes
    from .trace import JsonlSink, ListSink, TeeSink

    sink = None
    if events:
        try:
            sink = JsonlSink(events)
        except OSError as e:
            raise UserError(f"{events}: cannot write: {e.strerror}") from None
    collected = None
    if report:
        _check_directory(report)
    if trace or presentmon or report:
        for path in (trace, presentmon):
            if path:
                _check_writable(path)
        collected = ListSink()
        sink = collected if sink is None else TeeSink(sink, collected)
    try:
        system = build_system(scenario, seed=seed, trace=sink, verifier=verifier, driver=driver)
        rss_before = peak_rss_bytes() if memory else None
        progress = _progress(con or _console(), as_json)
        try:
            result = system.run(until, on_progress=progress)
        finally:
            if progress is not None:
                progress.finish()
    finally:
        close = getattr(sink, "close", None)
        if close is not None:
            close()
    rss_peak = peak_rss_bytes() if memory else None  # before the outputs made from the collected events
    log_sinks = [s for s in getattr(sink, "sinks", (sink,)) if isinstance(s, JsonlSink)]
    rss_writer = writer_peak_rss_bytes() if memory and log_sinks and not log_sinks[0].in_process else None
    if trace:
        from .trace.chrome import write_chrome_trace

        write_chrome_trace(collected.events, trace)
    if presentmon:
        from .trace.presentmon import write_presentmon_csv

        write_presentmon_csv(collected.events, presentmon)
    if report:
        from .report import write_report

        write_report(collected.events, report)
    con = con or _console()
    summary = dict(result.summary)
    if result.bugcheck is not None:
        rec = result.bugcheck
        summary["bugcheck"] = rec.to_json()["bugcheck"] | {"rule": rec.rule, "message": rec.message,
                                                             "crash_record": crash_record}
        try:
            rec.write(crash_record)
        except OSError as e:
            raise UserError(f"{crash_record}: cannot write the crash record: {e.strerror}") from None
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        print_summary(con, summary)
        if result.bugcheck is not None:
            _print_bugcheck(con, result.bugcheck.to_json())
            con.print(f"  Crash record: {crash_record} (read it with: uv run wddmsim decode @{crash_record})")
    click.echo(timing_line(result.end, result.wall_s), err=True)
    if memory:
        click.echo(memory_line(rss_peak, rss_before, rss_writer), err=True)
    return 3 if result.bugcheck is not None else 0


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=True))
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed for every random stream [default: the scenario's].")
@click.option("--until", default=None, help="Virtual time to stop at, e.g. 500ms [default: the scenario's duration].")
@click.option("--events", type=click.Path(dir_okay=False), default=None, help="Write the event log as JSON Lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--verifier", type=click.Choice(["strict", "report", "off"]), default="strict", show_default=True,
              help="strict: a broken contract rule stops with its bug check; report: list and go on.")
@click.option("--crash-record", default="wddmsim-crash.json", show_default=True, type=click.Path(dir_okay=False),
              help="Where a bug check's crash record goes.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="Write the timeline as Chrome trace JSON (open it in ui.perfetto.dev).")
@click.option("--presentmon", type=click.Path(dir_okay=False), default=None,
              help="Write one row per present with PresentMon's columns (CSV).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write a report folder: summary.md, summary.json and PNG plots.")
@click.option("--driver", "driver", default=None, metavar="MODULE:CLASS",
              help="The driver to run ('package.module:Class' or 'path/file.py:Class') instead of the scenario's.")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Change the scenario: PATH as in the file (adapter.nodes.0.preemption, scheduler.quantum); "
                   "VALUE a TOML value or a plain string (2ms); repeatable.")
@click.option("--memory", is_flag=True,
              help="After the run, print the peak resident memory (ru_maxrss) on stderr.")
def run_cmd(scenario: str, seed, until, events, as_json, verifier, crash_record, trace_path, presentmon,
            report_dir, driver, sets, memory) -> None:
    """Run a scenario file and print its summary (exit status 3 if it ends in a bug check; a
    driver that does not load or that Windows would not start: 2). ``--set`` changes the file's
    values before they are checked (see docs/scenarios.md). The run's wall time and real-time
    factor (virtual seconds per wall second) follow on stderr, never in the summary or the event
    log, which stay the same from run to run."""
    sc = _load(scenario, sets)
    limit = _duration(until, "--until")
    cls = load_driver(driver) if driver else None
    status = execute(sc, seed=seed, until=limit, events=events, as_json=as_json, verifier=verifier,
                     crash_record=crash_record, trace=trace_path, presentmon=presentmon, report=report_dir,
                     driver=cls, memory=memory)
    raise SystemExit(status)


class _RunProgress:
    """A progress bar for long runs on a terminal: it appears once a run has taken a second of
    wall time and disappears when the run ends (a bug check included)."""

    def __init__(self, con: Console):
        import time

        self.con = con
        self.clock = time.perf_counter
        self.started = self.clock()
        self.bar = None
        self.task = None

    def __call__(self, now: int, limit: int) -> None:
        if self.bar is None:
            if self.clock() - self.started < 1.0:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("virtual time"), BarColumn(), TextColumn("{task.description}"),
                                TimeElapsedColumn(), console=self.con, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=limit)
        self.bar.update(self.task, completed=now, description=f"{now / 1e6:.1f} / {limit / 1e6:.1f} ms")

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _progress(con: Console, as_json: bool):
    """A :class:`_RunProgress` when output goes to a terminal, else None (quiet)."""
    return _RunProgress(con) if con.is_terminal and not as_json else None


def _check_directory(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UserError(f"{path}: cannot create the report folder: {e.strerror}") from None


def _read_log(events_file: str) -> list[dict]:
    from .trace import read_events

    try:
        events = read_events(events_file)
    except OSError as e:
        raise UserError(f"{events_file}: cannot read: {e.strerror}") from None
    except (ValueError, KeyError) as e:
        raise UserError(f"{events_file}: not a wddmsim event log: {e}") from None
    if not events or events[0].get("event") != "LogStart":
        raise UserError(f"{events_file}: not a wddmsim event log (the first line is not LogStart)")
    return events


@main.command("report")
@click.argument("events_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The report folder (summary.md, summary.json, PNG plots).")
def report_cmd(events_file: str, output: str) -> None:
    """Make the report folder of a run from its saved event log."""
    from .report import write_report

    events = _read_log(events_file)
    _check_directory(output)
    files = write_report(events, output)
    click.echo(f"{output}: {len(files)} files from {len(events)} log events")


def _check_writable(path: str) -> None:
    try:
        with open(path, "a"):
            pass
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror}") from None


@main.command("trace")
@click.argument("events_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where the Chrome trace JSON goes (open it in ui.perfetto.dev or chrome://tracing).")
def trace_cmd(events_file: str, output: str) -> None:
    """Turn an event log written with --events into a Chrome trace timeline."""
    from .trace.chrome import write_chrome_trace

    events = _read_log(events_file)
    _check_writable(output)
    n = write_chrome_trace(events, output)
    click.echo(f"{output}: {n} trace events from {len(events)} log events")


# ---------------------------------------------------------------------------------------- verify
def load_driver(spec: str):
    """The driver class ``spec`` names, or a :class:`UserError` saying why it cannot be loaded."""
    from .loader import LoadError, load_class

    try:
        return load_class(spec, "driver")
    except LoadError as e:
        raise UserError(str(e)) from None


def parse_settings(pairs, option: str = "--set") -> dict:
    """``KEY=VALUE`` pairs as a settings table: a dotted key makes nested tables
    (``engines.Copy.ring_size=4096``), a value is read as TOML (``true``, ``4096``, ``"64KiB"``) or,
    when it is not TOML, taken as a string (``win7``)."""
    import tomllib

    out: dict = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {pair!r}: expected KEY=VALUE")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        parts = key.strip().split(".")
        table = out
        for part in parts[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise UserError(f"{option} {pair!r}: {part} is not a table")
        table[parts[-1]] = value
    return out


@main.command("verify")
@click.argument("driver")
@click.option("--only", "only", multiple=True, metavar="AREA",
              help="Run only this area (or AREA/CASE); repeatable. See the table for the areas.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option("--junit", "junit", type=click.Path(dir_okay=False), default=None,
              help="Also write the verdict as JUnit XML (one test case per scenario).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="A driver setting (its [driver] table), e.g. --set ddi_version=wddm2_7; repeatable.")
def verify_cmd(driver: str, only, as_json: bool, junit, sets) -> None:
    """Run the conformance suite against DRIVER ('package.module:Class' or 'path/file.py:Class').

    The cases that apply to what the driver declares run with the verifier in strict mode; the
    table says per case which contract rules it exercised and the verdict, and each failure says
    which rule broke, the bug check Windows would raise, where, and the decoded crash record.
    Exit status 0 only when every case that applies passes (1 otherwise, 2 for bad input)."""
    from .verify import select, verify
    from .verify.output import junit_xml, print_report, report_json

    from .dxgkrnl.errors import AdapterStartError
    from .system import ConfigError

    cls = load_driver(driver)
    settings = parse_settings(sets)
    try:
        select(only)
    except ValueError as e:
        raise UserError(f"--only: {e}") from None
    if junit:
        _check_writable(junit)
    con = _console()
    try:
        report = verify(cls, only=only, name=driver, settings=settings)
    except ConfigError as e:
        raise ScenarioProblems([f"{driver}: {p}: {r}" for p, r in e.problems]) from None
    except AdapterStartError as e:
        raise ScenarioProblems([f"{driver}: the adapter does not start: {p}" for p in e.problems]) from None
    if junit:
        with open(junit, "wb") as f:
            f.write(junit_xml(report))
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2))
    else:
        print_report(con, report)
    raise SystemExit(0 if report.passed else 1)


# ---------------------------------------------------------------------------------------- demo
def compare_scenarios(scenario, label: str) -> tuple[dict, dict, list[str]]:
    """Run ``scenario`` under the software scheduler and under hardware scheduling (see
    :mod:`wddmsim.compare`): the two summaries and what was translated."""
    from .compare import checked, variants
    from .scenario import ScenarioError

    software, hardware, notes = variants(scenario)
    out = []
    for mode, sc in (("software", software), ("hardware", hardware)):
        where = f"{label} ({mode} run)"
        try:
            run_sc = checked(sc, where)
        except ScenarioError as e:
            raise ScenarioProblems([str(e)]) from None
        system = build_system(run_sc, verifier="strict")
        result = system.run()
        if result.bugcheck is not None:
            raise UserError(f"{where}: the run stopped with bug check {result.bugcheck.bugcheck}")
        out.append(result.summary)
    return out[0], out[1], notes


@main.command("compare")
@click.argument("scenario", type=click.Path(dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print both summaries side by side as JSON.")
def compare_cmd(scenario: str, as_json: bool) -> None:
    """Run SCENARIO under the software scheduler and under hardware scheduling, side by side:
    latency per context and the CPU-side cost per submission."""
    sc = _load(scenario)
    sw, hw, notes = compare_scenarios(sc, scenario)
    con = _console()
    if as_json:
        click.echo(json.dumps({"software": sw, "hardware": hw, "translations": notes}, indent=2))
        return
    for note in notes:
        con.print(f"[dim]{note}[/dim]")
    t = Table(title=f"{sc.name or scenario}: software vs hardware scheduling ({_ms(sw['virtual_time_ns'])})")
    t.add_column("context")
    for mode in ("sw", "hw"):
        for col in ("done", "p50", "p99", "max"):
            t.add_column(f"{mode} {col}", justify="right")
    hw_ctx = {c["context"]: c for c in hw["contexts"]}
    for c in sw["contexts"]:
        h = hw_ctx.get(c["context"], {})
        t.add_row(c["context"], str(c["completed"]), _ms(c["latency_p50_ns"]), _ms(c["latency_p99_ns"]),
                  _ms(c["latency_max_ns"]), str(h.get("completed", "")), _ms(h.get("latency_p50_ns")),
                  _ms(h.get("latency_p99_ns")), _ms(h.get("latency_max_ns")))
    con.print(t)
    cpu = Table(title="CPU-side cost of the submission path (modelled)")
    cpu.add_column("scheduler")
    cpu.add_column("submissions", justify="right")
    cpu.add_column("CPU total", justify="right")
    cpu.add_column("per submission", justify="right")
    cpu.add_column("interrupts", justify="right")
    cpu.add_column("DPCs", justify="right")
    for name, s in (("software", sw), ("hardware", hw)):
        c = s["cpu"]
        cpu.add_row(name, str(c["submissions"]), _ms(c["total_ns"]), f"{c['per_submission_ns'] / 1000:.2f} us",
                    str(s["interrupts"]), str(s["dpcs"]))
    con.print(cpu)


@main.command("demo")
@click.option("--events", type=click.Path(dir_okay=False), default=None, help="Also write the event log as JSON Lines.")
def demo_cmd(events) -> None:
    """Run the built-in scenario: a game, a compute job, a copy stream and a bursty client at once."""
    from .demo import run_demo

    raise SystemExit(run_demo(_console(), events))


# ---------------------------------------------------------------------------------------- rules
from .rulescmd import rules_cmd  # noqa: E402  (the command lives in its own module)
from .sweepcmd import sweep_cmd  # noqa: E402  (likewise)
from .replaycmd import replay_cmd  # noqa: E402  (likewise)
from .structcmd import decode_cmd, layout_cmd  # noqa: E402  (likewise)

main.add_command(rules_cmd)
main.add_command(sweep_cmd)
main.add_command(replay_cmd)
main.add_command(layout_cmd)
main.add_command(decode_cmd)
