"""The long fuzz run: many random inputs through wddmsim, every failure saved for reproduction.

    uv run python tools/fuzz.py [--decode N] [--scenarios M] [--toml K] [--cli C] [--seed S] [--workers W]
                                [--out DIR] [--wall-limit SECONDS] [--max-events N] [--max-kernel-events N]

Four campaigns, run in a process pool of ``--workers`` processes (default: every CPU; 1: in this
process):

* ``--decode N`` buffers (default 100000) through what ``wddmsim decode`` does
  (:func:`wddmsim.testing.mutate.decode_case`), every structure ``wddmsim layout --list`` knows in
  turn, on x86 and x64, at the DDI version it appeared in and at the latest: all-zero, all-ones and
  wrong-length buffers, then mutations (bit flips, bytes set to 0 or 0xFF, cuts, extensions,
  random bytes) of a zeroed or a random buffer. Each must decode (with the rules' verdict) or be
  refused with the input error the CLI turns into exit status 2.
* ``--scenarios M`` random valid scenarios with 1-3 random faults each (default 1000;
  :func:`wddmsim.testing.fuzz.scenario_data`), run whole with the verifier in strict mode (even
  indexes) or report mode (odd ones). Each must end with LogEnd reason ``time`` or ``bugcheck``
  (or be refused as ``wddmsim run`` refuses an unbuildable system), within ``--wall-limit``
  seconds of wall time (default 60: over it is a hang), ``--max-events`` events in its log
  (default 10^6) and ``--max-kernel-events`` kernel events (default 5 x 10^6, the run's own
  ``--max-events`` budget, which stops it cleanly): over either is a runaway, counted as a hang. The packet ledger, where the model has one,
  checks every run at its end: its error is counted as a ledger violation. Every tenth scenario
  runs twice with its event log written: the two logs must be byte-identical, and the log is read
  back into a Chrome trace and a PresentMon CSV (every fiftieth also into a report).
* ``--toml K`` mutations of the files in ``examples/*.toml`` (default 5000;
  :func:`wddmsim.testing.mutate.mutate_toml`) through the loader ``wddmsim run`` uses
  (:func:`wddmsim.cli.util.load_scenario_file`): each must load or be refused with messages that
  name the file. One that loads is run for (at most) its first 20 ms, under the same bounds as
  the scenarios.
* ``--cli C`` command lines a careless user or driver author types (default 10000;
  :func:`wddmsim.testing.clifuzz.cli_case`): scenario files, ``--set`` values, event logs and crash
  records nested hundreds to 100,000 levels deep, outputs that cannot be written, and drivers that
  raise, call ``sys.exit()``, return what is no NTSTATUS or fail to load, run in this process
  through the command line, and drivers that never return, each in a process of its own with the
  DDI watchdog at 1 s. Each must end with an exit status its kind allows (2 for bad input, 3
  for a bug check...) and never with an exception of wddmsim's own, within ``--wall-limit``.

Input number ``i`` of a campaign is drawn from its own seed (``--seed``, campaign, ``i``), so any
input is made again from its number alone. Each failing input is written to ``--out`` (default
``out/fuzz/``): ``scenario-I.toml``, ``decode-I.txt`` (structure, architecture, version and the
bytes as hex), ``toml-I.toml`` (the mutated bytes), ``cli-I.txt`` (the command line and its files), each with ``...-I.error.txt`` holding the
traceback. The counts are printed as one JSON line and a table; the exit status is 1 when anything
failed, else 0.

The first line on standard error says how many batches run on how many workers. Ctrl-C (SIGINT)
or SIGTERM ends the run with one more line there, ``fuzz: interrupted by SIGINT after 3 of 40
batches; 1 failing input written to out/fuzz/`` (the failures found until then are saved as above;
``no failing input found`` when there is none; no counts are printed), and exit status 130, as
``wddmsim`` ends on a signal (:data:`wddmsim.runner.stop.EXIT_INTERRUPTED`). The workers ignore
SIGINT (a terminal sends Ctrl-C to the whole process group): this process decides, and ends them
at once (SIGTERM; a second one a second later, then SIGKILL, for a worker that does not end); a
worker unwinds its batch as it ends, so a command line it runs in a process of its own ends with
it. A second signal while the run stops changes nothing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from wddmsim.runner.stop import EXIT_INTERRUPTED  # noqa: E402
from wddmsim.testing import fuzz, mutate  # noqa: E402

EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
#: how much virtual time a mutated example that still loads runs for
TOML_RUN_NS = 20_000_000


class WallLimit(Exception):
    """The run went past its wall-time bound: a hang."""


def _on_alarm(signum, frame):
    raise WallLimit("over the wall-time bound")


class Stopped(BaseException):
    """SIGINT or SIGTERM in the fuzzer's own process: the run ends (the module doc)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.signal = name


