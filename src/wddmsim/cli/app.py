"""The ``wddmsim`` command line.

``run`` runs a scenario and prints its summary (drawn by :mod:`wddmsim.output.summaryview`, the object
described in :mod:`wddmsim.output.summary`), ``demo`` shows what crosses the DDI for one submission,
``verify`` runs the conformance suite; ``layout`` and ``decode`` (which read the DDI structures the
way a debugger's ``dt`` does) live in :mod:`wddmsim.cli.structures`, and ``rules``, ``sweep``,
``replay`` and ``check`` in modules of their own, which import nothing from here and are imported
only when their command runs (:data:`LAZY_COMMANDS`). Nothing here imports rich or the model at
the top, so that ``wddmsim --version`` and ``--help`` import click alone
(tests/test_cli_startup.py). Bad input from a person (an unknown structure, bytes of the wrong
length, text that is not hex, a missing file) gets one clear line on stderr and exit status 2,
never a traceback (:mod:`wddmsim.cli.util` holds what the commands share).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .. import __version__
from .util import (ScenarioProblems, UserError, WddmsimGroup, build_system, check_directory, check_writable, console,
                      load_driver, load_scenario_file, parse_duration_option, parse_settings, parse_size_option,
                      read_log, with_failures)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ScenarioProblems", "UserError", "build_system", "execute", "load_driver", "main", "parse_settings"]

#: The commands that live in modules of their own (none imports this one), imported only when the
#: command runs or shows its own help, so that ``wddmsim --version`` and ``wddmsim run`` import
#: neither the rule catalogue, the DDI layout tables nor the replay and sweep machinery: name ->
#: ("module:command", the first sentence of its help, all ``wddmsim --help`` shows of it;
#: tests/test_cli_startup.py checks it against the command's own help).
LAZY_COMMANDS = {
    "check": ("wddmsim.cli.check:check_cmd",
              "Check an event log (written with --events) with the packet ledger: every packet, flip, paging "
              "operation and progress fence created is accounted for exactly once, and the totals agree with "
              "the log's LogEnd summary."),
    "decode": ("wddmsim.cli.structures:decode_cmd",
               "Every field of a DDI structure from its bytes (HEX, or @FILE for a binary file), or a crash "
               "record written by ``wddmsim run`` (``wddmsim decode @RECORD``: the stop, each bug-check "
               "parameter explained, the rule the driver broke and the structure)."),
    "layout": ("wddmsim.cli.structures:layout_cmd",
               "Size and every member's offset, size and C type of a DDI structure, like a debugger's dt (or, "
               "with --list, every type the model knows)."),
    "replay": ("wddmsim.cli.replay:replay_cmd",
               "Replay CAPTURE (a PresentMon CSV in any of its three column sets) in the model: rebuild the "
               "machine's processes, swap chains, frames and display from it, run them, and print the model "
               "against the capture per swap chain (presents, present mode, frame time, time in Present, GPU "
               "busy, display latency, dropped frames) with the targets each meets."),
    "rules": ("wddmsim.cli.rules:rules_cmd",
              "How the model accounts for each checkable DDI rule: its status, what it says, where it is "
              "checked and which tests break it."),
    "sweep": ("wddmsim.cli.sweep:sweep_cmd",
              "Run SCENARIO for every combination of --set values and --seeds; one row of figures per run."),
}

@click.group(cls=WddmsimGroup, lazy_commands=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: an executable model of how Windows submits work to a GPU (WDDM).

    \b
    Exit status: 0 ok; 1 a rule broken (verify, decode, check) or a target
    missed (replay --check); 2 bad input, or an output that cannot be
    written (one line naming it; a run's own 1, 3, 5 or 130 stands); 3 the
    run ended in a bug check; 4 a model bug (the packet ledger found work
    the model lost track of: "internal error: ...", with its history); 5 a
    budget stopped the run (--max-events, --max-log-bytes); 130 interrupted
    (SIGINT, SIGTERM).
    """


