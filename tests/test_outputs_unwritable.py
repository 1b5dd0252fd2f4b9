"""An output that cannot be written (issue 29): one line naming the file and the reason, ``wddmsim:
error: PATH: cannot write: REASON``, never a traceback; everything else that can be written is
(the run's summary, its other outputs, the crash record), and the exit status is 2, or the run's
own status when that is not 0 (a bug check's 3 stands).

The cases work as root too: ``/dev/full`` refuses every write ("No space left on device"), a path
under a regular file cannot be created ("Not a directory"), a folder where a file should go cannot
be opened ("Is a directory"). The read-only folder cases are skipped as root, which ignores
permissions."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.output.report import write_comparison
from wddmsim.trace import JsonlSink
from wddmsim.trace import writer as log_writer
from wddmsim.trace.output import WriteFailed

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

EXAMPLES = Path(__file__).parent.parent / "examples"
PRIORITIES = str(EXAMPLES / "priorities.toml")
TDR_FAILURE = str(EXAMPLES / "tdr_failure.toml")
FULL = "/dev/full"
NO_SPACE = f"wddmsim: error: {FULL}: cannot write: No space left on device"
REPORT_FILES = ("summary.json", "summary.md", "node_utilisation.png", "context_latency.png", "queue_depths.png")
not_as_root = pytest.mark.skipif(os.geteuid() == 0, reason="root ignores a folder's permissions")

pytestmark = pytest.mark.skipif(not os.path.exists(FULL), reason="needs /dev/full")


def run(*args):
    return runner.invoke(main, [str(a) for a in args])


def _errors(r) -> list[str]:
    assert "Traceback" not in r.stderr and r.exception is None or isinstance(r.exception, SystemExit), r.stderr
    return [line for line in r.stderr.splitlines() if line.startswith("wddmsim: error:")]


def _block(folder: Path, names=REPORT_FILES) -> Path:
    """A report folder where each of ``names`` is a folder: none of those files can be written."""
    for name in names:
        (folder / name).mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def plain() -> str:
    """The JSON summary of the 1 ms run the cases make, with no output asked for."""
    r = run("run", PRIORITIES, "--until", "1ms", "--json")
    assert r.exit_code == 0
    return r.stdout


# ------------------------------------------------------------------------------------ run
@pytest.mark.parametrize("option", ["--events", "--trace", "--presentmon"])
def test_run_output_on_a_full_disk_is_one_line_after_the_summary(option, plain):
    r = run("run", PRIORITIES, "--until", "1ms", "--json", option, FULL)
    assert r.exit_code == 2
    assert r.stdout == plain  # the run's summary is not lost
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("wall time ") and lines[1] == NO_SPACE
    assert _errors(r) == [NO_SPACE]


def test_run_says_each_output_that_failed_and_writes_the_others(tmp_path, plain):
    trace = tmp_path / "t.json"
    r = run("run", PRIORITIES, "--until", "1ms", "--json", "--events", FULL, "--trace", trace, "--presentmon", FULL,
            "--report", tmp_path / "r")
    assert r.exit_code == 2 and r.stdout == plain
    assert _errors(r) == [NO_SPACE, NO_SPACE]
    assert json.loads(trace.read_text())["traceEvents"]
    assert sorted(os.listdir(tmp_path / "r")) == sorted(REPORT_FILES)


def test_an_event_log_that_fills_the_disk_mid_run_does_not_stop_the_run():
    """The writer process fails once its first megabyte goes to the file, part way through the run;
    the run goes on to its end without the log, and its summary is the one without a log."""
    game = str(EXAMPLES / "game_and_compute.toml")
    alone = run("run", game, "--until", "500ms", "--json")
    r = run("run", game, "--until", "500ms", "--json", "--events", FULL)
    assert alone.exit_code == 0 and r.exit_code == 2
    assert r.stdout == alone.stdout and json.loads(r.stdout)["virtual_time_ns"] == 500_000_000
    assert _errors(r) == [NO_SPACE]


def test_the_log_writer_process_keeps_a_write_error_for_close(monkeypatch):
    """A full disk in the writer process: the run's side learns it (here from size(), which waits for
    the writer), drops the events from then on, and close() raises it once, as a WriteFailed."""
    sink = JsonlSink(FULL)
    assert not sink.in_process
    process = sink._writer._process
    text = "x" * 1000
    for t in range(3 * log_writer.BATCH):  # about 6 MB: past the writer's 1 MB buffer
        sink.emit(t, "Dropped", {"source": text})
    assert sink.size() == 0 and str(sink.error) == f"{FULL}: cannot write: No space left on device"
    for t in range(log_writer.BATCH):
        sink.emit(t, "Dropped", {"source": text})  # dropped: nothing is sent, nothing raised
    with pytest.raises(WriteFailed) as info:
        sink.close()
    assert str(info.value) == f"{FULL}: cannot write: No space left on device" and info.value.errno == 28
    assert isinstance(info.value, OSError)
    sink.close()  # once only
    assert not process.is_alive() and process.exitcode == 0


def test_the_sink_in_process_keeps_a_write_error_for_close():
    sink = JsonlSink(FULL, process=False)
    text = "x" * 1000
    for t in range(3000):  # 3 MB: past the file's 1 MB buffer, so a write fails during the emits
        sink.emit(t, "Dropped", {"source": text})
    assert str(sink.error) == f"{FULL}: cannot write: No space left on device" and sink.count == 3000
    assert sink.size() == 0
    with pytest.raises(WriteFailed, match="^/dev/full: cannot write: No space left on device$"):
        sink.close()
    sink.close()  # once only


def test_a_log_whose_file_failed_once_gets_no_later_line():
    """A write that fails and a file that would take the next one: the log stops at the failure
    (a log cut short, which the readers know), never a log with a gap."""
    class Flaky(io.StringIO):
        calls = 0

        def write(self, text):
            self.calls += 1
            if self.calls == 2:
                raise OSError(28, "No space left on device")
            return super().write(text)

    out = Flaky()
    sink = JsonlSink(out)
    for t in range(3):
        sink.emit(t, "Dropped", {"source": t})
    assert out.getvalue() == '{"t":0,"event":"Dropped","source":0}\n' and sink.count == 3
    with pytest.raises(WriteFailed, match="^<event log>: cannot write: No space left on device$"):
        sink.close()


def test_run_event_log_that_cannot_be_created_is_one_line_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run("run", PRIORITIES, "--until", "1ms", "--events", blocker / "log.jsonl")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"wddmsim: error: {blocker}/log.jsonl: cannot write: Not a directory\n"


# ------------------------------------------------------------------------------------ case 2: a bug check's run
def _bugcheck_run(tmp_path, report, *more):
    crash = tmp_path / "crash.json"
    r = run("run", TDR_FAILURE, "--report", report, "--crash-record", crash, *more)
    return r, crash


def _assert_summary_and_record(r, crash):
    assert r.exit_code == 3  # the run's own status: it ended in bug check 0x116
    assert r.stdout.startswith("tdr_failure  seed ")
    assert "VIDEO_TDR_FAILURE" in r.stdout
    words = " ".join(r.stdout.split())  # a long path wraps the line
    assert words.endswith(f"Crash record: {crash} (read it with: uv run wddmsim decode @{crash})")
    assert json.loads(crash.read_text())["bugcheck"]["code"] == 0x116


def test_bugcheck_run_with_an_unwritable_report_keeps_summary_record_and_status(tmp_path):
    report = _block(tmp_path / "r")
    r, crash = _bugcheck_run(tmp_path, report)
    _assert_summary_and_record(r, crash)
    assert _errors(r) == [f"wddmsim: error: {report}: cannot write 5 of the report's 5 files "
                          f"(summary.json, summary.md, node_utilisation.png, context_latency.png, "
                          f"queue_depths.png): Is a directory"]
    assert r.stderr.splitlines()[-1] == _errors(r)[0]


def test_a_report_file_that_fails_is_named_and_the_others_are_written(tmp_path):
    report = _block(tmp_path / "r", ["summary.md"])
    r, crash = _bugcheck_run(tmp_path, report)
    _assert_summary_and_record(r, crash)
    assert _errors(r) == [f"wddmsim: error: {report}/summary.md: cannot write: Is a directory"]
    assert {n: (report / n).is_file() for n in REPORT_FILES} == {n: n != "summary.md" for n in REPORT_FILES}


@not_as_root
def test_bugcheck_run_with_a_read_only_report_folder(tmp_path):
    report = tmp_path / "r"
    report.mkdir()
    report.chmod(0o500)
    try:
        r, crash = _bugcheck_run(tmp_path, report)
    finally:
        report.chmod(0o700)
    _assert_summary_and_record(r, crash)
    assert _errors(r) == [f"wddmsim: error: {report}: cannot write 5 of the report's 5 files "
                          f"(summary.json, summary.md, node_utilisation.png, context_latency.png, "
                          f"queue_depths.png): Permission denied"]


def test_a_crash_record_that_cannot_be_written_keeps_the_summary_and_status(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    crash = blocker / "crash.json"
    r = run("run", TDR_FAILURE, "--crash-record", crash)
    assert r.exit_code == 3
    assert r.stdout.startswith("tdr_failure  seed ") and "VIDEO_TDR_FAILURE" in r.stdout
    assert "Crash record:" not in r.stdout  # it is not there to read
    assert _errors(r) == [f"wddmsim: error: {crash}: cannot write the crash record: Not a directory"]


# ------------------------------------------------------------------------------------ other commands
@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    assert run("run", PRIORITIES, "--until", "1ms", "--events", path).exit_code == 0
    return path


def test_report_into_a_folder_whose_files_cannot_be_written(log, tmp_path):
    report = _block(tmp_path / "r")
    r = run("report", log, "-o", report)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"wddmsim: error: {report}: cannot write 5 of the report's 5 files (summary.json, "
                        f"summary.md, node_utilisation.png, context_latency.png, queue_depths.png): Is a directory\n")


@not_as_root
def test_report_into_a_read_only_folder(log, tmp_path):
    report = tmp_path / "r"
    report.mkdir()
    report.chmod(0o500)
    try:
        r = run("report", log, "-o", report)
    finally:
        report.chmod(0o700)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"wddmsim: error: {report}: cannot write 5 of the report's 5 files (summary.json, "
                        f"summary.md, node_utilisation.png, context_latency.png, queue_depths.png): "
                        f"Permission denied\n")


def test_report_under_a_regular_file(log, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run("report", log, "-o", blocker / "r")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"wddmsim: error: {blocker}/r: cannot create the report folder: Not a directory\n"


def test_trace_to_a_full_disk(log):
    r = run("trace", log, "-o", FULL)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", NO_SPACE + "\n")


def test_verify_junit_to_a_full_disk_prints_the_verdict_then_the_line():
    r = run("verify", "wddmsim.kmd:ReferenceDriver", "--only", "submission/single", "--json", "--junit", FULL)
    assert r.exit_code == 2  # every case passed: the failed output decides
    assert json.loads(r.stdout)["passed"] is True
    assert r.stderr == NO_SPACE + "\n"


def test_demo_event_log_on_a_full_disk_keeps_the_demo():
    r = run("demo", "--events", FULL)
    assert r.exit_code == 2
    assert r.stdout.startswith("A game, a compute job") and "The game's first packet" in r.stdout
    assert _errors(r) == [NO_SPACE] and r.stderr.splitlines()[-1] == NO_SPACE


def test_demo_event_log_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = run("demo", "--events", blocker / "log.jsonl")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"wddmsim: error: {blocker}/log.jsonl: cannot write: Not a directory\n"


@not_as_root
def test_demo_event_log_in_a_read_only_folder(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    monkeypatch.chdir(folder)
    try:
        r = run("demo", "--events", "log.jsonl")
    finally:
        folder.chmod(0o700)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "wddmsim: error: log.jsonl: cannot write: Permission denied\n"


def test_a_write_failure_a_command_does_not_catch_is_still_one_line():
    """``replay --trace`` leaves the error to the command group: one line, exit status 2."""
    capture = Path(__file__).parent / "data" / "presentmon" / "test_case_4_v2.csv"
    r = run("replay", capture, "--trace", FULL)
    assert (r.exit_code, r.stderr) == (2, NO_SPACE + "\n")


def test_a_policy_comparison_that_cannot_be_written_says_which_file(tmp_path):
    folder = _block(tmp_path / "r", ["policy_comparison.png"])
    rows = [{"scheduler.policy": p, "seed": 1, "error": None, "contexts.0.context": "app.exe/render",
             "contexts.0.completed": 10, "contexts.0.latency_min_ns": 1000, "contexts.0.latency_p50_ns": 2000,
             "contexts.0.latency_p99_ns": 3000, "contexts.0.latency_max_ns": 4000} for p in ("fifo", "edf")]
    with pytest.raises(WriteFailed) as info:
        write_comparison(rows, str(folder))
    assert str(info.value) == f"{folder}/policy_comparison.png: cannot write: Is a directory"


def test_the_report_failure_line_names_each_file_and_reason():
    from wddmsim.output.report import failure

    full, denied = OSError(28, "No space left on device"), PermissionError(13, "Permission denied")
    assert str(failure("r", [("summary.md", full)], 5)) == "r/summary.md: cannot write: No space left on device"
    assert str(failure("r", [("summary.json", denied), ("summary.md", denied)], 5)) == (
        "r: cannot write 2 of the report's 5 files (summary.json, summary.md): Permission denied")
    assert str(failure("r", [("summary.json", denied), ("frame_times.png", full)], 6)) == (
        "r: cannot write 2 of the report's 6 files: summary.json: Permission denied; "
        "frame_times.png: No space left on device")


CAPTURE = str(Path(__file__).parent / "data" / "presentmon" / "test_case_0_v1.csv")


def test_replay_writes_every_output_it_can_and_names_the_one_that_failed(tmp_path):
    # --presentmon to a full disk, and a report folder whose model.csv is a folder: the comparison
    # is printed, the other report files are written, one line per failure, and the run's own
    # status stands (5: --max-events ran out); both used to be OSError tracebacks that lost the rest.
    report = tmp_path / "r"
    (report / "model.csv").mkdir(parents=True)
    r = runner.invoke(main, ["replay", CAPTURE, "--presentmon", FULL, "--report", str(report), "--max-events", "5000"])
    assert r.exit_code == 5, r.stderr
    assert "swap chains meet" in r.stdout
    assert r.stderr.splitlines()[-2:] == [NO_SPACE, f"wddmsim: error: {report / 'model.csv'}: cannot write: Is a directory"]
    assert {"capture.csv", "comparison.json"} <= {p.name for p in report.iterdir()}
    assert any(p.suffix == ".png" for p in report.iterdir())


def test_replay_emit_that_cannot_be_written_is_one_line_before_the_run():
    r = runner.invoke(main, ["replay", CAPTURE, "--emit", FULL])
    assert (r.exit_code, r.stderr.strip()) == (2, NO_SPACE)


def test_sweep_rows_that_cannot_be_written_still_print_and_the_plot_is_drawn(tmp_path):
    # The CSV to a full disk: the rows still go to --json, the plot is still drawn, one line, exit 2
    # (an OSError traceback lost both).
    plot = tmp_path / "p.png"
    r = runner.invoke(main, ["sweep", PRIORITIES, "--set", "scheduler.quantum=1ms,2ms", "-o", FULL, "--json",
                             "--plot", "packets_completed", "--plot-file", str(plot)])
    assert r.exit_code == 2, r.stderr
    assert [row["scheduler.quantum"] for row in json.loads(r.stdout)] == ["1ms", "2ms"]
    assert plot.stat().st_size > 0
    assert r.stderr.splitlines()[-1] == NO_SPACE
    assert "rows in /dev/full" not in r.stderr


def test_sweep_plot_that_cannot_be_written_is_one_line_after_the_rows(tmp_path):
    rows = tmp_path / "rows.csv"
    r = runner.invoke(main, ["sweep", PRIORITIES, "--set", "scheduler.quantum=1ms,2ms", "-o", str(rows),
                             "--plot", "packets_completed", "--plot-file", FULL])
    assert r.exit_code == 2, r.stderr
    assert rows.read_text().count("\n") == 3
    assert r.stderr.splitlines()[-1] == NO_SPACE
