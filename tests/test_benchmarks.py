"""Every benchmark still runs, on tiny sizes, and its figures keep the common shape (a scenario-schema
change once broke ``--mode hardware`` unnoticed). Only correctness here: speed and memory are
measured by running ``benchmarks/``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(name: str):
    """The module ``benchmarks/NAME.py`` (``benchmarks/`` is no package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _throughput():
    return _bench("throughput")


# With GPU virtual addresses VidMm's page-table write for each of the two processes is retired too.
@pytest.mark.parametrize(("mode", "expected"), [("physical", 64), ("gpu_va", 66), ("hardware", 66)])
def test_every_benchmark_mode_retires_every_packet(mode, expected):
    bench = _throughput()
    retired, wall = bench.run_model(2, 64, mode=mode)
    assert retired == expected and wall > 0


def test_the_sweep_benchmark_measures_identical_rows_on_both_executors():
    module = _bench("sweep")
    fig = module.measure("5ms", seeds="1-2", workers=2)
    assert (fig["benchmark"], fig["runs"], fig["rows_identical"], fig["failed_runs"], fig["target"]) == (
        "sweep", 4, True, 0, 1.8)
    assert fig["met"] == (fig["speedup"] >= 1.8) and fig["serial_s"] > 0 and fig["pool_s"] > 0


def test_headline_figure_follows_the_benchmarks_convention():
    bench = _throughput()
    fig = bench.headline(packets=64, repeat=1)
    # 8 contexts of one batch of 16 each (a context submits at least one batch).
    assert fig["benchmark"] == "throughput" and fig["packets"] == 128
    assert fig["baseline_ratio"] == bench.BASELINE_RATIO == 0.006
    assert fig["target_ratio"] == 0.024 and fig["met"] is (fig["ratio"] >= 0.024)
    assert fig["packets_per_s"] > 0 and fig["ratio"] > 0


def test_profile_splits_a_packet_by_component():
    module = _bench("profile_path")
    fig = module.profile(64, functions=3)
    assert fig["benchmark"] == "profile_path" and fig["packets"] == 128
    assert (fig["contexts"], fig["mode"]) == (8, "physical")
    assert fig["figure"] == _throughput().HEADLINE + ": time per packet by component"
    assert len(fig["functions"]) == 3
    assert {"gateway + verifier", "driver (reference KMD)", "ground truth"} <= set(fig["components"])
    assert module.component("/x/src/wddmsim/dxgkrnl/groundtruth.py") == "ground truth"
    assert module.component("/x/src/wddmsim/dxgkrnl/vidsch.py").startswith("OS scheduler")
    assert module.component("/x/src/wddmsim/trace/ledger.py") == "packet ledger"
    # a method of a class of a compiled module is a C built-in to cProfile: counted in its module's component
    kernel = "kernel (timer heap, processes)"
    assert module.component("~", "<method 'run' of 'Simulator' objects>", {"Simulator": kernel}) == kernel
    assert module.component("~", "<method 'get' of 'dict' objects>", {"Simulator": kernel}) == module.BUILTINS
    assert module.component("~", "<method 'run' of 'Simulator' objects>") == module.BUILTINS
    assert set(fig["compiled"]) >= {"wddmsim.sim.kernel"}


def test_profile_takes_the_contexts_and_the_mode_and_its_figure_names_them():
    fig = _bench("profile_path").profile(64, contexts=2, mode="hardware")
    assert fig["figure"] == "packet rate, hardware mode, 2 contexts, verifier strict: time per packet by component"
    assert (fig["contexts"], fig["mode"], fig["packets"]) == (2, "hardware", 66)  # + a progress-fence packet a process
    assert all(set(c) == {"us_per_packet", "calls_per_packet"} for c in fig["components"].values())


def test_memory_benchmark_measures_a_streamed_run_in_its_own_process():
    bench = _bench("memory")
    rows = [bench.peak_rss(n) for n in (128, 256)]
    assert [r["packets"] for r in rows] == [128, 256]
    for r in rows:
        assert r["benchmark"] == "memory" and r["figure"] == "peak_rss" and r["log"] == "streamed"
        assert r["peak_rss_mib"] >= r["before_rss_mib"] > 0 and r["log_mib"] > 0
        # far below the 10^7 packets the target is set at: not judged, and the figure says at what size
        assert r["met"] is None and r["target"] == "peak under 300 MB at 10^7 packets"
        assert r["next_step"] == bench.NEXT_STEP["peak_rss"]
    assert [r["not_judged"] for r in rows] == ["n/a at 10^2 (target is at 10^7)", "n/a at 10^2 (target is at 10^7)"]
    assert bench._size(9_984) == "10^4" and bench._size(9_999_872) == "10^7"
    growth = bench.flatness(rows)
    assert growth["packets"] == [128, 256] and growth["growth_mib"] == round(rows[1]["peak_rss_mib"] - rows[0]["peak_rss_mib"], 1)


def test_memory_benchmark_lazy_figure_compares_a_billion_with_the_count_that_lasts_the_run():
    fig = _bench("memory").lazy(repeat=1)
    # The same 190 packets retire in the 10 ms whether 60 or 10^9 batches are described; 10 batches: 40.
    assert {k: v["packets"] for k, v in fig["counts"].items()} == {"10": 40, "60": 190, "1000000000": 190}
    assert fig["same_packets"] is True and fig["ratio_billion_to_covering"] > 0
    assert fig["met"] is (fig["ratio_billion_to_covering"] <= 1.25)


def test_realtime_benchmark_gives_one_factor_per_scenario_with_and_without_the_log():
    bench = _bench("realtime")
    names = [name for name, _ in bench.scenarios()]
    assert names[0] == "demo" and len(names) == 1 + len(list((ROOT / "examples").glob("*.toml")))
    (fig,) = bench.figures(quick=True, only=["deep_queue"])
    assert fig["scenario"] == "deep_queue" and fig["virtual_s"] == 0.02
    assert fig["rtf"] > 0 and fig["rtf_log"] > 0 and fig["log_mib"] > 0 and fig["log_cost"] > 0


def test_flatness_figures_cover_every_mode_and_context_count():
    bench = _throughput()
    figs = bench.flatness(packets=64, repeat=1, contexts=(1, 2))
    names = [f["figure"] for f in figs]
    assert names == ["flatness_physical", "flatness_gpu_va", "flatness_hardware", "flatness_hardware_no_in_flight_cap",
                     "mode_parity"]
    uncapped = figs.pop(3)
    assert uncapped["driver"] == {"engines": {"3D": {"max_in_flight_hw_queue_buffers": 0}}} and "target" not in uncapped
    assert uncapped["retired"] == {"1": 65, "2": 66} and uncapped["value"] >= 1.0
    for f in figs[:3]:
        assert f["benchmark"] == "throughput" and set(f["packets_per_s"]) == {"1", "2"}
        assert f["value"] >= 1.0 and f["met"] == (f["value"] <= 1.2) and f["target"] == 1.2
        # 32 packets a context are two batches of 16; with GPU virtual addresses each process's
        # page-table write is retired too
        assert f["retired"] == ({"1": 64, "2": 64} if f["mode"] == "physical" else {"1": 65, "2": 66})
    parity = figs[3]
    assert parity["contexts"] == 2 and set(parity["packets_per_s"]) == {"physical", "gpu_va", "hardware"}
    assert 0 < parity["value"] <= 1.0 and parity["met"] == (parity["value"] >= 0.5)


def test_all_runs_every_benchmark_file_and_keeps_going_past_a_broken_one(monkeypatch, capsys):
    every = _bench("all")
    assert sorted(f"{n}.py" for n in every.BENCHMARKS) == sorted(
        p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name != "all.py")
    for name in every.BENCHMARKS:
        assert callable(every.load(name).figures), name

    class Broken:
        @staticmethod
        def figures(quick):
            raise RuntimeError("no such machine")

    class Fine:
        @staticmethod
        def figures(quick):
            return [{"figure": "rate", "ratio": 0.5, "target": 0.25, "met": True}]

    monkeypatch.setattr(every, "load", {"broken": Broken, "fine": Fine}.__getitem__)
    figs, ok = every.run(["broken", "fine"], quick=True)
    assert not ok and [f["figure"] for f in figs] == ["error", "rate"]
    assert figs[0]["error"] == "RuntimeError: no such machine" and figs[1]["benchmark"] == "fine"
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["figure"] for line in lines] == ["error", "rate"]
    table = every.table(figs).splitlines()
    assert table[1].split() == ["fine", "rate", "ratio", "0.5", "0.25", "yes"]
    assert table[2].split()[:2] == ["broken", "error"] and table[2].split()[-1] == "NO"