def _print_bugcheck(con: Console, record: dict) -> None:
    """What the summary's own bug-check block leaves out of the stop a crash record holds (why it
    stopped, what happened, the driver's traceback): the stop and its parameters are not printed a
    second time (``wddmsim decode @RECORD`` shows them all)."""
    from .structures import print_stop

    print_stop(con, record, parameters=False)


# ---------------------------------------------------------------------------------------- run
def execute(scenario, *, seed=None, until=None, events=None, as_json=False, verifier="strict",
            crash_record="wddmsim-crash.json", con: Console | None = None, trace=None, presentmon=None,
            report=None, driver=None, memory=False, wide=False, max_events=None, max_log_bytes=None) -> int:
    """Build and run ``scenario``; print its summary (:mod:`wddmsim.output.summary`: tables, every column
    with ``wide``, or JSON); return the exit status (3 after a bug check). ``trace``: also write
    the run's timeline as Chrome trace JSON there; ``presentmon``: the PresentMon-style CSV of its
    presents; ``report``: the report folder; ``driver``: the driver's class (instead of the
    scenario's). On standard error after the run: its wall time and real-time factor, and with
    ``memory`` the peak resident memory (:mod:`wddmsim.runner.cost`); after a bug check with ``as_json``,
    where its crash record went. None of these is in the summary, which the seed decides.

    SIGINT and SIGTERM, and the budgets ``max_events`` (kernel events) and ``max_log_bytes`` (bytes
    of the ``events`` log), end the run early at the current virtual time with every output
    written from what ran (:mod:`wddmsim.runner.stop`): one line on standard error says where and why,
    and the status is 130 after a signal, 5 after a budget. Before a long run with ``events``, the
    log's estimated size goes to standard error (:mod:`wddmsim.runner.logestimate`).

    An output that cannot be written once the run has started (a full disk, a read-only report
    folder; :class:`~wddmsim.trace.output.WriteFailed`) stops neither the run nor the other
    outputs: everything that can be written is, the summary is printed, and then one line per
    output that could not be written, ``wddmsim: error: PATH: cannot write: REASON``, ends
    standard error. The status is then the run's own when that is not 0 (3 after a bug check, 5,
    130), else 2. An event log that fails keeps the lines written before (the run goes on without
    it)."""
    from ..runner.stop import RunStop, interrupts

    if max_log_bytes is not None and not events:
        raise UserError("--max-log-bytes: goes with --events FILE (it bounds that log)")
    stop = RunStop(max_events=max_events, max_log_bytes=max_log_bytes)
    with interrupts(stop):
        return _execute(scenario, stop, seed=seed, until=until, events=events, as_json=as_json, verifier=verifier,
                        crash_record=crash_record, con=con, trace=trace, presentmon=presentmon, report=report,
                        driver=driver, memory=memory, wide=wide)


