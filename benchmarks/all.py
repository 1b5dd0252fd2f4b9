#!/usr/bin/env python3
"""Every benchmark in one command: each file's figures, one JSON line each, then a table of targets.

    uv run python benchmarks/all.py            # every figure at its full size (about 8 minutes on 2 cores)
    uv run python benchmarks/all.py --quick    # every figure on small sizes (a few minutes)
    uv run python benchmarks/all.py --only throughput --only logcost
    uv run python benchmarks/all.py --json out/results.jsonl   # also keep the figures in a file

The first line (on standard error) names the machine's load, whether the compiled modules are in
use (``wddmsim._native.status()``: a run with ``WDDMSIM_PURE=1`` says "NOT in use") and the
revision; the same is the first JSON line, figure ``environment``.

Each benchmark file exposes ``figures(quick) -> list[dict]``; a figure names its ``benchmark`` and
what it measures, carries the measured values and, where the project sets a target, ``target`` and
``met``. The table at the end lists every figure with a target, so one run says which targets hold
on this machine: its measured value (the figure's ``measured`` text, or the first of
:data:`VALUE_KEYS` it has), the target, and yes, NO, or, where the figure was measured below the
size its target is set at (``met`` None, e.g. memory at 10^4 packets under ``--quick``), its
``not_judged`` text. Under the table, each target not met gets a block: the figure, the
measurement and the figure's other values, the component profile of the same run
(``profile_path.py``'s figure, its top components) where the figure asks for it
(``show_profile``), and the next design step, the text its benchmark gives it (``next_step``, from
that file's ``NEXT_STEP``). Speed figures are ratios measured within one run (the bare loop, the
run without the log, the serial sweep), because absolute rates depend on the machine and its load;
the load average at the start and the end is printed beside them so a run on a busy machine shows
itself.

A benchmark that fails does not stop the others: its error is printed as a figure of its own and
the exit status is 1 (targets not met do not change the exit status).

Ctrl-C (SIGINT) or SIGTERM ends the run at once, with one line on standard error, ``all.py:
interrupted by SIGINT during logcost; 1 of 9 benchmarks ran whole, their figures are above``,
and exit status 130, as ``wddmsim`` ends on a signal (no table: the targets of the benchmarks that
did not run would be missing from it). A process a benchmark runs and waits for is ended with it; a
second signal while the run stops changes nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The benchmark files, in the order they run: the submission path first, the log, memory, real time,
#: compiled against interpreted, sweeps, the command line's start-up, and last the profile that
#: explains the throughput figures.
BENCHMARKS = ("throughput", "logcost", "memory", "realtime", "compiled", "sweep", "study", "startup", "profile_path")
#: Exit status after SIGINT or SIGTERM (128 + SIGINT, as ``wddmsim`` exits on either).
EXIT_INTERRUPTED = 130


class Stopped(BaseException):
    """SIGINT or SIGTERM: the run ends (the module doc)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.signal = name