_signalled: str | None = None  # the signal that asked the run to stop, while the pool runs


def _stop(signum, frame):
    """The first SIGINT or SIGTERM with the batches in this process: the batch under way unwinds
    (:class:`Stopped`); later signals change nothing while the run stops."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signal.Signals(signum).name)


def _stop_pool(signum, frame):
    """The first SIGINT or SIGTERM while the pool runs: noted, and the loop that waits on the
    batches stops at its next look (raising here could land inside the pool's own bookkeeping,
    a weak reference's callback or a lock, which would print a traceback of its own)."""
    global _signalled
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    _signalled = signal.Signals(signum).name


#: Seconds a worker has to end after each SIGTERM the fuzzer sends it (two, then SIGKILL). More than
#: ``wddmsim``'s ``SAME_SIGNAL_S``: a worker inside a command the cli campaign runs in-process takes
#: the first SIGTERM as that command's, and the second one, as a second signal, ends it.
END_GRACE_S = 1.0
#: How often the fuzzer looks for a signal while it waits on the pool's batches (seconds).
POLL_S = 0.1


class WorkerEnd(KeyboardInterrupt):
    """SIGTERM in a worker during a batch: the batch unwinds (its temporary folders go, a command it
    runs in a process of its own is killed) and the worker ends. A ``KeyboardInterrupt``, so that
    wddmsim's DDI gateway lets it through a driver's call instead of calling it a driver fault."""


_in_batch = False  # a worker is running a batch (:func:`_batch`)
_ending = None  # in a worker: the event the fuzzer sets when it ends the workers


def _stop_point() -> None:
    """Between two inputs of a batch: a worker the fuzzer is ending ends here (a SIGTERM that came
    during a command the cli campaign runs in-process went to that command's own handler)."""
    if _ending is not None and _ending.is_set():
        raise WorkerEnd()


def _worker_end(signum, frame):
    """SIGTERM in a worker: unwind the batch under way (:class:`WorkerEnd`), or end at once."""
    if _in_batch:
        raise WorkerEnd()
    os._exit(EXIT_INTERRUPTED)


def _unraisable(info) -> None:
    """A :class:`WorkerEnd` raised where Python cannot pass it on (inside a weak reference's
    callback or a finalizer) is dropped without a word: the fuzzer's next SIGTERM ends the worker
    (:func:`_end_workers`). Anything else is reported as Python does."""
    if not isinstance(info.exc_value, WorkerEnd):
        sys.__unraisablehook__(info)


def _worker_start(ending) -> None:
    """A worker ignores SIGINT (a terminal's Ctrl-C reaches it too: the fuzzer decides) and ends on
    SIGTERM, or at the next input once ``ending`` (an event) is set."""
    global _ending
    _ending = ending
    sys.unraisablehook = _unraisable
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_end)


def _batch(fn, *args) -> dict:
    """``fn(*args)`` in a worker; a :class:`WorkerEnd` ends the worker once the batch has unwound."""
    global _in_batch
    _in_batch = True
    try:
        return fn(*args)
    except WorkerEnd:
        _in_batch = False  # another SIGTERM now ends the worker at once
        os._exit(EXIT_INTERRUPTED)
    finally:
        _in_batch = False


