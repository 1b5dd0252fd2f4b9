"""What a newcomer trips over, each answered with one clear line and exit status 2:

* a run's length written as a bare number (``duration = 5``, ``--set duration=5``, ``--until 60``)
  is refused the same way in the file and on the command line, naming the file or option, the
  field and the spellings to write instead; every other duration still takes bare nanoseconds,
  and a scenario built in Python keeps int nanoseconds for its ``duration``;
* a mistyped key, at any depth of a scenario file, in a ``--set`` path or among a shipped
  scheduling policy's settings, gets the closest key of that table suggested;
* a mistyped class name in ``file.py:Name`` lists the classes of that module that look like what
  was asked for (drivers, user-mode drivers, scheduling policies), not every class it imports, and
  suggests the closest;
* the scenario schema, split into one module per kind of table, still gives every name from
  ``wddmsim.scenario.schema``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim import api
from wddmsim.cli import main
from wddmsim.dxgkrnl.loader import LoadError, load_class
from wddmsim.scenario import ScenarioError, parse_override, parse_scenario, scenario_from_dict
from wddmsim.sweep.core import plan
from wddmsim.util.units import BareNumber, parse_run_length

ROOT = Path(__file__).resolve().parents[1]
DEEP_QUEUE = str(ROOT / "examples" / "deep_queue.toml")
SRC = ROOT / "src" / "wddmsim" / "scenario"
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

APP = """
[[process]]
name = "app"