def _stop(signum, frame):
    """The first SIGINT or SIGTERM: later ones change nothing while the run stops."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signal.Signals(signum).name)


class Progress:
    """Where the run is, for the line a signal prints: the benchmarks it means to run (``--only``),
    the one under way, how many ran whole."""

    def __init__(self, planned: int = len(BENCHMARKS), current: str | None = None, finished: int = 0):
        self.planned = planned
        self.current = current
        self.finished = finished


PROGRESS = Progress()


def load(name: str):
    """The benchmark module ``benchmarks/NAME.py``, loaded by path (``benchmarks/`` is no package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run(names, quick: bool, out=None) -> tuple[list[dict], bool]:
    """Run each named benchmark's ``figures(quick)``, print each figure as a JSON line as it comes
    (and to ``out`` when given): the figures, and whether every benchmark ran."""
    figures, ok = [], True
    for name in names:
        PROGRESS.current = name
        t0 = time.perf_counter()
        try:
            got = load(name).figures(quick)
        except Exception as e:  # noqa: BLE001 - one broken benchmark must not lose the others' figures
            ok = False
            got = [{"benchmark": name, "figure": "error", "error": f"{type(e).__name__}: {e}",
                    "traceback": traceback.format_exc(limit=4)}]
        elapsed = round(time.perf_counter() - t0, 1)
        for fig in got:
            fig.setdefault("benchmark", name)
            fig.setdefault("benchmark_wall_s", elapsed)
            line = json.dumps(fig, sort_keys=False, default=str)
            print(line, flush=True)
            if out is not None:
                out.write(line + "\n")
        figures.extend(got)
        PROGRESS.finished += 1
    return figures, ok


#: The keys a figure's measured value may go by, in the order looked for (a figure may instead
#: carry ``"measured"``, a string it builds itself, when one number does not say it).
VALUE_KEYS = ("ratio", "speedup", "speedup_vs_baseline", "value", "peak_rss_mib", "ratio_billion_to_covering",
              "wall_s", "startup_s")
#: Keys left out of the values an unmet figure's block lists (said elsewhere in the block, or long).
_NOT_DETAILS = {"benchmark", "figure", "target", "met", "next_step", "show_profile", "benchmark_wall_s",
                "not_judged", "measured", "traceback", "imports_ms"}
#: Components of the profile printed under an unmet figure that asks for it.
PROFILE_TOP = 6


def _value_key(fig: dict) -> str | None:
    """The key of the figure's measured value: ``measured``, else the first of :data:`VALUE_KEYS`."""
    return next((key for key in ("measured", *VALUE_KEYS) if key in fig), None)


def _value(fig: dict) -> str:
    """The figure's measured value against its target, in the key the figure names it by."""
    key = _value_key(fig)
    if key is None:
        return ""
    return str(fig[key]) if key == "measured" else f"{key} {fig[key]}"


def _target(fig: dict) -> str:
    """The figure's target, with its comparison (``compare``: <=, >=, <) where the figure gives one."""
    return f"{fig['compare']} {fig['target']}" if "compare" in fig else str(fig.get("target", ""))


def _met(fig: dict) -> str:
    """yes, NO, or (``met`` None: measured below the size its target is set at) why not judged."""
    if fig.get("met") is None:
        return str(fig.get("not_judged", "n/a"))
    return "yes" if fig["met"] else "NO"


def table(figures: list[dict]) -> str:
    """The figures that carry a target, one line each: benchmark, figure, value, target, met."""
    rows = [(f.get("benchmark", ""), str(f.get("figure", "")), _value(f), _target(f), _met(f))
            for f in figures if "target" in f]
    rows += [(f["benchmark"], "error", f["error"][:60], "", "NO") for f in figures if f.get("figure") == "error"]
    if not rows:
        return "no figure carries a target"
    head = ("benchmark", "figure", "measured", "target", "met")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head).rstrip(), *(fmt.format(*r).rstrip() for r in rows)])


def _details(fig: dict, width: int = 100) -> list[str]:
    """The figure's other values, ``key value`` each, short ones only, wrapped to ``width``."""
    parts = []
    for key, value in fig.items():
        if key in _NOT_DETAILS or key == _value_key(fig) or key == "compare":
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if len(text) <= 160:
            parts.append(f"{key} {text}")
    return textwrap.wrap(", ".join(parts), width, initial_indent="  values: ", subsequent_indent="    ")


def _profile(figures: list[dict], width: int = 100) -> list[str]:
    """The first ``profile_path`` figure of the run as lines: its top components."""
    prof = next((f for f in figures if f.get("benchmark") == "profile_path" and "components" in f), None)
    if prof is None:
        return ["  profile: not in this run (run benchmarks/profile_path.py, or all.py without --only)"]
    lines = textwrap.wrap(f"profile of this run ({prof['figure']}): {prof.get('packets')} packets, "
                          f"{prof.get('cpu_us_per_packet')} us and {prof.get('calls_per_packet')} calls per packet; "
                          f"top {PROFILE_TOP} components:", width, initial_indent="  ", subsequent_indent="    ")
    lines.append(f"    {'component':<50} {'us/packet':>9} {'calls/packet':>12}")
    for name, c in list(prof["components"].items())[:PROFILE_TOP]:
        lines.append(f"    {name:<50} {c['us_per_packet']:>9} {c['calls_per_packet']:>12}")
    return lines


def unmet(figures: list[dict], width: int = 100) -> str:
    """A block for every figure whose target is not met (``met`` False): the figure, what was
    measured against the target, its other values, the profile of the same run where the figure
    asks for it (``show_profile``), and the next design step its benchmark gives (``next_step``)."""
    blocks = []
    for fig in figures:
        if "target" not in fig or fig.get("met") is not False:
            continue
        lines = [f"NOT MET: {fig.get('benchmark', '')}: {fig.get('figure', '')}",
                 f"  measured: {_value(fig)} (target: {_target(fig)})", *_details(fig, width)]
        if fig.get("show_profile"):
            lines += _profile(figures, width)
        step = fig.get("next_step") or (
            f"none recorded (benchmarks/{fig.get('benchmark', '?')}.py has no NEXT_STEP for it)")
        lines += textwrap.wrap(step, width, initial_indent="  next step: ", subsequent_indent="    ")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def report(figures: list[dict]) -> str:
    """The table, then the block of every target not met (or, when there is none and something
    was judged, that every target measured is met), then the benchmarks that failed."""
    text = table(figures)
    blocks = unmet(figures)
    failed = [f.get("benchmark", "?") for f in figures if f.get("figure") == "error"]
    if blocks:
        text += "\n\n" + blocks
    elif any("target" in f and f.get("met") is not None for f in figures):
        text += "\n\nevery target measured is met"
    if failed:
        text += f"\n\nfailed (their figures are missing; exit status 1): {', '.join(failed)}"
    return text