def test_the_log_cost_figure_of_a_tiny_run():
    bench = _bench("logcost")
    fig = bench.measure("tiny", bench._throughput_scenario(2, 64), None, repeat=1)
    assert fig["benchmark"] == "logcost" and fig["figure"] == "event log cost: tiny"
    assert fig["packets"] == 64 and fig["target"] == 1.5 and fig["met"] == (fig["ratio"] <= 1.5)
    assert fig["log_bytes"] > 64 * 1000 and fig["bytes_per_packet"] == round(fig["log_bytes"] / 64)
    assert all(fig[f"{w}_s"] > 0 and fig[f"{w}_cpu_s"] > 0 for w in ("off", "null", "inproc", "file"))
    assert fig["file_total_cpu_s"] >= fig["file_cpu_s"] and fig["total_cpu_ratio"] >= fig["cpu_ratio"] > 0


def test_each_way_runs_the_same_packets(tmp_path):
    bench = _bench("logcost")
    sc = bench._throughput_scenario(2, 32)
    path = str(tmp_path / "events.jsonl")
    logs = {}
    for way in ("off", "null", "inproc", "file"):
        assert bench.run_once(sc, None, way, path)[3] == 32
        if way in ("inproc", "file"):
            logs[way] = Path(path).read_bytes()
    assert logs["inproc"] == logs["file"] and logs["file"].count(b"\n") > 32 * 8


