"""``--until`` (and the API's ``until``) past the scenario's duration makes a run that long, so the
scenario is checked with that length: the bounds that depend on the run's length hold for the run
made, where they used to be judged against the file's shorter duration (an interrupt storm of one
every microsecond for an hour, refused in the file, ran from ``--until 3600s``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main

STORM = """
name = "storm"
duration = "10ms"
[[adapter.nodes]]
name = "3D"
engine = "3d"
[[process]]
name = "app"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "script", packets = [ { at = "1ms", work = "1ms" } ] }
[[fault]]
kind = "interrupt_storm"
at = "1ms"
duration = "3600s"
interval = "1us"
"""
REFUSED = ("fault[0].interval: the storm raises 3,599,999,000 interrupts within the run (from 1ms to 3600s, one "
           "every 1us); one storm raises at most 1,000,000")


@pytest.fixture
def storm(tmp_path):
    path = tmp_path / "storm.toml"
    path.write_text(STORM)
    return path


def test_run_until_past_the_duration_is_checked_with_that_length(storm):
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(storm)]).exit_code == 0  # 10 ms: 9,000 interrupts, allowed
    r = runner.invoke(main, ["run", str(storm), "--until", "3600s"])
    assert r.exit_code == 2
    assert r.output.strip().startswith(f"wddmsim: error: {storm} with --until 3600s: {REFUSED}")


def test_run_until_within_the_duration_changes_nothing(storm):
    r = CliRunner().invoke(main, ["run", str(storm), "--until", "5ms", "--json"])
    assert r.exit_code == 0 and '"virtual_time_ns": 5000000' in r.stdout


def test_the_api_until_is_checked_the_same_way(storm):
    with pytest.raises(api.ScenarioError) as e:
        api.run(str(storm), until="3600s")
    assert REFUSED in str(e.value)
    assert api.run(str(storm), until="20ms").summary.virtual_time_ns == 20_000_000