def _end_workers(pool: ProcessPoolExecutor, ending) -> None:
    """End the pool now: no batch starts; ``ending`` is set (each worker ends at its next input) and
    each worker gets SIGTERM, another after :data:`END_GRACE_S`, and SIGKILL after one more."""
    workers = list((pool._processes or {}).values())  # noqa: SLF001 - the pool has no public way to end them
    pool.shutdown(wait=False, cancel_futures=True)
    ending.set()
    for end in ("terminate", "terminate", "kill"):
        alive = [p for p in workers if p.is_alive()]
        if not alive:
            break
        for p in alive:
            getattr(p, end)()
        deadline = time.monotonic() + END_GRACE_S
        for p in alive:
            p.join(max(0.0, deadline - time.monotonic()))
    pool.shutdown(wait=True)


def _rng(seed: int, campaign: str, i: int) -> random.Random:
    return random.Random(f"{seed}:{campaign}:{i}")


def decode_input(seed: int, i: int, cases: list) -> tuple[str, str, str, bytes]:
    """Decode input number ``i``: (structure, architecture, version, bytes)."""
    name, arch, version = cases[i % len(cases)]
    size = mutate.structure_size(name, arch, version)
    fixed = mutate.buffer_cases(size)
    rnd = i // len(cases)
    if rnd < len(fixed):
        return name, arch, version, fixed[rnd]
    rng = _rng(seed, "decode", i)
    base = bytes(size) if rng.random() < 0.5 else bytes(rng.getrandbits(8) for _ in range(size))
    return name, arch, version, mutate.mutate_bytes(rng, base)


def _failure(kind: str, i: int, what: str, files: dict) -> dict:
    return {"campaign": kind, "index": i, "what": what, "files": files, "traceback": traceback.format_exc()}


def run_decode(seed: int, start: int, count: int) -> dict:
    """Decode inputs ``start`` .. ``start + count - 1``: counts and failures."""
    cases = mutate.decodable()
    out = {"runs": 0, "decoded": 0, "refused": 0, "crashes": 0, "failures": []}
    for i in range(start, start + count):
        _stop_point()
        name, arch, version, raw = decode_input(seed, i, cases)
        out["runs"] += 1
        try:
            verdict, _ = mutate.decode_case(name, raw, arch, version)
        except Exception:  # noqa: BLE001 - a crash is what this counts
            out["crashes"] += 1
            out["failures"].append(_failure("decode", i, "crash", {
                f"decode-{i}.txt": f"{name} {arch} {version}\n{raw.hex()}\n"}))
            continue
        out[verdict] += 1
    return out


def scenario_input(seed: int, j: int) -> dict:
    """Scenario input number ``j`` (a scenario table)."""
    return fuzz.scenario_data(_rng(seed, "scenario", j))


def write_outputs(log: str, folder: str, report: bool) -> None:
    """Read the event log ``log`` back and write what ``wddmsim trace``, ``wddmsim run --presentmon``
    and (with ``report``) ``wddmsim report`` make of it into ``folder``."""
    from wddmsim.trace import read_events
    from wddmsim.trace.chrome import write_chrome_trace
    from wddmsim.trace.presentmon import write_presentmon_csv

    events = read_events(log)
    write_chrome_trace(events, os.path.join(folder, "trace.json"))
    write_presentmon_csv(events, os.path.join(folder, "presentmon.csv"))
    if report:
        from wddmsim.output.report import write_report

        write_report(events, os.path.join(folder, "report"))