def test_the_study_benchmark_times_a_whole_study_with_no_failed_run():
    fig = _bench("study").measure("1", workers=1)
    assert (fig["benchmark"], fig["runs"], fig["policies"], fig["workloads"], fig["failed_runs"], fig["target"]) == (
        "study", 30, 10, 3, 0, 180.0)
    assert fig["met"] == (fig["wall_s"] <= 180.0)


def test_the_ledger_cost_figure_runs_the_same_packets_with_the_ledger_on_and_off():
    fig = _bench("logcost").ledger_cost(packets=128, repeat=1)  # 8 contexts, batches of 16
    assert fig["benchmark"] == "logcost" and fig["figure"] == "ledger_cost" and fig["packets"] == 128
    assert fig["ledger_on_s"] > 0 and fig["ledger_off_s"] > 0 and fig["target"] == 1.05
    assert fig["met"] == (fig["ratio"] <= 1.05)


def test_the_startup_figures_time_the_script_in_fresh_processes():
    bench = _bench("startup")
    fig = bench.measure("version", repeat=1, uv=False, cached=False, profile=False)
    assert (fig["benchmark"], fig["figure"], fig["command"], fig["target"]) == (
        "startup", "startup_version", ["wddmsim", "--version"], 0.2)
    assert fig["script_s"] > 0 and fig["uv_run_s"] is None and fig["judged_on"] == "script_s"
    assert fig["met"] is (fig["startup_s"] < 0.2)
    fig = bench.measure("run_1ms", repeat=1, uv=False, cached=True, profile=True)
    assert fig["figure"] == "startup_run_1ms" and fig["target"] == 0.5 and fig["script_cached_s"] > 0
    assert "pydantic" in fig["imports_ms"] and all(ms >= 0 for ms in fig["imports_ms"].values())


def test_examples_realtime_judges_every_example_but_the_floods_it_names():
    bench = _bench("realtime")
    names = {p.stem for p in (ROOT / "examples").glob("*.toml")}
    # every flood is an example, and says why in words
    assert set(bench.FLOODS) <= names and all(len(why) > 40 for why in bench.FLOODS.values())
    rtf = dict.fromkeys(names, 20.0) | {"paging": 1.5, "gpu_va": 4.0, "null_rendering": 0.05, "demo": 2.0}
    fig = bench.examples_realtime(rtf)
    assert (fig["benchmark"], fig["figure"], fig["judged"]) == ("realtime", "examples_realtime",
                                                                len(names) - len(bench.FLOODS))
    assert fig["below_target"] == 2 and fig["below"] == ["paging", "gpu_va"] and fig["met"] is False
    assert fig["slowest"][:2] == [{"scenario": "paging", "rtf": 1.5}, {"scenario": "gpu_va", "rtf": 4.0}]
    assert fig["measured"] == f"2 of {fig['judged']} below 10 (slowest paging 1.5)"
    assert fig["floods"]["null_rendering"] == {"rtf": 0.05, "why": bench.FLOODS["null_rendering"]}
    assert "demo" not in fig["rtf"] and "null_rendering" not in fig["rtf"]
    assert fig["show_profile"] is True and fig["next_step"] == _throughput().PACKET_RATE_NEXT_STEP
    assert bench.examples_realtime(dict.fromkeys(names, 10.0))["met"] is True
    # a flood that is no longer an example is said, not silently dropped
    assert bench.examples_realtime({"deep_queue": 50.0})["floods_not_found"] == sorted(bench.FLOODS)