def _execute(scenario, stop, *, seed, until, events, as_json, verifier, crash_record, con, trace, presentmon,
             report, driver, memory, wide) -> int:
    """:func:`execute`'s work, with the signal handlers in place."""
    from ..runner.cost import memory_line, peak_rss_bytes, timing_line, writer_peak_rss_bytes
    from ..runner.progress import progress_for
    from ..runner.stop import exit_status, stop_line
    from ..output.summaryview import print_summary
    from ..output.summaryview import plural
    from ..trace import JsonlSink, ListSink, TeeSink
    from ..trace.output import WriteFailed, written_line

    failed: list[str] = []  # one line per output that could not be written, shown at the end
    sink = None
    if events:
        try:
            sink = JsonlSink(events)
        except OSError as e:
            raise UserError(f"{events}: cannot write: {e.strerror}") from None
        stop.log_bytes = sink.size
    log_sink = sink
    collected = None
    if report:
        check_directory(report)
    if trace or presentmon or report:
        for path in (trace, presentmon):
            if path:
                check_writable(path)
        collected = ListSink()
        sink = collected if sink is None else TeeSink(sink, collected)
    con = con or console(wide)
    try:
        system = build_system(scenario, seed=seed, trace=sink, verifier=verifier, driver=driver)
        if events:
            _print_estimate(scenario, until, stop, seed=seed, verifier=verifier, driver=driver)
        rss_before = peak_rss_bytes() if memory else None
        progress = progress_for(con, as_json)
        try:
            result = system.run(until, on_progress=progress, stop=stop)
        finally:
            if progress is not None:
                progress.finish()
    finally:
        close = getattr(sink, "close", None)
        if close is not None:
            try:
                close()
            except WriteFailed as e:  # the event log: the run and the other outputs go on
                failed.append(str(e))
    stop.outputs = True  # a second signal from here on ends the process at once
    rss_peak = peak_rss_bytes() if memory else None  # before the outputs made from the collected events
    rss_writer = (writer_peak_rss_bytes() if memory and log_sink is not None and not log_sink.in_process
                  else None)

    wrote: list[str] = []  # one line per file written, said on standard error at the end

    def attempt(write, *args):
        try:
            return write(*args)
        except WriteFailed as e:
            failed.append(str(e))
            return None

    if events and not any(line.startswith(f"{events}:") for line in failed):
        wrote.append(written_line(events, f"the event log, {plural(log_sink.count, 'event')}"))
    if trace:
        from ..trace.chrome import write_chrome_trace

        n = attempt(write_chrome_trace, collected.events, trace)
        if n is not None:
            wrote.append(written_line(trace, f"the timeline as Chrome trace JSON, {plural(n, 'trace event')}"))
    if presentmon:
        from ..trace.presentmon import write_presentmon_csv

        n = attempt(write_presentmon_csv, collected.events, presentmon)
        if n is not None:
            wrote.append(written_line(presentmon, f"PresentMon CSV, {plural(n, 'present')}"))
    if report:
        from ..output.report import write_report

        files = attempt(write_report, collected.events, report)
        wrote += [written_line(path) for path in files or ()]
    record = None  # where the crash record went
    if result.bugcheck is not None:
        try:
            result.bugcheck.write(crash_record)
            record = crash_record
        except OSError as e:
            failed.append(str(WriteFailed(crash_record, e, "cannot write the crash record")))
    if as_json:
        import json

        click.echo(json.dumps(result.summary, indent=2))
        if record is not None:
            click.echo(f"crash record: {record} (read it with: uv run wddmsim decode @{record})", err=True)
    else:
        print_summary(con, result.summary, wide=wide)
        if result.bugcheck is not None:
            _print_bugcheck(con, result.bugcheck.to_json())
            if record is not None:
                con.print(f"  Crash record: {record} (read it with: uv run wddmsim decode @{record})", markup=False)
    for fault in system.runtime.umd_faults:  # the user-mode driver's: each ended an application
        click.echo(f"wddmsim: {fault.line}", err=True)
    line = stop_line(stop, result.end)
    if line:
        click.echo(line, err=True)
    for text in wrote:
        click.echo(text, err=True)
    click.echo(timing_line(result.end, result.wall_s), err=True)
    if memory:
        click.echo(memory_line(rss_peak, rss_before, rss_writer), err=True)
    return with_failures(exit_status(stop, 3 if result.bugcheck is not None else 0), failed)