def run_scenarios(seed: int, start: int, count: int, wall_limit: int, max_events: int,
                  max_kernel_events: int = 5_000_000) -> dict:
    """Scenario inputs ``start`` .. ``start + count - 1``: counts and failures."""
    out = {"runs": 0, "time": 0, "bugcheck": 0, "refused": 0, "invalid": 0, "crashes": 0, "ledger_violations": 0,
           "hangs": 0, "nondeterministic": 0, "determinism_checked": 0, "outputs_written": 0, "events": 0,
           "failures": []}
    signal.signal(signal.SIGALRM, _on_alarm)
    for j in range(start, start + count):
        _stop_point()
        data = scenario_input(seed, j)
        verifier = "strict" if j % 2 == 0 else "report"
        files = {f"scenario-{j}.toml": fuzz.to_toml(data)}
        out["runs"] += 1
        signal.alarm(wall_limit)
        try:
            res = fuzz.run_scenario(data, verifier=verifier, max_events=max_events,
                                    max_kernel_events=max_kernel_events)
            if j % 10 == 0 and res.outcome in ("time", "bugcheck"):
                with tempfile.TemporaryDirectory() as tmp:
                    a, b = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
                    for log in (a, b):
                        fuzz.run_scenario(data, verifier=verifier, events_path=log, max_events=max_events,
                                          max_kernel_events=max_kernel_events)
                    out["determinism_checked"] += 1
                    if Path(a).read_bytes() != Path(b).read_bytes():
                        out["nondeterministic"] += 1
                        out["failures"].append({"campaign": "scenario", "index": j, "what": "nondeterministic",
                                                "files": files, "traceback": "two runs gave different logs\n"})
                    write_outputs(a, tmp, report=j % 50 == 0)
                    out["outputs_written"] += 1
        except (WallLimit, fuzz.Runaway):
            out["hangs"] += 1
            out["failures"].append(_failure("scenario", j, "hang", files))
            continue
        except Exception as e:  # noqa: BLE001 - a crash or a ledger violation is what this counts
            kind = "ledger_violations" if "ledger" in type(e).__name__.lower() else "crashes"
            out[kind] += 1
            out["failures"].append(_failure("scenario", j, kind, files))
            continue
        finally:
            signal.alarm(0)
        if res.outcome == "max_events":  # the kernel-event budget ran out: a runaway
            out["hangs"] += 1
            out["failures"].append({"campaign": "scenario", "index": j, "what": "hang", "files": files,
                                    "traceback": f"more than {max_kernel_events} kernel events\n"})
            continue
        out[res.outcome] += 1
        out["events"] += res.events
        if res.outcome == "invalid":
            out["failures"].append({"campaign": "scenario", "index": j, "what": "invalid", "files": files,
                                    "traceback": res.message + "\n"})
    return out


def toml_input(seed: int, k: int) -> tuple[Path, bytes]:
    """TOML input number ``k``: the example it mutates and the mutated bytes."""
    example = EXAMPLES[k % len(EXAMPLES)]
    return example, mutate.mutate_toml(_rng(seed, "toml", k), example.read_text())