def test_examples_realtime_runs_each_example_at_its_own_duration():
    own = _bench("realtime").own_rtf(["residency", "tdr_failure"])
    assert set(own) == {"residency", "tdr_failure"} and all(f > 0 for f in own.values())


def test_the_game_and_compute_figure_against_its_baseline(monkeypatch):
    bench = _bench("realtime")
    assert bench.BASELINE_REVISION == "1a7451f" and set(bench.BASELINE_NORMALISED) == {20, 5}
    # a tiny real run: no baseline at that duration, so measured but not judged
    fig = bench.game(seconds=0.05, repeat=1)
    assert fig["figure"] == "game_and_compute, 0.05 s virtual, log off (quick; the target is at 20 s)"
    assert fig["virtual_s"] == 0.05 and fig["rtf"] > 0 and fig["bare_s_per_mpacket"] > 0
    assert fig["normalised_rtf"] == pytest.approx(fig["rtf"] * fig["bare_s_per_mpacket"], rel=0.01)
    assert fig["met"] is None and fig["not_judged"] == "n/a at 0.05 s (no baseline measured at that duration)"
    assert fig["model"] == str(ROOT / "src" / "wddmsim") and set(fig["compiled"]) >= {"wddmsim.sim.kernel"}
    # at 20 s: judged against five times the baseline
    base = bench.BASELINE_NORMALISED[20]
    for normalised, met in ((5 * base * 1.01, True), (5 * base * 0.99, False)):
        monkeypatch.setattr(bench, "game_measure", lambda s, r, n=normalised: {"virtual_s": s, "normalised_rtf": n})
        fig = bench.game(quick=False)
        assert fig["figure"] == "game_and_compute, 20 s virtual, log off" and fig["met"] is met
        assert fig["speedup_vs_baseline"] == round(normalised / base, 2) and "not_judged" not in fig
        assert fig["show_profile"] is True and fig["next_step"] == _throughput().PACKET_RATE_NEXT_STEP
    assert bench.game(quick=True)["figure"].endswith("5 s virtual, log off (quick; the target is at 20 s)")


def test_the_game_and_compute_figure_measures_an_older_tree_in_fresh_processes(tmp_path):
    bench = _bench("realtime")
    fig = bench.game_against(str(ROOT), seconds=0.05, rounds=1)  # this tree stands in for the older one
    assert fig["baseline_model"] == str(ROOT / "src" / "wddmsim") and fig["rounds"] == 1
    assert fig["before_normalised_rtf"] > 0 and fig["after_normalised_rtf"] > 0 and fig["speedup"] > 0
    assert fig["target"] == "speedup >= 5" and fig["met"] is (fig["speedup"] >= 5)
    with pytest.raises(SystemExit, match="no src/wddmsim"):
        bench.game_against(str(tmp_path), seconds=0.05, rounds=1)


def test_the_game_and_compute_log_cost_figure_carries_its_own_target():
    bench = _bench("logcost")
    fig = bench.game_log(0.02, repeat=1)
    assert fig["figure"] == "event log cost: game_and_compute, 0.02 s (quick; the target is at 20 s)"
    assert fig["virtual_s"] == 0.02 and fig["target"] == 1.3 and fig["compare"] == "<="
    assert fig["met"] is (fig["ratio"] <= 1.3) and fig["next_step"] == bench.NEXT_STEP["event log cost"]
    assert bench.GAME_S == 20 and bench.GAME_TARGET == 1.3


