"""The command line as a person uses it: exact answers, and bad input answered with one clear line
and exit status 2, never a traceback."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi import codec, registry

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def run(*args):
    return runner.invoke(main, list(args))


def test_layout_json_is_exact():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--arch", "x86", "--ddi-version", "win7", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert (d["struct"], d["arch"], d["ddi_version"], d["size"]) == ("DXGKARG_SUBMITCOMMAND", "x86", "win7", 72)
    assert d["members"]["hDevice"] == {"offset": 0, "size": 4}
    assert d["members"]["hContext"] == {"offset": 0, "size": 4}
    assert d["members"]["DmaBufferPhysicalAddress"] == {"offset": 8, "size": 8}
    assert "Flags.Resubmission" not in d["members"]  # a WDDM 2.0 bit
    assert d["members"]["Flags.Reserved"] == {"offset": 56, "size": 4, "bit_offset": 6, "bit_width": 26}
    assert d["members"]["DmaBufferVirtualAddress"] == {"offset": 64, "size": 8}
    assert "NodeOrdinal" not in d["members"]


def test_layout_table_text():
    r = run("layout", "DXGK_SUBMITCOMMANDFLAGS", "--ddi-version", "win8")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("DXGK_SUBMITCOMMANDFLAGS  x64  DDI win8 (0x300E, Windows 8)  size 4")
    assert any(line.split() == ["+0x000", "ContextSwitch", "UINT", "4", "6", "0x00000040"] for line in lines)
    assert any(line.split() == ["+0x000", "Reserved", "UINT", "4", "7..31", "0xFFFFFF80"] for line in lines)


def test_layout_of_an_enumeration_lists_its_values():
    d = json.loads(run("layout", "D3DDDI_FLIPINTERVAL_TYPE", "--json").stdout)
    assert d["size"] == 4 and d["values"]["D3DDDI_FLIPINTERVAL_FOUR"] == 4


@pytest.mark.parametrize(
    "args,message",
    [
        (("layout", "DXGKARG_SUBMITCOMAND"), "unknown structure 'DXGKARG_SUBMITCOMAND'; did you mean DXGKARG_SUBMITCOMMAND"),
        (("layout", "DXGKARG_SUBMITCOMMANDVIRTUAL", "--ddi-version", "win8"),
         "DXGKARG_SUBMITCOMMANDVIRTUAL does not exist at DDI version win8; it appeared in wddm2_0"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "00" * 15), "argument: DXGKARG_PREEMPTCOMMAND (x64, wddm3_2) is 16 bytes, got 15"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "zz" * 16), "argument: not hex: unexpected character 'z'"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "0" * 31), "argument: odd number of hex digits (31)"),
        (("decode", "DXGKARG_PREEMPTCOMMAND", "@/nonexistent/record.bin"), "/nonexistent/record.bin: no such file"),
        (("decode", "NTSTATUS", "00000000"), "NTSTATUS is a scalar; decode takes a structure"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert r.stderr == f"wddmsim: error: {message}\n" or r.stderr.startswith(f"wddmsim: error: {message}")
    assert "Traceback" not in r.stderr + r.stdout


def test_unknown_version_is_a_usage_error():
    r = run("layout", "DXGKARG_SUBMITCOMMAND", "--ddi-version", "win95")
    assert r.exit_code == 2 and "win95" in r.stderr and "Traceback" not in r.stderr


def test_decode_spells_out_flags_and_lists_broken_rules(tmp_path):
    rec = registry.RECORDS["DXGKARG_SUBMITCOMMAND"]
    obj = codec.new(rec, hContext=0x40, DmaBufferSize=0x1000, DmaBufferSubmissionEndOffset=0x800,
                    DmaBufferPrivateDataSize=0x80, DmaBufferPrivateDataSubmissionStartOffset=0x10,
                    DmaBufferPrivateDataSubmissionEndOffset=0x80, SubmissionFenceId=5, Flags=0x2)
    path = tmp_path / "submit.bin"
    path.write_bytes(codec.to_bytes(obj))
    r = run("decode", "DXGKARG_SUBMITCOMMAND", f"@{path}", "--json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["fields"]["Flags"]["text"] == "0x00000002 (Present)"
    assert d["fields"]["SubmissionFenceId"]["value"] == 5
    assert [v["rule"] for v in d["violations"]] == [4]
    text = run("decode", "DXGKARG_SUBMITCOMMAND", codec.to_bytes(obj).hex(" ")).stdout
    assert "rule 4" in text and "Present" in text


def test_decode_of_a_clean_structure_says_so():
    rec = registry.RECORDS["DXGKARG_QUERYCURRENTFENCE"]
    hexbytes = codec.to_bytes(codec.new(rec, CurrentFence=3, NodeOrdinal=1)).hex()
    r = run("decode", "DXGKARG_QUERYCURRENTFENCE", "0x" + hexbytes)
    assert r.exit_code == 0
    assert "No contract rule" in r.stdout
    assert [line.split() for line in r.stdout.splitlines()[2:5]] == [
        ["+0x000", "CurrentFence", "3"], ["+0x004", "NodeOrdinal", "1"], ["+0x008", "EngineOrdinal", "0"]]


def test_console_script_is_installed():
    r = subprocess.run([sys.executable, "-m", "wddmsim", "layout", "PHYSICAL_ADDRESS", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["members"]["QuadPart"] == {"offset": 0, "size": 8}


def test_readme_examples_run(tmp_path):
    """Every `uv run wddmsim ...` example of the README works (a file example gets a real file)."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    examples = re.findall(r"^uv run wddmsim (.+?)(?:\s+#.*)?$", readme, re.M)
    assert len(examples) >= 4
    for line in examples:
        args = shlex.split(line)
        if "@crash.bin" in args:
            rec = registry.RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"]
            (tmp_path / "crash.bin").write_bytes(codec.to_bytes(codec.new(rec, "x86", InterruptType=1)))
            args = [f"@{tmp_path / 'crash.bin'}" if a == "@crash.bin" else a for a in args]
        root = Path(__file__).parents[1]
        # Files the examples write go to the test's own directory, never the checkout.
        args = [str(root / a) if a.startswith(("examples/", "tests/data/"))
                else str(tmp_path / a) if (a.endswith((".jsonl", ".json", ".csv")) and not a.startswith("@"))
                or (i and args[i - 1] in ("--report", "-o", "--emit")) else a
                for i, a in enumerate(args)]
        r = run(*args)
        assert r.exit_code == 0, (line, r.stderr)


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
    assert r.stdout.splitlines()[:3] == ["deep_queue  seed 9  virtual time 50.50 ms  software scheduling",
                                         "DMA packets: 52 submitted to the driver, 50 completed, the last at 50.00 ms",
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


def test_bugcheck_run_writes_a_crash_record_that_decode_reads(tmp_path, monkeypatch):
    from wddmsim.cli import execute
    from wddmsim.ddi.ntstatus import NTSTATUS
    from wddmsim.kmd import ReferenceDriver
    from wddmsim.scenario import load_scenario
    import wddmsim.system as system_mod

    class Failing(ReferenceDriver):
        def DxgkDdiSubmitCommand(self, hAdapter, p):
            return int(NTSTATUS.STATUS_NO_MEMORY) if p.SubmissionFenceId == 2 else super().DxgkDdiSubmitCommand(hAdapter, p)

    monkeypatch.setattr(system_mod, "ReferenceDriver", Failing)
    record = tmp_path / "crash.json"
    sc = load_scenario(str(Path(__file__).parent.parent / "examples" / "deep_queue.toml"))
    assert execute(sc, as_json=True, crash_record=str(record)) == 3
    r = CliRunner().invoke(main, ["decode", f"@{record}"])
    assert r.exit_code == 0, r.output
    assert "BugCheck 0x119 (VIDEO_SCHEDULER_INTERNAL_ERROR) {0x2, 0xC0000017" in r.output
    assert "DRIVER_FAILED_SUBMIT_COMMAND" in r.output and "Rule broken: 1" in r.output
    assert "DXGKARG_SUBMITCOMMAND" in r.output and "SubmissionFenceId" in r.output
    r = CliRunner().invoke(main, ["decode", f"@{record}", "--json"])
    out = json.loads(r.output)
    assert out["fields"]["SubmissionFenceId"]["value"] == 2 and out["crash"]["bugcheck"]["p1"] == 2


def test_decode_rejects_a_file_that_is_not_a_crash_record(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"format": "other"}')
    r = CliRunner().invoke(main, ["decode", f"@{f}"])
    assert r.exit_code == 2 and "not a wddmsim-crash-record file" in r.output


def test_running_in_progress_slices_changes_nothing():
    from wddmsim.scenario import load_scenario
    from wddmsim.system import System
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
    from wddmsim.runprogress import RunProgress, progress_for
    from rich.console import Console
    import io

    assert progress_for(Console(file=io.StringIO()), as_json=False) is None
    term = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(progress_for(term, as_json=False), RunProgress)
    assert progress_for(term, as_json=True) is None


def test_the_progress_bar_paces_its_slices_and_shows_an_eta():
    """Virtual time per wall second, measured between calls (smoothed), sets the next slice (a tenth
    of a wall second) and the time left; the bar appears after a second."""
    from wddmsim.runprogress import RunProgress, eta_text
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
    assert "Hardware queues: 6 queues, 182 buffers submitted, 15 presents, 1 suspend, 1 resume, 0 page faults" in out
    assert "GPU virtual addresses: 5 address spaces" in out and "Monitored fences: 7 created" in out
    summary = json.loads(run("run", "examples/hardware_scheduling.toml", "--json").stdout)
    w2 = summary["wddm2"]
    busy = sum(c["gpu_busy_ns"] for c in w2["contexts"])
    engines = {e["name"]: e for e in w2["engines"]}
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
    assert "hwsch" not in d["software"]["wddm2"] and "hwsch" in d["hardware"]["wddm2"]
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