def environment() -> dict:
    """What this run measured: the model's directory and revision, and whether its compiled modules
    run (``wddmsim._native.status()`` once the system's modules are imported; ``WDDMSIM_PURE=1``
    or a build without a compiler runs them interpreted)."""
    import platform

    import wddmsim
    import wddmsim.runner.system  # noqa: F401 - imports the compiled modules, so status() says how they went

    try:
        from wddmsim import _native

        status = _native.status()
    except ImportError:
        status = {}
    ways = set(status.values())
    compiled = "all" if ways == {"compiled"} else "none" if "compiled" not in ways else "some"
    root = Path(wddmsim.__file__).resolve().parents[2]
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        revision = (rev + (" + local changes in src/" if dirty else "")) if rev else None
    except (OSError, subprocess.SubprocessError):
        revision = None
    return {"benchmark": "all", "figure": "environment", "compiled": compiled, "compiled_modules": status,
            "WDDMSIM_PURE": os.environ.get("WDDMSIM_PURE"), "model": str(Path(wddmsim.__file__).resolve().parent),
            "revision": revision, "python": platform.python_version(), "cpus": os.cpu_count()}


def compiled_line(env: dict) -> str:
    """Whether the compiled modules ran, in words, from :func:`environment`'s figure."""
    if env["compiled"] == "all":
        return "compiled modules in use (" + ", ".join(m.rsplit(".", 1)[-1] for m in env["compiled_modules"]) + ")"
    why = "; ".join(sorted({v for v in env["compiled_modules"].values() if v != "compiled"})) or "none listed"
    return f"compiled modules {'NOT' if env['compiled'] == 'none' else 'partly'} in use ({why})"


def header(names, quick: bool, env: dict) -> str:
    """The first line of a run: what runs, the machine's load, whether the modules ran compiled,
    and the revision."""
    return (f"# {len(names)} benchmarks{' (quick)' if quick else ''}; CPUs {os.cpu_count()}; "
            f"load average {os.getloadavg()[0]:.2f}; {compiled_line(env)}; revision {env['revision']}")


def main() -> None:
    """Run the benchmarks (see the module doc); a signal ends the run with one line, status 130."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop)
    try:
        _main()
    except (Stopped, KeyboardInterrupt) as e:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        name = getattr(e, "signal", "SIGINT")  # KeyboardInterrupt: a benchmark put Python's handler back
        print(interrupted_line(name, PROGRESS), file=sys.stderr, flush=True)
        raise SystemExit(EXIT_INTERRUPTED) from None


def interrupted_line(name: str, progress: Progress) -> str:
    """``all.py: interrupted by SIGINT during logcost; 1 of 9 benchmarks ran whole, their figures are
    above`` (``none of the 9 benchmarks ran whole`` before the first one ended)."""
    during = f" during {progress.current}" if progress.current else " before the first benchmark"
    ran = (f"{progress.finished} of {progress.planned} benchmarks ran whole, their figures are above"
           if progress.finished else f"none of the {progress.planned} benchmarks ran whole")
    return f"all.py: interrupted by {name}{during}; {ran}"


def _main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="every figure on small sizes")
    ap.add_argument("--only", action="append", choices=BENCHMARKS, metavar="NAME",
                    help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as a JSON line to FILE")
    args = ap.parse_args()
    names = [n for n in BENCHMARKS if not args.only or n in args.only]
    PROGRESS.planned = len(names)
    env = environment()
    print(header(names, args.quick, env), file=sys.stderr, flush=True)
    out = open(args.json, "w", encoding="utf-8") if args.json else None
    try:
        line = json.dumps(env)
        print(line, flush=True)
        if out is not None:
            out.write(line + "\n")
        figures, ok = run(names, args.quick, out)
    finally:
        if out is not None:
            out.close()
    print(f"\n# load average at the end {os.getloadavg()[0]:.2f}; {compiled_line(env)}", file=sys.stderr)
    print(report(figures), file=sys.stderr)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