def _print_estimate(scenario, until, stop, **system_kw) -> None:
    """Before a long run with an event log (or one with --max-log-bytes): the log's estimated size
    on standard error (:mod:`wddmsim.runner.logestimate`). A log estimated far past a busy run's with no
    --max-log-bytes gets one by default (:func:`wddmsim.runner.logestimate.default_budget`), said on the
    next line."""
    from ..runner.logestimate import default_budget, estimate_line, estimate_log, size_text, wants_estimate

    duration = scenario.duration if until is None else until
    if not wants_estimate(duration, stop.max_log_bytes):
        return
    est = estimate_log(scenario, duration, stop=stop, **system_kw)
    if est is None:
        return
    budget = default_budget(est) if stop.max_log_bytes is None else None
    click.echo(estimate_line(est, stop.max_log_bytes if budget is None else budget), err=True)
    if budget is not None:
        stop.max_log_bytes = budget
        click.echo(f"wddmsim: --max-log-bytes {size_text(budget)} applied by default: the log is estimated at over ten "
                   f"times a busy run's (about 3 MB per virtual second); give --max-log-bytes SIZE to choose "
                   f"another bound", err=True)


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=True))
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed for every random stream [default: the scenario's].")
@click.option("--until", default=None, help="Virtual time to stop at, e.g. 500ms; at most 3600s [default: the scenario's duration].")
@click.option("--events", type=click.Path(dir_okay=False), default=None, help="Write the event log as JSON Lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (every figure; the same bytes on every run).")
@click.option("--wide", is_flag=True, help="Show every column of the summary's tables (wider than 100 columns).")
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
@click.option("--policy", "policy", default=None, metavar="NAME",
              help="The OS scheduler's policy instead of the scenario's: a shipped one (wddmsim policies) or "
                   "'path/file.py:Class' (docs/policies.md); its settings with --set scheduler.KEY=VALUE.")
@click.option("--memory", is_flag=True,
              help="After the run, print the peak resident memory (VmHWM on Linux) on stderr.")
@click.option("--max-events", type=click.IntRange(min=0), default=None, metavar="N",
              help="Stop the run after N kernel events (the summary's 'events'), LogEnd reason max_events; exit status 5.")
@click.option("--max-log-bytes", default=None, metavar="SIZE",
              help="Stop the run once the --events log holds SIZE bytes (200MB, 1GiB), checked every 1024 kernel "
                   "events; LogEnd reason max_log_bytes; exit status 5.")
def run_cmd(scenario: str, seed, until, events, as_json, wide, verifier, crash_record, trace_path, presentmon,
            report_dir, driver, sets, policy, memory, max_events, max_log_bytes) -> None:
    """Run a scenario file and print its summary (exit status 3 if it ends in a bug check; a
    driver that does not load or that Windows would not start: 2). ``--set`` changes the file's
    values before they are checked (see docs/scenarios.md). The tables, ``--json``, ``--report``
    and the event log's last line hold the same summary (docs/timeline.md, "The run summary").
    The run's wall time and real-time factor (virtual seconds per wall second) follow on stderr,
    never in the summary or the event log, which stay the same from run to run. An output that
    cannot be written (a full disk, a read-only folder) stops nothing else: the summary and every
    other output are written, then one line per output that failed, "wddmsim: error: PATH: cannot
    write: REASON", and the status is 2 (or the run's own 3, 5 or 130).

    Ctrl-C (SIGINT) or SIGTERM ends the run at the current virtual time with every output written
    from what ran (the event log's LogEnd says "interrupted"), exit status 130; --max-events and
    --max-log-bytes end it the same way, exit status 5. Before a run of 1 s of virtual time or
    more with --events, the log's estimated size is printed on stderr (docs/timeline.md,
    "Stopping a run early")."""
    if policy is not None:
        sets = (*sets, f"scheduler.policy={policy}")
    limit = parse_duration_option(until, "--until")
    sc = load_scenario_file(scenario, sets, None if limit is None else (limit, until))
    budget = parse_size_option(max_log_bytes, "--max-log-bytes")
    cls = load_driver(driver) if driver else None
    status = execute(sc, seed=seed, until=limit, events=events, as_json=as_json, verifier=verifier,
                     crash_record=crash_record, trace=trace_path, presentmon=presentmon, report=report_dir,
                     driver=cls, memory=memory, wide=wide, max_events=max_events, max_log_bytes=budget)
    raise SystemExit(status)


@main.command("policies")
@click.option("--show", "show", default=None, metavar="NAME",
              help="Print the source of the shipped policy NAME (a starting point to copy).")
@click.option("--gpu", "gpu", is_flag=True,
              help="With --show: the GPU scheduler's policy of that name (hardware scheduling), where both "
                   "schedulers have one.")
def policies_cmd(show: str | None, gpu: bool) -> None:
    """The scheduling policies shipped with wddmsim: NAME for [scheduler] policy, --policy and
    sweeps, the scheduling mode each is for, and what each does. Under software scheduling a name
    is the OS scheduler's policy, under hardware scheduling ([adapter] scheduling = "hardware") the
    GPU's own scheduler's. A researcher's own policy is a class in a file ('path/file.py:Class'),
    written as docs/policies.md shows."""
    import inspect
    import importlib

    from ..policies.names import SHIPPED, SHIPPED_GPU

    def where(module: str, hardware: bool) -> str:
        if module == "builtin":
            return "wddmsim.gpu.policy" if hardware else "wddmsim.dxgkrnl.policy"
        return f"wddmsim.policies.{module}"

    if show is not None:
        hardware = gpu or show not in SHIPPED
        table = SHIPPED_GPU if hardware else SHIPPED
        if show not in table:
            names = ", ".join(table) if gpu else ", ".join([*SHIPPED, *(n for n in SHIPPED_GPU if n not in SHIPPED)])
            raise UserError(f"--show {show!r}: no shipped {'GPU ' if gpu else ''}policy of that name; they are {names}")
        module, cls_name, _ = table[show]
        mod = importlib.import_module(where(module, hardware))
        click.echo(inspect.getsource(mod), nl=False)
        return
    rows = [(n, "software", *v) for n, v in SHIPPED.items()] + [(n, "hardware", *v) for n, v in SHIPPED_GPU.items()]
    import textwrap

    from ..output.summaryview import WIDTH

    width = max(len(r[0]) for r in rows)
    indent = " " * (width + 12)
    for name, mode, module, cls_name, what in rows:  # the description wrapped to fit WIDTH columns
        text = f"{what}  [{where(module, mode == 'hardware')}:{cls_name}]"
        click.echo("\n".join(textwrap.wrap(text, WIDTH, initial_indent=f"{name:<{width}}  {mode:<8}  ",
                                            subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)))


@main.command("report")
@click.argument("events_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The report folder (summary.md, summary.json, PNG plots).")
def report_cmd(events_file: str, output: str) -> None:
    """Make the report folder of a run from its saved event log: the summary the log's last line
    carries (the one ``wddmsim run`` printed) and the plots. A partial log (the run was stopped
    early) says so on stderr and on summary.md's first line; a log cut short carries no summary:
    the plots are written, summary.md says the summary is missing, and there is no summary.json."""
    from ..output.report import write_report
    from ..output.summary import NoSummary, from_log
    from ..trace.ending import log_ending
    from ..trace.output import WriteFailed

    events = read_log(events_file)
    cut = log_ending(events).reason is None
    if not cut:
        try:
            from_log(events)
        except NoSummary as e:
            raise UserError(f"{events_file}: {e}") from None
    check_directory(output)
    try:
        files = write_report(events, output)
    except WriteFailed as e:
        raise UserError(str(e)) from None
    if cut:
        click.echo(f"wddmsim: {events_file}: no run summary (it is written when a run ends): "
                   f"summary.md says so and summary.json is not written", err=True)
    click.echo(f"{output}: {len(files)} files from {len(events)} log events")


@main.command("trace")
@click.argument("events_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where the Chrome trace JSON goes (open it in ui.perfetto.dev or chrome://tracing).")
def trace_cmd(events_file: str, output: str) -> None:
    """Turn an event log written with --events into a Chrome trace timeline."""
    from ..trace.chrome import write_chrome_trace
    from ..trace.output import WriteFailed

    events = read_log(events_file)
    check_writable(output)
    try:
        n = write_chrome_trace(events, output)
    except WriteFailed as e:
        raise UserError(str(e)) from None
    click.echo(f"{output}: {n} trace events from {len(events)} log events")


# ---------------------------------------------------------------------------------------- verify
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
    Exit status 0 only when every case that applies passes (1 otherwise, 2 for bad input). A
    --junit file that cannot be written: the verdict is printed, then one line saying why, and the
    status is 2 when every case passed (1 stands). Ctrl-C (SIGINT) or SIGTERM stops the suite where
    it is: the verdict covers the cases that ran and says so, exit status 130 (a driver call that
    never returns is stopped by the DDI watchdog: docs/verify.md)."""
    from ..verify import select, verify
    from ..verify.output import junit_xml, print_report, report_json

    from ..dxgkrnl.errors import AdapterStartError
    from ..runner.system import ConfigError

    cls = load_driver(driver)
    settings = parse_settings(sets)
    try:
        select(only)
    except ValueError as e:
        raise UserError(f"--only: {e}") from None
    if junit:
        check_writable(junit)
    con = console()
    try:
        report = verify(cls, only=only, name=driver, settings=settings, interruptible=True)
    except ConfigError as e:
        raise ScenarioProblems([f"{driver}: {p}: {r}" for p, r in e.problems]) from None
    except AdapterStartError as e:
        raise ScenarioProblems([f"{driver}: the adapter does not start: {p}" for p in e.problems]) from None
    failed = []
    if junit:
        failed += _write_bytes(junit, junit_xml(report))
    if as_json:
        import json

        click.echo(json.dumps(report_json(report), indent=2))
    else:
        print_report(con, report)
    from ..runner.stop import EXIT_INTERRUPTED

    raise SystemExit(with_failures(EXIT_INTERRUPTED if report.interrupted else 0 if report.passed else 1, failed))


def _write_bytes(path: str, data: bytes) -> list[str]:
    """Write ``data`` to ``path``: [] when written, else the one line saying why not."""
    from ..trace.output import WriteFailed

    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        return [str(WriteFailed(path, e))]
    return []


# ---------------------------------------------------------------------------------------- demo
def compare_scenarios(scenario, label: str) -> tuple[dict, dict, list[str]]:
    """Run ``scenario`` under the software scheduler and under hardware scheduling (see
    :mod:`wddmsim.runner.compare`): the two summaries and what was translated."""
    from ..runner.compare import checked, variants
    from ..scenario import ScenarioError

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
    from ..output.summaryview import print_table, time_cell, time_text

    sc = load_scenario_file(scenario)
    sw, hw, notes = compare_scenarios(sc, scenario)
    con = console()
    if as_json:
        import json

        click.echo(json.dumps({"software": sw, "hardware": hw, "translations": notes}, indent=2))
        return
    for note in notes:
        con.print(f"[dim]{note}[/dim]")
    hw_ctx = {c["context"]: c for c in hw["contexts"]}
    rows = []
    for c in sw["contexts"]:
        h = hw_ctx.get(c["context"], {})
        rows.append([c["context"], f"{c['completed']} / {h.get('completed', '-')}",
                     *(time_cell(x.get(f"latency_{p}_ns")) for p in ("p50", "p99", "max") for x in (c, h))])
    print_table(con, f"{sc.name or scenario}, {time_text(sw['virtual_time_ns'])} of virtual time: software (sw) vs "
                     f"hardware (hw) scheduling",
                ["context", "completed\nsw / hw", *(f"{p}\n{mode}" for p in ("p50", "p99", "max") for mode in ("sw", "hw"))],
                rows)
    con.print()
    print_table(con, "CPU-side cost of the submission path (modelled)",
                ["scheduler", "submissions", "CPU total", "per submission", "interrupts", "DPCs"],
                [[name, str(s["cpu"]["submissions"]), time_cell(s["cpu"]["total_ns"]),
                  time_cell(s["cpu"]["per_submission_ns"]), str(s["interrupts"]), str(s["dpcs"])]
                 for name, s in (("software", sw), ("hardware", hw))])


@main.command("demo")
@click.option("--events", type=click.Path(dir_okay=False), default=None, help="Also write the event log as JSON Lines.")
@click.option("--wide", is_flag=True, help="Show every column of the summary's tables (wider than 100 columns).")
def demo_cmd(events, wide) -> None:
    """Run the built-in scenario: a game, a compute job, a copy stream and a bursty client at once."""
    from .demo import run_demo

    raise SystemExit(run_demo(console(wide), events, wide=wide))
