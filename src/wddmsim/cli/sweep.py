"""``wddmsim sweep``: a scenario run for every combination of ``--set`` values and ``--seeds``, one
row of figures per run (the work is :mod:`wddmsim.sweep`'s; this module reads the options, shows
the progress bar, writes the CSV, JSON, plot and policy comparison, and turns bad input into one
line per problem on stderr with exit status 2). docs/sweeps.md is the guide.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
from rich.console import Console


@click.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="PATH=V1,V2,...",
              help="A setting to sweep: PATH as in the scenario file, its values split at commas; repeatable. "
                   "The runs are the cross product of every setting and seed.")
@click.option("--seeds", default=None, metavar="LIST", help="Seeds: 1-10, 1,3,5 or a mix [default: the scenario's].")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (1: one run after the other here) [default: the number of CPUs].")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Send the runs to this Dask scheduler (tcp://host:8786) instead; needs wddmsim[cluster].")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the rows as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array on stdout.")
@click.option("--plot", "plot_metric", default=None, metavar="METRIC",
              help="Draw this figure (a column, e.g. contexts.0.latency_p99_ns) against the swept setting.")
@click.option("--x", "x_setting", default=None, metavar="SETTING",
              help="The setting on the plot's x axis when several vary (the others give one line each).")
@click.option("--series", "series_setting", default=None, metavar="SETTING",
              help="The setting whose values are the plot's lines (e.g. scheduler.policy); every setting but it "
                   "and --x must then take one value.")
@click.option("--plot-file", default=None, type=click.Path(dir_okay=False),
              help="Where the PNG goes [default: next to the CSV, NAME-METRIC.png].")
@click.option("--report", "report_dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Write the policy comparison (DIR/policy_comparison.png: latency CDF and deadline misses per "
                   "scheduler.policy value) from the rows; needs --set scheduler.policy=...")
@click.option("--verifier", type=click.Choice(["strict", "report", "off"]), default="strict", show_default=True,
              help="The verifier's mode in every run.")
@click.option("--max-events", type=click.IntRange(min=0), default=None, metavar="N",
              help="Stop each run after N kernel events; its row's error says 'stopped early'.")
def sweep_cmd(scenario, sets, seeds, workers, dask_address, output, as_json, plot_metric, x_setting, series_setting,
              plot_file, report_dir, verifier, max_events) -> None:
    """Run SCENARIO for every combination of --set values and --seeds; one row of figures per run.

    A row holds the settings, the seed, an error (empty unless the run failed) and every figure
    of the run's summary with dotted names (nodes.0.busy_pct). The rows are in the order of the
    cross product and the same byte for byte whatever the executor. Ctrl-C (SIGINT) or SIGTERM
    stops the sweep: the runs under way end, the rows of those that finished are written, a line
    says how many of how many, exit status 130. --plot draws a column against a setting (one line
    per --series value); --report DIR compares the swept scheduler policies. See docs/sweeps.md."""
    from ..runner.stop import RunStop, interrupts

    stop = RunStop()
    with interrupts(stop):
        _sweep(stop, scenario, sets, seeds, workers, dask_address, output, as_json, plot_metric, x_setting,
               plot_file, verifier, max_events, series_setting, report_dir)


def _sweep(stop, scenario, sets, seeds, workers, dask_address, output, as_json, plot_metric, x_setting, plot_file,
           verifier, max_events, series_setting=None, report_dir=None) -> None:
    """``wddmsim sweep``'s work, with the signal handlers of ``stop`` in place."""
    import time

    from .util import ScenarioProblems, UserError, check_directory, show_warnings
    from .util import check_writable as _check_writable
    from ..sweep import DaskMissing, SweepError, public, sweep, write_csv
    from ..sweep.progress import SweepProgress

    if not output and not as_json:
        raise UserError("sweep: give -o FILE.csv for the rows, --json to print them, or both")
    if dask_address and workers:
        raise UserError("--workers and --dask: choose one (the Dask cluster has its own workers)")
    if plot_metric is None and (x_setting or series_setting or plot_file):
        option = "--x" if x_setting else "--series" if series_setting else "--plot-file"
        raise UserError(f"{option}: goes with --plot METRIC")
    for path in (output, plot_file):
        if path:
            _check_writable(path)
    if x_setting or series_setting or report_dir:
        from ..output.sweep_plot import POLICY, PlotError, choose_axes

        try:
            settings = _settings_of(sets)
        except SweepError as e:
            raise ScenarioProblems(str(e).splitlines()) from None
        columns = list(settings)
        if x_setting and x_setting not in columns:
            raise UserError(f"--x {x_setting}: not a swept setting; the settings are {', '.join(columns) or 'none'}")
        if series_setting:
            # --series fixes what the lines are: refuse a plot it cannot draw before anything runs
            moving = [c for c, values in settings.items() if len(values) > 1]
            try:
                choose_axes(plot_metric, columns, moving, x_setting, series_setting)
            except PlotError as e:
                raise UserError(str(e)) from None
        if report_dir:
            if POLICY not in columns:
                raise UserError(f"--report {report_dir}: compares scheduler policies; sweep them with "
                                f"--set {POLICY}=A,B,...")
            check_directory(report_dir)
    started = time.perf_counter()
    stop.running = True  # the runs begin: a signal from here on stops them and keeps the rows done
    try:
        with SweepProgress(Console(stderr=True), label=Path(scenario).stem) as bar:
            # The warnings come before the first run, so before the progress bar shows.
            rows = sweep(scenario, sets, seeds, workers=workers, dask=dask_address, verifier=verifier, progress=bar,
                         max_events=max_events, stop=stop, on_warning=lambda line: show_warnings([line]),
                         latency=report_dir is not None)
    except SweepError as e:
        raise ScenarioProblems(str(e).splitlines()) from None
    except DaskMissing as e:
        raise UserError(f"--dask: {e}") from None
    except OSError as e:
        if not dask_address:
            raise
        raise UserError(f"--dask {dask_address}: cannot reach the scheduler: {e}") from None
    stop.outputs = True  # a second signal from here on ends the process at once
    from ..trace.output import reason

    problems = []  # an output that cannot be written or drawn keeps none of the others from being written
    if output:
        try:
            write_csv(rows, output)
        except OSError as e:
            problems.append(f"{output}: cannot write: {reason(e)}")
            output = None  # the lines below must not say the rows are there
    if as_json:
        click.echo(json.dumps([public(r) for r in rows], indent=1))
    failed = sum(1 for r in rows if r.get("error"))
    if stop.interrupted:
        done, total = stop.runs
        click.echo(f"wddmsim: sweep interrupted by {stop.signal}: {done} of {total} runs finished"
                   + (f"; their rows are in {output}" if output else ""), err=True)
    click.echo(f"{len(rows)} runs, {failed} failed, in {time.perf_counter() - started:.1f} s"
               + (f"; rows in {output}" if output else ""), err=True)
    if failed:
        from ..sweep import first_failure

        click.echo(first_failure(rows), err=True)
    if plot_metric and rows:
        from ..output.sweep_plot import PlotError, plot_metric as draw

        target = plot_file or _plot_path(output, plot_metric)
        try:
            draw(rows, plot_metric, _columns_of(sets), target, x=x_setting, series=series_setting)
            click.echo(f"plot of {plot_metric} in {target}", err=True)
        except PlotError as e:
            problems.append(str(e))
        except OSError as e:
            problems.append(f"{target}: cannot write: {reason(e)}")
    if report_dir and rows:
        from ..output.report import ComparisonError, write_comparison

        try:
            written = write_comparison(rows, report_dir)
            click.echo(f"policy comparison in {', '.join(written)}", err=True)
        except ComparisonError as e:
            problems.append(f"--report {report_dir}: {e}")
        except OSError as e:  # a WriteFailed says which file
            problems.append(str(e) if getattr(e, "action", None) else f"{report_dir}: cannot write: {reason(e)}")
    if problems:
        raise ScenarioProblems(problems)
    if stop.interrupted:
        raise SystemExit(130)


def _settings_of(sets) -> dict[str, list]:
    """The ``--set`` options' columns, each with its distinct values in the order given (a
    :class:`~wddmsim.sweep.SweepError` for a malformed one or a path given twice)."""
    from ..sweep import settings_from

    out: dict[str, list] = {}
    for setting in settings_from(sets):
        values = out[setting.column] = []
        for ov in setting.values:
            if ov.value not in values:
                values.append(ov.value)
    return out


def _columns_of(sets) -> list[str]:
    """The rows' column names of the ``--set`` options' paths (``nodes[0]`` is written ``nodes.0``)."""
    from ..sweep import parse_setting

    return [parse_setting(text).column for text in sets]


def _plot_path(output: str | None, metric: str) -> str:
    """The default PNG: beside the CSV, named after it and the metric."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", metric)
    if output:
        p = Path(output)
        return str(p.with_name(f"{p.stem}-{name}.png"))
    return f"sweep-{name}.png"
