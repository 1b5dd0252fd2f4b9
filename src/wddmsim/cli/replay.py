"""``wddmsim replay``: run a real PresentMon capture in the model and compare the two, swap chain by
swap chain (the work is :mod:`wddmsim.replay`'s; this module reads the options, writes the outputs
and turns bad input into one line on stderr with exit status 2). docs/replay.md is the guide.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("replay")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("--emit", type=click.Path(dir_okay=False), default=None,
              help="Write the scenario rebuilt from the capture as TOML, to edit and replay with --scenario.")
@click.option("--scenario", "scenario_path", type=click.Path(dir_okay=False), default=None,
              help="Replay this scenario (an edited --emit file) instead of the one rebuilt from the capture.")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Change a value of the scenario before it runs, as for 'wddmsim run' (repeatable).")
@click.option("--presentmon", type=click.Path(dir_okay=False), default=None,
              help="Write the model's frames as PresentMon CSV, in the capture's column set and header.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="Write the run's timeline as Chrome trace JSON (open it in Perfetto).")
@click.option("--events", type=click.Path(dir_okay=False), default=None, help="Write the run's event log as JSON Lines.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write plots of frame time and display latency (real over model), both CSVs and the comparison.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON instead of tables.")
@click.option("--check", is_flag=True, help="Exit with status 1 when a target is missed.")
@click.option("--verifier", type=click.Choice(["strict", "report", "off"]), default="strict", show_default=True,
              help="The verifier's mode in the run.")
@click.option("--max-events", type=click.IntRange(min=0), default=None, metavar="N",
              help="Stop the model's run after N kernel events, as 'wddmsim run --max-events' does; exit status 5.")
def replay_cmd(capture, emit, scenario_path, sets, presentmon, trace_path, events, report_dir, as_json, check,
               verifier, max_events) -> None:
    """Replay CAPTURE (a PresentMon CSV in any of its three column sets) in the model: rebuild the
    machine's processes, swap chains, frames and display from it, run them, and print the model
    against the capture per swap chain (presents, present mode, frame time, time in Present, GPU
    busy, display latency, dropped frames) with the targets each meets. Exit status 2 for a file
    that is not a capture; with --check, 1 when a target is missed. Ctrl-C (SIGINT) or SIGTERM
    stops the model's run where it is: the outputs and the comparison cover what ran, a line on
    stderr says so, exit status 130; --max-events stops it the same way, exit status 5."""
    from ..runner.stop import RunStop, interrupts

    stop = RunStop(max_events=max_events)
    with interrupts(stop):
        _replay(stop, capture, emit, scenario_path, sets, presentmon, trace_path, events, report_dir, as_json, check,
                verifier)


def _replay(stop, capture, emit, scenario_path, sets, presentmon, trace_path, events, report_dir, as_json, check,
            verifier) -> None:
    """``wddmsim replay``'s work, with the signal handlers of ``stop`` in place."""
    from ..runner.stop import exit_status, stop_line
    from .util import ScenarioProblems, UserError
    from .util import check_directory as _check_directory, check_writable as _check_writable, console as _console
    from ..replay.capture import CaptureError, read_capture
    from ..replay.columns import write_capture_csv
    from ..replay.compare import compare, comparison_json, print_comparison
    from ..replay.run import replay
    from ..replay.scenario import build_scenario, capture_shift, scenario_toml
    from ..scenario import OverrideError, ScenarioError, parse_override, scenario_from_dict

    try:
        cap = read_capture(capture)
    except CaptureError as e:
        raise UserError(str(e)) from None
    for path in (emit, presentmon, trace_path):
        if path:
            _check_writable(path)
    if report_dir:
        _check_directory(report_dir)
    name = Path(capture).stem
    try:
        data = build_scenario(cap, name)
    except ValueError as e:
        raise UserError(str(e)) from None
    if emit:
        from ..trace.output import reason

        try:
            Path(emit).write_text(scenario_toml(data, f"wddmsim replay {capture}: the scenario rebuilt from the "
                                                      f"capture.\nEdit it and run it again with: uv run wddmsim replay "
                                                      f"{capture} --scenario {emit}"))
        except OSError as e:
            raise UserError(f"{emit}: cannot write: {reason(e)}") from None
    from ..trace.output import written_line

    # Every file written, said on standard error at the end (one line each).
    wrote = [written_line(emit, "the scenario rebuilt from the capture")] if emit else []
    try:
        overrides = [parse_override(text) for text in sets]
        if scenario_path:
            from ..scenario import load_scenario

            sc = load_scenario(scenario_path, overrides)
        else:
            sc = scenario_from_dict(data, f"<replay of {capture}>", overrides)
    except OverrideError as e:
        raise UserError(str(e)) from None
    except ScenarioError as e:
        raise ScenarioProblems(e.problems) from None
    from .util import build_system, show_warnings

    show_warnings(sc.warnings)
    from ..trace import JsonlSink, ListSink, TeeSink
    from ..trace.presentmon import ROW_EVENTS
    from ..trace.sinks import KindsSink

    sink = None
    if events:
        try:
            sink = JsonlSink(events)
        except OSError as e:
            raise UserError(f"{events}: cannot write: {e.strerror}") from None
    # The frames need few of the run's events; the timeline needs them all.
    collected = ListSink() if trace_path else KindsSink(ROW_EVENTS)
    try:
        system = build_system(sc, trace=collected if sink is None else TeeSink(sink, collected), verifier=verifier)
        result = replay(system, collected, capture_shift(cap), stop=stop)
    finally:
        if sink is not None:
            sink.close()
    stop.outputs = True  # a second signal from here on ends the process at once
    comparisons = compare(cap, result.frames)
    con = _console()
    # Each output is written on its own: one that cannot be written is one line at the end, and
    # the others, the comparison and the exit status are as they would be without it.
    failed: list[str] = []
    if events and sink is not None:
        wrote.append(written_line(events, f"the event log, {sink.count} events"))
    if presentmon and _attempt(failed, presentmon, _write_model_csv, write_capture_csv, result.frames, presentmon,
                               cap) is not None:
        wrote.append(written_line(presentmon, f"the model's frames in the capture's column set, {len(result.frames)} presents"))
    if trace_path:
        from ..trace.chrome import write_chrome_trace

        n = _attempt(failed, trace_path, write_chrome_trace, result.events, trace_path)
        if n is not None:
            wrote.append(written_line(trace_path, f"the timeline as Chrome trace JSON, {n} trace events"))
    if report_dir:
        wrote += [written_line(path) for path in _write_report(report_dir, cap, result, comparisons, write_capture_csv, failed)]
    if as_json:
        click.echo(json.dumps(comparison_json(comparisons, result.stopped), indent=2))
    else:
        con.print(f"{capture}: {len(cap.frames)} presents in the {cap.column_set} column set; "
                  f"model: {len(result.frames)} presents")
        print_comparison(con, comparisons)
    for text in wrote:
        click.echo(text, err=True)
    line = stop_line(stop, result.end)
    if line:
        click.echo(line.replace("the outputs cover", "the model's outputs and the comparison cover"), err=True)
    from .util import with_failures

    if result.bugcheck is not None:
        click.echo(f"wddmsim: the replay ended in bug check 0x{int(result.bugcheck.bugcheck.code):X}: {result.bugcheck.message}",
                   err=True)
        raise SystemExit(with_failures(exit_status(stop, 3), failed))
    status = with_failures(exit_status(stop, 1 if check and not all(c.passed for c in comparisons) else 0), failed)
    if status:
        raise SystemExit(status)