[[process.context]]
name = "c"
node = "3D"
workload = { kind = "script", packets = [{ at = 0, work = 1000 }] }
"""


def _run(*args: str) -> tuple[int, str]:
    r = runner.invoke(main, ["run", *args])
    assert "Traceback" not in r.output
    return r.exit_code, r.stderr


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# ------------------------------------------------------------------------------ a run's length


def test_a_bare_duration_in_the_file_is_refused_naming_the_file_and_field(tmp_path):
    path = _write(tmp_path, "duration = 5\n" + APP)
    assert _run(path) == (2, f"wddmsim: error: {path}: duration: a run's length needs a unit (ns, us, µs, ms or s), "
                             f"got the bare number 5: write \"5s\", or \"5ns\" if nanoseconds were meant\n")


def test_a_bare_float_duration_gets_the_same_reason_without_a_spelling(tmp_path):
    path = _write(tmp_path, "duration = 2.5\n" + APP)
    assert _run(path) == (2, f"wddmsim: error: {path}: duration: a run's length needs a unit (ns, us, µs, ms or s), "
                             f"got the bare number 2.5\n")


def test_a_bare_duration_in_a_set_and_in_until_is_refused_the_same_way():
    assert _run(DEEP_QUEUE, "--set", "duration=5") == (
        2, "wddmsim: error: --set duration=5: duration: a run's length needs a unit (ns, us, µs, ms or s), got the "
           "bare number 5: write \"5s\", or \"5ns\" if nanoseconds were meant\n")
    assert _run(DEEP_QUEUE, "--until", "60") == (
        2, "wddmsim: error: --until: a run's length needs a unit (ns, us, µs, ms or s), got the bare number 60: "
           "write 60s, or 60ns if nanoseconds were meant\n")
    assert _run(DEEP_QUEUE, "--until", "1.5") == (
        2, "wddmsim: error: --until: a run's length needs a unit (ns, us, µs, ms or s), got the bare number 1.5\n")


def test_a_duration_with_a_unit_and_other_bare_durations_still_run(tmp_path):
    path = _write(tmp_path, 'duration = "5ns"\n' + APP)
    r = runner.invoke(main, ["run", path, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["virtual_time_ns"] == 5
    # ``at = 0`` and ``work = 1000`` are bare nanoseconds, as documented for every other duration.
    sc = parse_scenario('duration = "2ms"\n' + APP)
    assert (sc.duration, sc.process[0].context[0].workload.packets[0].work) == (2_000_000, 1000)


def test_a_bare_duration_in_a_toml_string_and_in_a_sweep_setting_is_refused():
    with pytest.raises(ScenarioError) as e:
        parse_scenario("duration = 7\n" + APP)
    assert e.value.problems == ["<string>: duration: a run's length needs a unit (ns, us, µs, ms or s), got the bare "
                                "number 7: write \"7s\", or \"7ns\" if nanoseconds were meant"]
    _, work = plan(DEEP_QUEUE, ["duration=5,5ms"])
    assert work[0] == ("--set duration=5: duration: a run's length needs a unit (ns, us, µs, ms or s), got the bare "
                       "number 5: write \"5s\", or \"5ns\" if nanoseconds were meant")
    assert work[1].duration == 5_000_000


def test_python_code_keeps_int_nanoseconds_for_the_duration():
    data = {"duration": 5_000_000, "process": [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "compute_batch", "work": 1000}}]}]}
    assert scenario_from_dict(data).duration == 5_000_000
    assert api.load(DEEP_QUEUE, overrides={"duration": 3_000_000}).duration == 3_000_000
    assert parse_run_length(7) == 7 and parse_run_length("7ms") == 7_000_000
    with pytest.raises(ValueError) as e:
        parse_run_length(BareNumber(7))
    assert str(e.value) == ("a run's length needs a unit (ns, us, µs, ms or s), got the bare number 7: write \"7s\", "
                            "or \"7ns\" if nanoseconds were meant")


def test_a_number_set_on_another_path_reaches_the_scenario_as_a_plain_int():
    data = {"duration": "1ms", "process": [{"name": "a", "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "bursty", "work": "1us", "mean_gap": "1ms"}}]}]}
    sc = scenario_from_dict(data, "<t>", [parse_override("driver.ring_size=8192")])
    assert sc.driver.settings == {"ring_size": 8192} and type(sc.driver.settings["ring_size"]) is int


# ------------------------------------------------------------------------------- mistyped keys


def test_an_unknown_key_at_any_depth_names_the_closest_key(tmp_path):
    path = _write(tmp_path, """
        seeed = 1
        [adapter.bands.grace]
        focs = "1ms"
        [[process]]
        name = "app"
        prority = "high"
        [[process.context]]
        name = "c"
        node = "3D"
        workload = { kind = "frame_loop", fps = 60, work = "1ms", presnt_mode = "flip" }
        [[compositor]]
        [[compositor.update]]
        at = "1ms"
        wrk = "1ms"
        [[fault]]
        kind = "hang"
        node = "3D"
        at = "1ms"
        colour = "red"
    """)
    code, err = _run(path)
    assert code == 2
    assert err.splitlines() == [
        f"wddmsim: error: {path}: adapter.bands.grace.focs: unknown field; did you mean 'focus'?",
        f"wddmsim: error: {path}: fault[0].colour: unknown field",
        f"wddmsim: error: {path}: process[0].context[0].workload.presnt_mode: unknown field; did you mean "
        f"'present_mode'?",
        f"wddmsim: error: {path}: process[0].prority: unknown field; did you mean 'priority'?",
        f"wddmsim: error: {path}: compositor[0].update[0].wrk: unknown field; did you mean 'work'?",
        f"wddmsim: error: {path}: seeed: unknown field; did you mean 'seed'?",
    ]


def test_a_key_that_moved_to_the_driver_is_not_suggested():
    assert _run(DEEP_QUEUE, "--set", "adapter.ring_sise=4096") == (
        2, "wddmsim: error: --set adapter.ring_sise=4096: adapter.ring_sise: unknown field\n")


def test_a_set_path_and_a_policy_setting_name_the_closest_key():
    assert _run(DEEP_QUEUE, "--set", "adapter.nodes.0.preemtion=dma_buffer") == (
        2, "wddmsim: error: --set adapter.nodes.0.preemtion=dma_buffer: adapter.nodes[0].preemtion: unknown field; "
           "did you mean 'preemption'?\n")
    assert _run(DEEP_QUEUE, "--set", "scheduler.starvaton=1ms") == (
        2, "wddmsim: error: --set scheduler.starvaton=1ms: scheduler.starvaton: unknown field; did you mean "
           "'starvation'?\n")
    # strict_priority has no starvation boost: nothing close to suggest
    assert _run(DEEP_QUEUE, "--set", "scheduler.policy=strict_priority", "--set", "scheduler.starvaton=1ms") == (
        2, "wddmsim: error: --set scheduler.starvaton=1ms: scheduler.starvaton: unknown field\n")
    assert _run(DEEP_QUEUE, "--set", "scheduler.policy=partition", "--set", "scheduler.windw=1ms") == (
        2, "wddmsim: error: --set scheduler.windw=1ms: scheduler.windw: unknown field; did you mean 'window'? "
           "(policy partition: its settings are window)\n")
    with pytest.raises(ScenarioError) as e:
        api.load(DEEP_QUEUE, overrides={"scheduler.polcy": "fifo"})
    assert e.value.unknown_paths == ["overrides scheduler.polcy=fifo: scheduler.polcy: unknown field; did you mean "
                                     "'policy'?"]


# ------------------------------------------------------------------------- mistyped class names

DRIVERS = '''
from pathlib import Path

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver


class Mine(ReferenceDriver):
    pass


class Duck:
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        return 0


class Helper:
    pass
'''


def test_a_mistyped_driver_lists_the_drivers_and_suggests_the_closest(tmp_path):
    path = tmp_path / "drivers.py"
    path.write_text(DRIVERS)
    assert _run(DEEP_QUEUE, "--driver", f"{path}:Mne") == (
        2, f"wddmsim: error: driver '{path}:Mne': {path} has no Mne (did you mean 'Mine'?); the drivers it defines: "
           f"Duck, Mine, ReferenceDriver\n")
    assert _run(DEEP_QUEUE, "--driver", f"{path}:Nothing") == (
        2, f"wddmsim: error: driver '{path}:Nothing': {path} has no Nothing; the drivers it defines: Duck, Mine, "
           f"ReferenceDriver\n")


def test_a_module_without_drivers_says_so():
    assert _run(DEEP_QUEUE, "--driver", "wddmsim.ddi.ntstatus:Driver") == (
        2, "wddmsim: error: driver 'wddmsim.ddi.ntstatus:Driver': wddmsim.ddi.ntstatus has no Driver, and no class in "
           "it looks like a driver (a class with DDI entry points such as DxgkDdiSubmitCommand)\n")


def test_a_policy_or_user_mode_driver_lists_its_own_kind(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent('''
        from wddmsim.policies import Policy
        from wddmsim.umd.reference import ReferenceUmd


        class Edf(Policy):
            def pick(self, node, now):
                return None


        class Umd(ReferenceUmd):
            pass


        class Table:
            pass
    '''))
    with pytest.raises(LoadError) as e:
        load_class(f"{path}:Ed", "scheduling policy")
    assert str(e.value) == (f"scheduling policy '{path}:Ed': {path} has no Ed (did you mean 'Edf'?); the scheduling "
                            f"policies it defines: Edf")
    with pytest.raises(LoadError) as e:
        load_class(f"{path}:Umb", "user-mode driver")
    assert str(e.value) == (f"user-mode driver '{path}:Umb': {path} has no Umb (did you mean 'Umd'?); the user-mode "
                            f"drivers it defines: ReferenceUmd, Umd")
    with pytest.raises(LoadError) as e:
        load_class(f"{path}:Tabel", "class")
    assert str(e.value) == (f"class '{path}:Tabel': {path} has no Tabel (did you mean 'Table'?); the classes it "
                            f"defines: Edf, Policy, ReferenceUmd, Table, Umd")


# ----------------------------------------------------------------------------- the schema split


def test_the_schema_gives_every_table_from_its_own_module():
    from wddmsim.scenario import adapter, calls, consistency, display, faults, processes, schema, scheduler

    moved = {
        adapter: ["AdapterTable", "Node", "Segment", "CpuCostTable", "Bands", "BandTimes", "ENGINES",
                  "DDI_VERSION_NAMES"],
        scheduler: ["Scheduler", "UNKNOWN_SETTING"],
        processes: ["ProcessTable", "Context", "BudgetChange", "FenceSpec", "PROCESS_PRIORITIES"],
        calls: ["Call", "CALL_APIS", "MOVABLE_WORKLOADS", "MAX_CALL_OBJECTS"],
        faults: ["Fault", "Tdr", "FAULTABLE_DDIS"],
        display: ["Compositor", "CompositorUpdate"],
        consistency: ["cross_field_problems", "scenario_clamps"],
    }
    for module, names in moved.items():
        for name in names:
            assert getattr(schema, name) is getattr(module, name), name
    for name in schema.__all__:
        assert hasattr(schema, name), name


def test_each_scenario_module_is_short_and_says_its_job():
    import ast

    for path in sorted(SRC.glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 700, path.name
        assert ast.get_docstring(ast.parse(text)), path.name