def test_compiled_and_interpreted_runs_write_the_same_log():
    bench = _bench("compiled")
    fig = bench.measure(["priorities"], until="2ms", repeat=1)
    assert (fig["benchmark"], fig["figure"], fig["identical"], fig["compared"], fig["met"]) == (
        "compiled", "compiled_vs_interpreted", 1, 1, True)
    row = fig["scenarios"]["priorities"]
    assert row["identical"] is True and row["packets"] > 0 and row["log_bytes"] > 0 and "first_difference" not in row
    assert row["ratio"] == round(row["rtf_compiled"] / row["rtf_interpreted"], 3) and fig["rate_ratio"] > 0
    assert fig["measured"].startswith("logs identical 1/1; packet rate compiled/interpreted ")
    assert set(fig["interpreted_status"].values()) == {"pure: WDDMSIM_PURE is set"}
    assert set(fig["compiled_status"]) == set(fig["interpreted_status"])
    assert ("note" in fig) is (set(fig["compiled_status"].values()) != {"compiled"})


def test_compiled_and_interpreted_logs_that_differ_fail_the_figure_and_say_where(monkeypatch):
    bench = _bench("compiled")
    monkeypatch.setattr(bench, "status", lambda pure: {"wddmsim.sim.kernel": "pure: x" if pure else "compiled"})

    def run(scenario, until, log, pure):
        log.write_bytes(b'{"a": 1}\n{"b": %d}\n' % pure)
        return (2.0 if pure else 3.0), b'{"packets_completed": 7}'

    monkeypatch.setattr(bench, "run", run)
    fig = bench.measure(["priorities"], repeat=1)
    assert fig["met"] is False and fig["identical"] == 0 and fig["rate_ratio"] == 1.5 and "note" not in fig
    assert fig["scenarios"]["priorities"]["first_difference"] == {
        "run": "pure 1", "line": 2, "compiled": '{"b": 0}', "interpreted": '{"b": 1}'}


def test_every_benchmark_with_a_target_gives_its_next_step():
    every = _bench("all")
    for name in every.BENCHMARKS:
        if name == "profile_path":
            continue
        steps = every.load(name).NEXT_STEP
        assert steps and all(isinstance(t, str) and len(t) > 40 for t in steps.values()), name


PROFILE = {"benchmark": "profile_path", "figure": "packet rate, physical mode, 8 contexts, verifier strict: "
           "time per packet by component", "packets": 3968, "cpu_us_per_packet": 95.9, "calls_per_packet": 243.7,
           "components": {f"component {i}": {"us_per_packet": 20.0 - i, "calls_per_packet": 30.0 - i}
                          for i in range(8)}}


def test_the_table_shows_every_measured_value_and_does_not_judge_below_the_target_size():
    every = _bench("all")
    figs = [
        {"benchmark": "throughput", "figure": "flatness_gpu_va", "value": 1.603, "target": 1.2, "compare": "<=",
         "met": False},
        {"benchmark": "memory", "figure": "peak_rss", "peak_rss_mib": 288.0, "target": "peak under 300 MB at 10^7",
         "met": None, "not_judged": "n/a at 10^4 (target is at 10^7)"},
        {"benchmark": "memory", "figure": "lazy", "ratio_billion_to_covering": 0.998, "target": "10^9 within 1.25x",
         "met": True},
        {"benchmark": "study", "figure": "policy_study_wall_time", "wall_s": 9.79, "target": 180.0, "compare": "<=",
         "met": True},
        {"benchmark": "realtime", "figure": "examples_realtime", "rtf": {"a": 1}, "measured": "3 of 23 below 10",
         "target": "every example >= 10", "met": False},
        {"benchmark": "realtime", "figure": "real_time_factor", "rtf": 5.0},  # no target: no row
    ]
    lines = every.table(figs).splitlines()
    assert lines[0].split() == ["benchmark", "figure", "measured", "target", "met"] and len(lines) == 6
    assert lines[1].split() == ["throughput", "flatness_gpu_va", "value", "1.603", "<=", "1.2", "NO"]
    assert lines[2].split()[-7:] == ["n/a", "at", "10^4", "(target", "is", "at", "10^7)"] and " NO" not in lines[2]
    assert "ratio_billion_to_covering 0.998" in lines[3] and "wall_s 9.79" in lines[4] and "<= 180.0" in lines[4]
    assert "3 of 23 below 10" in lines[5] and lines[5].endswith("NO")


