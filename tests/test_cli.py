"""The command line as a person uses it: exact answers, and bad input answered with one clear line
and exit status 2, never a traceback."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from wddmsim.cli import main

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def run(*args):
    return runner.invoke(main, list(args))


def test_version_names_the_package_version():
    """``wddmsim --version`` prints the version the package is installed with (pyproject.toml's)."""
    from importlib.metadata import version

    from wddmsim import __version__

    r = run("--version")
    assert r.exit_code == 0
    assert r.stdout == f"wddmsim, version {__version__}\n"
    assert __version__ == version("wddmsim")
    p = subprocess.run([sys.executable, "-m", "wddmsim", "--version"], capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, f"wddmsim, version {__version__}\n")


def test_console_script_is_installed():
    r = subprocess.run([sys.executable, "-m", "wddmsim", "layout", "PHYSICAL_ADDRESS", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["members"]["QuadPart"] == {"offset": 0, "size": 8, "type": "LONGLONG"}


def test_readme_examples_run(tmp_path, monkeypatch):
    """Every `uv run wddmsim ...` example of the README works exactly as written, run from a folder
    laid out as a fresh clone (the inputs it reads, `out/` and `.gitignore`), and every file the
    examples write is one git ignores: following the README leaves `git status` clean."""
    import re
    import shlex
    import shutil

    root = Path(__file__).parents[1]
    readme = (root / "README.md").read_text()
    examples = re.findall(r"^uv run wddmsim (.+?)(?:\s+#.*)?$", readme, re.M)
    assert len(examples) >= 4
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    (clone / "out").mkdir()
    (clone / "examples").symlink_to(root / "examples", target_is_directory=True)
    (clone / "tests" / "data").symlink_to(root / "tests" / "data", target_is_directory=True)
    shutil.copy(root / "out" / "README.md", clone / "out" / "README.md")
    shutil.copy(root / ".gitignore", clone / ".gitignore")
    monkeypatch.chdir(clone)
    for line in examples:
        r = run(*shlex.split(line))
        assert r.exit_code == 0, (line, r.stderr)
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)

    def ls_files(*opts):
        done = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", *opts], cwd=clone,
                              check=True, capture_output=True, text=True)
        return sorted(done.stdout.splitlines())

    # Untracked and not ignored: only what the clone itself holds.
    assert ls_files() == [".gitignore", "examples", "out/README.md", "tests/data"]
    # What the examples wrote, all under out/ and all ignored.
    assert ls_files("--ignored", "--directory") == [
        "out/desktop.csv", "out/log.jsonl", "out/p.csv", "out/policies.csv", "out/policies/", "out/r/",
        "out/results-contexts.0.latency_p99_ns.png",
        "out/results.csv", "out/t.json", "out/tc0-report/", "out/tc0.toml", "out/tdr.jsonl"]


# -- wddmsim run / demo / decode @record (the submission path) ------------------------------------
from pathlib import Path  # noqa: E402

from example_files import EXAMPLES, expected_bugcheck  # noqa: E402


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: Path(p).stem)
def test_every_example_runs(path, tmp_path):
    events = tmp_path / "events.jsonl"
    crash = tmp_path / "crash.json"
    r = CliRunner().invoke(main, ["run", path, "--json", "--events", str(events), "--crash-record", str(crash)])
    code = expected_bugcheck(path)
    # An example that ends in a bug check exits with status 3 and writes its crash record.
    assert r.exit_code == (0 if code is None else 3), r.output
    summary = json.loads(r.stdout)
    if code is None:
        assert "bugcheck" not in summary and not crash.exists()
    else:
        assert summary["bugcheck"]["code"] == code and crash.exists()
    assert summary["packets_completed"] > 0 and not summary["violations"]
    lines = events.read_text().splitlines()
    first = json.loads(lines[0])
    assert first == {"t": 0, "event": "LogStart", "format": "wddmsim-events", "version": 1,
                     "scenario": Path(path).stem, "seed": summary["seed"]}
    names = {json.loads(x)["event"] for x in lines}
    assert {"DdiCall", "Callback", "QueuePacketStart", "QueuePacketStop"} <= names
    if summary["scheduling"] == "hardware":
        # The GPU schedules: what runs when comes from its scheduler's context-state log.
        assert {"HwQueueCreate", "HwContextState", "FenceSignal"} <= names
    else:
        assert {"DmaPacketStart", "DmaPacketStop"} <= names