def _attempt(failed: list[str], path, write, *args):
    """``write(*args)``, which writes ``path``, and what it returned (``True`` when that is None);
    a failure is added to ``failed`` as its one line (``PATH: cannot write: REASON``) instead of
    ending the command, and gives None."""
    from ..trace.output import WriteFailed, reason

    try:
        done = write(*args)
    except WriteFailed as e:
        failed.append(str(e))
        return None
    except OSError as e:
        failed.append(f"{getattr(e, 'filename', None) or path}: cannot write: {reason(e)}")
        return None
    return True if done is None else done


def _write_model_csv(write, frames, path, cap) -> None:
    write(frames, path, cap.column_set, qpc_frequency=cap.qpc_frequency, qpc_origin=cap.qpc_origin,
          columns=cap.columns, session_start_qpc=cap.session_start_qpc)


def _write_report(directory: str, cap, result, comparisons, write, failed: list[str]) -> list[str]:
    """The report folder: the plots, the capture's and the model's frames as CSV in the capture's
    column set, and the comparison as JSON (its ``stopped`` says why a run that stopped early did,
    the report then covering what ran); returns the files written. A file that cannot be written
    is added to ``failed`` and the others are still written."""
    import functools

    from ..replay.compare import comparison_json
    from ..replay.plots import plot_comparison
    from ..trace.output import reason

    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        failed.append(f"{out}: cannot create the report folder: {reason(e)}")
        return []
    text = json.dumps(comparison_json(comparisons, result.stopped), indent=2) + "\n"
    plots = _attempt(failed, out, functools.partial(plot_comparison, comparisons=comparisons), cap, result.frames, out)
    written = [str(p) for p in plots] if isinstance(plots, list) else []
    for name, frames in (("model.csv", result.frames), ("capture.csv", cap.frames)):
        if _attempt(failed, out / name, _write_model_csv, write, frames, out / name, cap) is not None:
            written.append(str(out / name))
    if _attempt(failed, out / "comparison.json", (out / "comparison.json").write_text, text) is not None:
        written.append(str(out / "comparison.json"))
    return written