def test_an_unmet_target_prints_its_measurement_profile_and_next_step():
    every = _bench("all")
    unmet = {"benchmark": "throughput", "figure": "flatness_hardware", "value": 2.214, "target": 1.2, "compare": "<=",
             "met": False, "packets_per_s": {"1": 15343, "256": 6929}, "show_profile": True,
             "next_step": "Remove the per-context scans."}
    no_profile = {"benchmark": "logcost", "figure": "ledger_cost", "ratio": 1.054, "target": 1.05, "met": False,
                  "next_step": "Compile the ledger."}
    no_step = {"benchmark": "sweep", "figure": "sweep", "speedup": 0.8, "target": 1.8, "met": False}
    met = {"benchmark": "study", "figure": "study", "wall_s": 9.8, "target": 180.0, "met": True, "next_step": "x"}
    below = {"benchmark": "memory", "figure": "peak_rss", "peak_rss_mib": 288.0, "target": "t", "met": None,
             "next_step": "y"}
    text = every.unmet([unmet, no_profile, no_step, met, below, PROFILE])
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [
        "NOT MET: throughput: flatness_hardware", "NOT MET: logcost: ledger_cost", "NOT MET: sweep: sweep"]
    first = blocks[0].splitlines()
    assert first[1] == "  measured: value 2.214 (target: <= 1.2)"
    assert first[2] == '  values: packets_per_s {"1": 15343, "256": 6929}'
    assert " ".join(line.strip() for line in first[3:5]) == (
        f"profile of this run ({PROFILE['figure']}): 3968 packets, 95.9 us and 243.7 calls per packet; "
        "top 6 components:")
    assert first[5].split() == ["component", "us/packet", "calls/packet"]
    assert [line.split()[-2:] for line in first[6:12]] == [[str(20.0 - i), str(30.0 - i)] for i in range(6)]
    assert first[12] == "  next step: Remove the per-context scans." and len(first) == 13
    assert "profile" not in blocks[1] and blocks[1].splitlines()[-1] == "  next step: Compile the ledger."
    assert blocks[2].splitlines()[-1] == "  next step: none recorded (benchmarks/sweep.py has no NEXT_STEP for it)"
    # the profile asked for but not run
    assert "  profile: not in this run" in every.unmet([unmet])
    report = every.report([met, below])
    assert report.endswith("every target measured is met") and "NOT MET" not in report
    assert every.report([below, PROFILE]).splitlines()[-1].startswith("memory ")  # nothing judged: no verdict
    assert every.report([PROFILE]) == "no figure carries a target"
    error = {"benchmark": "sweep", "figure": "error", "error": "RuntimeError: no pool"}
    assert every.report([met, error]).endswith(
        "every target measured is met\n\nfailed (their figures are missing; exit status 1): sweep")


def test_all_says_whether_the_compiled_modules_ran():
    every = _bench("all")
    env = every.environment()
    assert env["figure"] == "environment" and env["compiled"] in ("all", "some", "none")
    assert env["model"] == str(ROOT / "src" / "wddmsim") and "wddmsim.sim.kernel" in env["compiled_modules"]
    modules = ("wddmsim.sim.kernel", "wddmsim.gpu.memory")
    compiled = dict(env, compiled="all", compiled_modules=dict.fromkeys(modules, "compiled"))
    pure = dict(env, compiled="none", compiled_modules=dict.fromkeys(modules, "pure: WDDMSIM_PURE is set"))
    assert "; compiled modules in use (kernel, memory); revision " in every.header(["a"], True, compiled)
    assert every.header(["a", "b"], True, pure).startswith("# 2 benchmarks (quick); CPUs ")
    assert "; compiled modules NOT in use (pure: WDDMSIM_PURE is set); " in every.header(["a"], False, pure)


def test_the_memory_figure_is_the_runs_own_peak_not_its_parents():
    # Linux carries ru_maxrss across exec: a child started by a large process reported the parent's
    # peak (250 MiB under all.py); VmHWM is the child's own.
    big = bytearray(256 * 2**20)
    big[::4096] = b"x" * len(big[::4096])
    fig = _bench("memory").peak_rss(128)
    del big
    assert 0 < fig["before_rss_mib"] < 200 and fig["run_rss_mib"] < 200


def test_profile_counts_a_compiled_class_in_its_modules_component():
    import wddmsim.runner.system  # noqa: F401 - imports the compiled modules
    from wddmsim import _native

    module = _bench("profile_path")
    classes = module.compiled_classes()
    if _native.status()["wddmsim.sim.kernel"] == "compiled":
        assert classes["Simulator"] == "kernel (timer heap, processes)"
    else:
        assert "Simulator" not in classes