def test_deep_queue_example_is_exact():
    r = CliRunner().invoke(main, ["run", str(Path(__file__).parent.parent / "examples" / "deep_queue.toml"), "--json"])
    s = json.loads(r.stdout)
    assert s["contexts"][0]["latency_max_ns"] == 100_000_000 and s["packets_completed"] == 100


def test_run_summary_table_and_overrides(tmp_path):
    path = str(Path(__file__).parent.parent / "examples" / "deep_queue.toml")
    r = CliRunner().invoke(main, ["run", path, "--until", "50500us", "--seed", "9"])
    assert r.exit_code == 0
    assert r.stdout.splitlines()[:3] == ["deep_queue  seed 9  virtual time 50.50 ms  software scheduling  "
                                         "policy priority_quantum",
                                         "DMA packets: 52 sent to the driver, 50 completed, the last at 50.00 ms",
                                         "50 interrupts, 50 DPCs, 202 simulation events"]
    assert "bench.exe/queue" in r.output and "3D_0" in r.output


def test_run_reports_scenario_errors_all_at_once(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "fast"\n[[process]]\nname = "a"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
                   'workload = { kind = "frame_loop", fps = -1, work = "1ms" }\n')
    r = CliRunner().invoke(main, ["run", str(bad)])
    assert r.exit_code == 2
    errs = [x for x in r.output.splitlines() if x.startswith("wddmsim: error:")]
    assert len(errs) == 2 and all(str(bad) in e for e in errs)
    assert any("duration" in e for e in errs) and any("process[0].context[0].workload.fps" in e for e in errs)
    assert "Traceback" not in r.output


def test_run_bad_until_and_missing_file(tmp_path):
    path = str(Path(__file__).parent.parent / "examples" / "deep_queue.toml")
    r = CliRunner().invoke(main, ["run", path, "--until", "soon"])
    assert r.exit_code == 2 and r.output.startswith("wddmsim: error: --until:")
    r = CliRunner().invoke(main, ["run", str(tmp_path / "nope.toml")])
    assert r.exit_code == 2 and "nope.toml" in r.output and "Traceback" not in r.output


def test_demo_runs_the_built_in_scenario():
    r = CliRunner().invoke(main, ["demo"])
    assert r.exit_code == 0, r.output
    for text in ("game.exe/render", "trainer.exe/compute", "backup.exe/copy", "browser.exe/raster",
                 "3D_0", "Compute_0", "COPY_0", "DxgkDdiSubmitCommand", "DXGK_INTERRUPT_DMA_COMPLETED",
                 "QueuePacketStop"):
        assert text in r.output


def test_running_in_progress_slices_changes_nothing():
    from wddmsim.scenario import load_scenario
    from wddmsim.runner.system import System
    from wddmsim.trace import ListSink

    sc = load_scenario(str(Path(__file__).parent.parent / "examples" / "priorities.toml"))
    plain, sliced, asked = ListSink(), ListSink(), ListSink()
    seen, calls = [], []
    r1 = System(sc, trace=plain).run(until=50_000_000)
    r2 = System(sc, trace=sliced).run(until=50_000_000, on_progress=lambda now, limit: seen.append((now, limit)))
    assert plain.events == sliced.events and r1.end == r2.end and r1.summary == r2.summary
    assert len(seen) == 1000 and seen[-1] == (50_000_000, 50_000_000)
    assert [now for now, _ in seen] == [50_000 * (i + 1) for i in range(1000)]

    def every_5ms(now, limit):  # a progress bar asks for the next slice's length
        calls.append(now)
        return 5_000_000

    r3 = System(sc, trace=asked).run(until=50_000_000, on_progress=every_5ms)
    assert asked.events == plain.events and r3.summary == r1.summary
    assert calls == [50_000 + 5_000_000 * i for i in range(10)] + [50_000_000]


def test_no_progress_bar_when_output_is_not_a_terminal():
    from wddmsim.runner.progress import RunProgress, progress_for
    from rich.console import Console
    import io

    assert progress_for(Console(file=io.StringIO()), as_json=False) is None
    term = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(progress_for(term, as_json=False), RunProgress)
    assert progress_for(term, as_json=True) is None