def run_toml(seed: int, start: int, count: int, wall_limit: int, max_events: int,
             max_kernel_events: int = 5_000_000) -> dict:
    """TOML inputs ``start`` .. ``start + count - 1``: counts and failures. A file that loads is run
    for its first 20 ms of virtual time (at most)."""
    from wddmsim.cli.util import UserError, load_scenario_file

    out = {"runs": 0, "loaded": 0, "refused": 0, "ran": 0, "crashes": 0, "ledger_violations": 0, "hangs": 0,
           "failures": []}
    signal.signal(signal.SIGALRM, _on_alarm)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(start, start + count):
            _stop_point()
            example, text = toml_input(seed, k)
            path = os.path.join(tmp, example.name)
            Path(path).write_bytes(text)
            out["runs"] += 1
            files = {f"toml-{k}.toml": text.decode("utf-8", "replace")}
            try:
                scenario = load_scenario_file(path)
                out["loaded"] += 1
            except UserError as e:
                if all(path in line for line in e.message.splitlines()):
                    out["refused"] += 1
                    continue
                out["crashes"] += 1
                out["failures"].append({"campaign": "toml", "index": k, "what": "message without the file",
                                        "files": files, "traceback": e.message + "\n"})
            except Exception:  # noqa: BLE001 - a crash is what this counts
                out["crashes"] += 1
                out["failures"].append(_failure("toml", k, "crash", files))
                continue
            signal.alarm(wall_limit)
            try:
                until = min(scenario.duration, TOML_RUN_NS)
                if scenario.adapter.stop_at is not None and scenario.adapter.stop_at >= until:
                    scenario.adapter.stop_at = None  # (the schema wants the stop before the end)
                scenario.duration = until
                res = fuzz.run_scenario(scenario, max_events=max_events, max_kernel_events=max_kernel_events)
                if res.outcome == "max_events":
                    raise fuzz.Runaway(f"more than {max_kernel_events} kernel events")
                out["ran"] += 1
            except (WallLimit, fuzz.Runaway):
                out["hangs"] += 1
                out["failures"].append(_failure("toml", k, "hang", files))
            except Exception as e:  # noqa: BLE001 - a crash or a ledger violation is what this counts
                kind = "ledger_violations" if "ledger" in type(e).__name__.lower() else "crashes"
                out[kind] += 1
                out["failures"].append(_failure("toml", k, kind, files))
            finally:
                signal.alarm(0)
    return out


def run_cli(seed: int, start: int, count: int, wall_limit: int) -> dict:
    """Command-line inputs ``start`` .. ``start + count - 1``: counts and failures."""
    from wddmsim.testing import clifuzz

    out = {"runs": 0, "crashes": 0, "hangs": 0, "failures": []}
    signal.signal(signal.SIGALRM, _on_alarm)
    for c in range(start, start + count):
        _stop_point()
        case = clifuzz.cli_case(_rng(seed, "cli", c))
        out["runs"] += 1
        files = {f"cli-{c}.txt": case.describe() + "\n" + "".join(f"--- {name}\n{text[:20000]}\n"
                                                                   for name, text in case.files.items())}
        signal.alarm(wall_limit)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                problem = clifuzz.run_case(case, Path(tmp), ROOT / "examples")
        except WallLimit:
            out["hangs"] += 1
            out["failures"].append(_failure("cli", c, "hang", files))
            continue
        except Exception:  # noqa: BLE001 - a crash of the fuzzer's own run is counted too
            out["crashes"] += 1
            out["failures"].append(_failure("cli", c, "crash", files))
            continue
        finally:
            signal.alarm(0)
        if problem is not None:
            out["crashes"] += 1
            out["failures"].append({"campaign": "cli", "index": c, "what": "crash", "files": files,
                                    "traceback": problem + "\n"})
    return out


def _merge(total: dict, part: dict) -> None:
    for key, value in part.items():
        if key == "failures":
            total.setdefault("failures", []).extend(value)
        else:
            total[key] = total.get(key, 0) + value


