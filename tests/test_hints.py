"""The commands the command line tells a user to run next are the ones a user of a clone types
(``uv run wddmsim ...``), and a user who follows them writes under ``out/``: the demo's closing
line, the crash record's hint after a bug check and the header of a scenario ``replay --emit``
writes. Each is asserted as the exact line printed or written."""

from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main

ROOT = Path(__file__).parents[1]


def test_the_demo_ends_with_the_command_to_run_next():
    r = CliRunner().invoke(main, ["demo"])
    assert r.exit_code == 0, r.output
    assert "Next: uv run wddmsim run examples/<name>.toml --events out/log.jsonl  (see examples/README.md)" \
        in r.output.splitlines()


def test_a_bug_check_names_the_command_that_reads_its_crash_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    r = CliRunner().invoke(main, ["run", str(ROOT / "examples" / "tdr_failure.toml"), "--crash-record", "out/crash.json"])
    assert r.exit_code == 3, r.output
    assert "  Crash record: out/crash.json (read it with: uv run wddmsim decode @out/crash.json)" in r.output.splitlines()
    assert (tmp_path / "out" / "crash.json").is_file()


def test_an_emitted_scenario_says_how_to_replay_it(tmp_path):
    capture = ROOT / "tests" / "data" / "presentmon" / "test_case_4.csv"
    emitted = tmp_path / "tc4.toml"
    r = CliRunner().invoke(main, ["replay", str(capture), "--emit", str(emitted)])
    assert r.exit_code == 0, r.output
    assert emitted.read_text().splitlines()[:2] == [
        f"# wddmsim replay {capture}: the scenario rebuilt from the capture.",
        f"# Edit it and run it again with: uv run wddmsim replay {capture} --scenario {emitted}"]