def test_the_progress_bar_paces_its_slices_and_shows_an_eta():
    """Virtual time per wall second, measured between calls (smoothed), sets the next slice (a tenth
    of a wall second) and the time left; the bar appears after a second."""
    from wddmsim.runner.progress import RunProgress, eta_text
    from rich.console import Console
    import io

    wall = iter([0.0, 0.5, 1.5, 2.0])
    term = Console(file=io.StringIO(), force_terminal=True, width=120)
    bar = RunProgress(term, clock=lambda: next(wall))
    assert bar(1_000_000, 10_000_000) == 200_000  # 1 ms in 0.5 s: 2 ms per wall second, slices of 0.2 ms
    assert bar.bar is None and bar.pace == 2_000_000
    assert bar(2_000_000, 10_000_000) == 170_000  # 1 ms in 1 s: the pace goes to 0.7 * 2 + 0.3 * 1 ms/s
    assert bar.bar is not None
    assert bar.fields(2_000_000, 10_000_000) == {"done": "2.000 ms / 10.00 ms", "pace": "1.700 ms per wall s",
                                                 "eta": "0:00:05"}
    assert bar(4_000_000, 10_000_000) == 239_000  # 2 ms in 0.5 s: 0.7 * 1.7 + 0.3 * 4 = 2.39 ms/s
    bar.finish()
    drawn = term.file.getvalue()
    assert bar.bar is None and "virtual time" in drawn and "4.000 ms / 10.00 ms 2.390 ms per wall s ETA 0:00:03" in drawn
    assert (eta_text(None), eta_text(3599.6), eta_text(3725)) == ("-:--:--", "1:00:00", "1:02:05")


def test_a_hardware_scheduled_run_shows_engines_contexts_queues_addresses_and_fences():
    r = run("run", "examples/hardware_scheduling.toml")
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert "Engines (hardware scheduling)" in out and "context switches" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("game/", "indexer/"))}
    assert lines["game/render"][:5] == ["game/render", "3D_0", "focus", "30", "28"]
    assert lines["indexer/background"][:5] == ["indexer/background", "3D_0", "idle", "2", "2"]
    assert "Hardware queues: 6 queues, 182 buffers sent, 15 presents, 1 suspend, 1 resume, 0 page faults" in out
    assert "GPU virtual addresses: 5 address spaces" in out and "Monitored fences: 7 created" in out
    summary = json.loads(run("run", "examples/hardware_scheduling.toml", "--json").stdout)
    wddm2 = summary["wddm2"]
    busy = sum(c["gpu_busy_ns"] for c in wddm2["contexts"])
    engines = {e["name"]: e for e in wddm2["engines"]}
    node = {n["name"]: n for n in summary["nodes"]}
    # The contexts' GPU time is what the engines did, nothing run ahead, less VidMm's own
    # page-table writes at the start (microseconds on the copy engine).
    engines_busy = (node["3D_0"]["gpu_busy_pct"] + node["COPY_0"]["gpu_busy_pct"]) * 1e6
    assert 0 < engines_busy - busy < 20_000
    assert engines["3D_0"]["context_switches"] > 0 and summary["scheduling"] == "hardware"


def test_compare_runs_both_schedulers_and_says_what_it_translated():
    r = run("compare", "examples/hardware_scheduling.toml", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["software"]["scheduling"] == "software" and d["hardware"]["scheduling"] == "hardware"
    assert d["software"]["gpu_va"] is True  # the fences need it
    assert "hw_scheduling" not in d["software"]["wddm2"] and "hw_scheduling" in d["hardware"]["wddm2"]
    assert d["translations"] == [
        "software run: game/render: band dropped (hardware scheduling only)",
        "software run: trainer/compute: suspend_at dropped (hardware scheduling only)",
        "software run: camera/capture: the chain's GPU waits are held by the OS instead",
        "software run: encoder/encode: the chain's GPU waits are held by the OS instead",
    ]
    both = {c["context"] for c in d["software"]["contexts"]} == {c["context"] for c in d["hardware"]["contexts"]}
    assert both and all(c["completed"] == 50 for s in d.values() if isinstance(s, dict)
                        for c in s["contexts"] if c["context"].startswith(("camera", "encoder")))
    text = run("compare", "examples/interactive_beside_hog.toml")
    assert text.exit_code == 0
    assert "software (sw) vs hardware (hw) scheduling" in text.stdout
    assert "CPU-side cost of the submission path" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 100
    assert "hardware run: driver.ddi_version" not in text.stdout  # wddm2_7 already


def test_compare_reports_what_hardware_scheduling_cannot_run(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[[process]]\nname = "a"\n[[process.context]]\nname = "c"\nnode = "3D"\n'
                 'workload = { kind = "memory_pressure", allocations = 2, size = 4096 }\n')
    r = run("compare", str(f))
    assert r.exit_code == 2
    assert "(hardware run)" in r.stderr and "memory_pressure needs VidMm to evict" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