def main(argv: list[str] | None = None) -> int:
    """Run the three campaigns; print the counts; 1 when anything failed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decode", type=int, default=100_000, help="decode buffers (default 100000)")
    ap.add_argument("--scenarios", type=int, default=1000, help="fault-injected scenarios (default 1000)")
    ap.add_argument("--toml", type=int, default=5000, help="malformed scenario files (default 5000)")
    ap.add_argument("--cli", type=int, default=10_000, help="careless command lines (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of every input (default 0)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: every CPU)")
    ap.add_argument("--out", default="out/fuzz", help="folder for failing inputs (default out/fuzz)")
    ap.add_argument("--wall-limit", type=int, default=60, help="wall seconds a scenario may take (default 60)")
    ap.add_argument("--max-events", type=int, default=1_000_000,
                    help="events a scenario's log may hold (default 10^6)")
    ap.add_argument("--max-kernel-events", type=int, default=5_000_000,
                    help="kernel events a scenario may run, its --max-events budget (default 5 x 10^6)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    jobs = []
    for start in range(0, args.decode, 2000):
        jobs.append(("decode", run_decode, (args.seed, start, min(2000, args.decode - start))))
    for start in range(0, args.scenarios, 5):
        jobs.append(("scenarios", run_scenarios, (args.seed, start, min(5, args.scenarios - start), args.wall_limit,
                                                  args.max_events, args.max_kernel_events)))
    for start in range(0, args.toml, 250):
        jobs.append(("toml", run_toml, (args.seed, start, min(250, args.toml - start), args.wall_limit,
                                        args.max_events, args.max_kernel_events)))
    for start in range(0, args.cli, 500):
        jobs.append(("cli", run_cli, (args.seed, start, min(500, args.cli - start), args.wall_limit)))
    totals: dict[str, dict] = {"decode": {}, "scenarios": {}, "toml": {}, "cli": {}}
    done = 0

    def finished(name: str, part: dict) -> None:
        nonlocal done
        _merge(totals[name], part)
        done += 1
        if done % 20 == 0 or done == len(jobs):
            print(f"  {done}/{len(jobs)} batches, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    workers = max(1, min(args.workers, len(jobs)))
    ending = multiprocessing.Event() if args.workers > 1 else None
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    pool = None
    try:
        try:
            if args.workers <= 1:  # in this process
                print(f"fuzz: {len(jobs)} batches in this process (seed {args.seed})", file=sys.stderr, flush=True)
                for name, fn, a in jobs:
                    finished(name, fn(*a))
            else:
                pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_start, initargs=(ending,))
                futures = {pool.submit(_batch, fn, *a): name for name, fn, a in jobs}
                for sig in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, _stop_pool)
                print(f"fuzz: {len(jobs)} batches on {workers} worker process{'es' if workers != 1 else ''} "
                      f"(seed {args.seed})", file=sys.stderr, flush=True)
                pending = set(futures)
                while pending and _signalled is None:  # a signal is seen within POLL_S
                    ready, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
                    for fut in ready:
                        finished(futures[fut], fut.result())
                if _signalled is not None:
                    raise Stopped(_signalled)
                pool.shutdown()
                pool = None
        except Stopped as stop:
            if pool is not None:
                _end_workers(pool, ending)
                pool = None
            saved = _save([f for part in totals.values() for f in part.get("failures", [])], args.out, args.seed)
            found = (f"{saved} failing input{'s' if saved != 1 else ''} written to {args.out}/" if saved
                     else "no failing input found")
            print(f"fuzz: interrupted by {stop.signal} after {done} of {len(jobs)} batches; {found}", file=sys.stderr,
                  flush=True)
            return EXIT_INTERRUPTED
        failures = [f for part in totals.values() for f in part.get("failures", [])]
        _save(failures, args.out, args.seed)
    finally:
        if pool is not None:  # a batch raised: no worker outlives the run
            _end_workers(pool, ending)
        for sig, old in previous.items():
            signal.signal(sig, old)
    for part in totals.values():
        part.pop("failures", None)
    summary = {"seed": args.seed, "wall_s": round(time.perf_counter() - t0, 1), **totals}
    print(json.dumps(summary))
    for campaign, counts in totals.items():
        print(f"{campaign:>9}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if failures:
        print(f"{len(failures)} failing inputs written to {args.out}/", file=sys.stderr)
        return 1
    print("no crash, no ledger violation, no hang")
    return 0


def _save(failures: list[dict], out: str, seed: int) -> int:
    """Write each failing input and its ``.error.txt`` under ``out``: how many inputs."""
    if not failures:
        return 0
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for f in failures:
        for name, text in f["files"].items():
            (folder / name).write_text(text)
        stem = next(iter(f["files"])).rsplit(".", 1)[0]
        (folder / f"{stem}.error.txt").write_text(f"{f['what']} (seed {seed}, {f['campaign']} input "
                                                  f"{f['index']})\n{f['traceback']}")
    return len(failures)


if __name__ == "__main__":
    sys.exit(main())
