"""A user's driver in: named on the command line or in the scenario, constructed with one
DeviceInfo, its settings validated, its declared version, entry points and capabilities checked
before anything runs (what Windows refuses is one clear line per reason and exit status 2), and
its faults reported with its own traceback."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.ddi.interface import DeviceInfo
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import ConfigError, System

ROOT = Path(__file__).parents[1]
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()

APP = [{"name": "app", "context": [{"name": "c", "node": "3D", "workload": {
    "kind": "script", "packets": [{"at": 0, "work": "1ms", "repeat": 3}]}}]}]


def build(driver=None, *, settings=None, adapter=None, driver_table=None):
    data = {"name": "load", "duration": "50ms", "adapter": adapter or {}, "process": APP}
    if driver_table is not None:
        data["driver"] = driver_table
    return System(scenario_from_dict(data, "<t>"), driver=driver, settings=settings)


def refused(**kw) -> list[str]:
    with pytest.raises(AdapterStartError) as err:
        build(**kw)
    return err.value.problems


# -- the constructor and the settings ------------------------------------------------------------------
def test_the_driver_is_constructed_with_one_device_info():
    seen = []

    class Spy(ReferenceDriver):
        def __init__(self, info):
            seen.append(info)
            super().__init__(info)

    system = build(Spy, settings={"ring_size": "16KiB"})
    (info,) = seen
    assert isinstance(info, DeviceInfo)
    assert info.gpu is system.gpu.mmio and info.memory is system.gpu.memory
    assert info.settings["ring_size"] == 16384 and info.settings["ddi_version"] == "wddm2_0"
    assert system.run().summary["packets_completed"] == 3


def test_settings_are_validated_by_the_drivers_own_model_and_named_by_their_key():
    with pytest.raises(ConfigError) as err:
        build(driver_table={"ring_size": 5000, "ddi_version": "wddm9", "nope": 1})
    assert sorted(err.value.problems) == [
        ("driver.ddi_version", "unknown DDI version 'wddm9'; expected one of: vista, vista_sp1, win7, win8, wddm1_3, "
                               "wddm2_0, wddm2_1, wddm2_2, wddm2_3, wddm2_4, wddm2_5, wddm2_6, wddm2_7, wddm2_8, "
                               "wddm2_9, wddm3_0, wddm3_1, wddm3_2, latest"),
        ("driver.nope", "Extra inputs are not permitted"),
        ("driver.ring_size", "must be a power of two and at least 4096 bytes, got 5000"),
    ]


def test_a_driver_without_a_settings_model_gets_the_table_as_it_is():
    got = []

    class Plain(ReferenceDriver):
        Settings = None

        def __init__(self, info):
            got.append(dict(info.settings))
            super().__init__(DeviceInfo(info.gpu, info.memory, {}))

    build(Plain, driver_table={"anything": [1, 2]})
    assert got == [{"anything": [1, 2]}]


def test_a_constructor_that_raises_does_not_load_and_says_why():
    class Broken(ReferenceDriver):
        def __init__(self, info):
            raise RuntimeError("no such device")

    (problem,) = refused(driver=Broken)
    assert problem.startswith("the driver's constructor raised RuntimeError: no such device")
    assert 'raise RuntimeError("no such device")' in problem


# -- what Windows refuses at load and at adapter start ------------------------------------------------
def test_a_wddm2_driver_without_submit_command_virtual_does_not_load():
    class NoVirtual(ReferenceDriver):
        DxgkDdiSubmitCommandVirtual = None

    assert refused(driver=NoVirtual) == [
        "DxgkDdiSubmitCommandVirtual is missing: a DDI wddm2_0 or later driver implements it"]


def test_a_preemption_aware_driver_without_preempt_command_is_refused():
    class NoPreempt(ReferenceDriver):
        DxgkDdiPreemptCommand = None

    assert refused(driver=NoPreempt) == ["DxgkDdiPreemptCommand is missing: the driver reports PreemptionAware"]
    # The same driver, not preemption aware, needs no such entry point.
    assert build(NoPreempt, settings={"preemption_aware": False}).run().bugcheck is None


@pytest.mark.rule(118)
def test_per_engine_tdr_needs_its_entry_points():
    class NoReset(ReferenceDriver):
        DxgkDdiResetEngine = None
        DxgkDdiQueryDependentEngineGroup = None
        DxgkDdiQueryEngineStatus = None

    assert refused(driver=NoReset) == [
        "DxgkDdiQueryDependentEngineGroup is missing: the driver reports SupportPerEngineTDR (rule 118)",
        "DxgkDdiQueryEngineStatus is missing: the driver reports SupportPerEngineTDR (rule 118)",
        "DxgkDdiResetEngine is missing: the driver reports SupportPerEngineTDR (rule 118)"]
    # Without SupportPerEngineTDR none of the three is needed.
    assert build(NoReset, settings={"per_engine_reset": False}).run().bugcheck is None


class TwoThreeDNodes(ReferenceDriver):
    def DxgkDdiGetNodeMetadata(self, hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata):
        status = super().DxgkDdiGetNodeMetadata(hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata)
        if pGetNodeMetadata.EngineType == 6:  # its copy engine
            pGetNodeMetadata.EngineType = 1
        return status


class NamesItsCopyEngine(ReferenceDriver):
    def DxgkDdiGetNodeMetadata(self, hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata):
        status = super().DxgkDdiGetNodeMetadata(hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata)
        if pGetNodeMetadata.EngineType == 6:
            pGetNodeMetadata.FriendlyName[0] = ord("B")
        return status


class MetadataOffByOne(ReferenceDriver):
    def DxgkDdiGetNodeMetadata(self, hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata):
        if NodeOrdinalAndAdapterIndex & 0xFFFF >= self.hw.engine_count - 1:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        return super().DxgkDdiGetNodeMetadata(hAdapter, NodeOrdinalAndAdapterIndex, pGetNodeMetadata)


def test_node_metadata_windows_refuses_rules_80_and_81():
    assert refused(driver=TwoThreeDNodes) == [
        "DXGK_NODEMETADATA.EngineType is DXGK_ENGINE_TYPE_3D on 2 nodes (0, 2): a driver exposes exactly one 3-D "
        "engine per adapter (rule 80)"]
    assert refused(driver=NamesItsCopyEngine) == [
        "DXGK_NODEMETADATA.FriendlyName of node 2 is 'B' but EngineType is COPY: the name is given only for "
        "DXGK_ENGINE_TYPE_OTHER, else it is empty (rule 80)"]
    assert refused(driver=MetadataOffByOne) == [
        "DxgkDdiGetNodeMetadata returned STATUS_INVALID_PARAMETER for node 2, one of the 3 nodes the driver reports: "
        "it succeeds for every NodeOrdinal below the node count (rule 81)"]


@pytest.mark.rule(63)
@pytest.mark.parametrize("settings, problem", [
    ({"multi_engine_aware": False, "preemption_aware": True, "per_engine_reset": False},
     "DXGK_DRIVERCAPS.SchedulingCaps: PreemptionAware = 1 needs MultiEngineAware = 1 (rule 63)"),
    ({"multi_engine_aware": False, "cancel_aware": True, "per_engine_reset": False},
     "DXGK_DRIVERCAPS.SchedulingCaps: CancelCommandAware = 1 needs MultiEngineAware = 1 (rule 63)"),
])
def test_capability_combinations_windows_refuses_at_adapter_start(settings, problem):
    assert refused(settings={"ddi_version": "win8", **settings}) == [problem]


class NoMmioFlips(ReferenceDriver):
    def _caps(self):
        c = super()._caps()
        c.FlipCaps.FlipOnVSyncMmIo = 0
        return c


@pytest.mark.rule(64)
def test_a_preemption_aware_driver_without_mmio_flips_is_refused_at_adapter_start():
    assert refused(driver=NoMmioFlips, settings={"ddi_version": "win8"}) == [
        "DXGK_DRIVERCAPS.FlipCaps: PreemptionAware = 1 needs FlipOnVSyncMmIo = 1: the Windows 8 scheduler preempts "
        "while flips are pending, so a preemption-aware driver flips through MMIO at the next vsync (rule 64)"]
    # The Windows 7 model (PreemptionAware = 0) needs no MMIO flips; the reference driver declares
    # them exactly when it is preemption-aware.
    assert build(NoMmioFlips, settings={"ddi_version": "win8", "preemption_aware": False}).run().summary[
        "packets_completed"] == 3
    caps = build(settings={"ddi_version": "win8"}).adapter.caps
    assert (caps.PreemptionAware, caps.FlipCaps["FlipOnVSyncMmIo"]) == (True, 1)


def test_a_wddm_version_that_is_not_the_interface_versions_is_refused():
    class Boasts(ReferenceDriver):
        def _caps(self):
            c = super()._caps()
            c.WDDMVersion = 0x2700  # claims WDDM 2.7, built for 2.0
            return c

    assert refused(driver=Boasts) == [
        "DXGK_DRIVERCAPS.WDDMVersion = 0x2700 (DXGKDDI_WDDMv2_7); a driver built for DXGKDDI_INTERFACE_VERSION "
        "wddm2_0 reports 0x2000 (DXGKDDI_WDDMv2)"]


def test_a_driver_that_declares_no_interface_version_does_not_load():
    class Anonymous(ReferenceDriver):
        def __init__(self, info):
            super().__init__(info)
            del self.DXGKDDI_INTERFACE_VERSION

    (problem,) = refused(driver=Anonymous)
    assert problem.startswith("the driver declares no DXGKDDI_INTERFACE_VERSION")


def test_the_os_asks_only_for_what_the_driver_supports():
    (va,) = refused(settings={"ddi_version": "win8"}, adapter={"gpu_va": True})
    assert "does not report DXGK_VIDMMCAPS.VirtualAddressingSupported" in va
    (hw,) = refused(adapter={"scheduling": "hardware"})
    assert hw == ("the OS was asked for hardware scheduling (adapter.scheduling = \"hardware\"), but the driver is "
                  "wddm2_0; hardware scheduling needs wddm2_5 or later")
    (nodes,) = refused(adapter={"scheduling": "hardware"}, settings={"ddi_version": "wddm2_7",
                                                                     "hardware_scheduling": False})
    assert "does not report DXGK_NODEMETADATA_FLAGS.ContextSchedulingSupported for node(s) 0, 1, 2" in nodes


def test_the_caps_the_os_reads_come_from_the_drivers_dxgk_drivercaps_in_memory():
    system = build(settings={"ddi_version": "wddm2_7", "no64bit_atomics": True})
    caps = system.adapter.caps
    assert type(caps.raw).__name__ == "DXGK_DRIVERCAPS" and caps.raw.ddi_version.name == "wddm2_7"
    assert (caps.MultiEngineAware, caps.PreemptionAware, caps.No64BitAtomics) == (True, True, True)
    assert (caps.NbAsymetricProcessingNodes, caps.PagingNode, caps.WDDMVersion) == (3, 2, 0x2700)
    assert (caps.GraphicsPreemptionGranularity, caps.ComputePreemptionGranularity) == (100, 100)
    assert len(system.adapter.segments) == 2 and system.adapter.umd_private_data == b"RWMD"


# -- the command line ---------------------------------------------------------------------------------
DRIVER_FILE = '''
from wddmsim.kmd import ReferenceDriver


class Mine(ReferenceDriver):
    """A user's driver: the reference one, built for Windows 7."""

    def __init__(self, info):
        super().__init__(type(info)(info.gpu, info.memory, {**info.settings, "ddi_version": "win7"}))


class Crashes(ReferenceDriver):
    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        return pSubmitCommand.SubmissionFenceID


class NoVirtual(ReferenceDriver):
    DxgkDdiSubmitCommandVirtual = None
'''

SCENARIO = '''
name = "mine"
duration = "20ms"

[driver]
class = "drivers/mydriver.py:Mine"

[[process]]
name = "app"
[[process.context]]
name = "c"
node = "3D"
workload = { kind = "script", packets = [{ at = 0, work = "1ms", repeat = 2 }] }
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "drivers").mkdir()
    (tmp_path / "drivers" / "mydriver.py").write_text(DRIVER_FILE)
    (tmp_path / "mine.toml").write_text(SCENARIO)
    return tmp_path


def test_a_scenario_names_its_driver_relative_to_its_own_folder(project, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(main, ["run", str(project / "mine.toml"), "--json", "--events", str(project / "e.jsonl")])
    assert r.exit_code == 0, r.stderr
    start = json.loads((project / "e.jsonl").read_text().splitlines()[1])
    assert start["event"] == "AdapterStart" and start["ddi_version"] == "win7"
    assert json.loads(r.stdout)["packets_completed"] == 2


def test_run_driver_overrides_the_scenarios(project):
    r = runner.invoke(main, ["run", str(project / "mine.toml"), "--driver", f"{project}/drivers/mydriver.py:NoVirtual"])
    assert r.exit_code == 2
    assert r.stderr.strip() == ("wddmsim: error: mine: the adapter does not start: DxgkDdiSubmitCommandVirtual is "
                                "missing: a DDI wddm2_0 or later driver implements it")


def test_a_driver_fault_exits_3_with_the_drivers_traceback(project):
    crash = project / "crash.json"
    r = runner.invoke(main, ["run", str(project / "mine.toml"), "--driver",
                             f"{project}/drivers/mydriver.py:Crashes", "--crash-record", str(crash)])
    assert r.exit_code == 3
    assert "KMODE_EXCEPTION_NOT_HANDLED" in r.stdout
    assert "driver fault: DxgkDdiSubmitCommand raised AttributeError" in r.stdout
    assert "The driver's traceback (in DxgkDdiSubmitCommand)" in r.stdout and "SubmissionFenceID" in r.stdout
    record = json.loads(crash.read_text())
    assert record["ddi"] == "DxgkDdiSubmitCommand" and "mydriver.py" in record["traceback"]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("spec, message", [
    ("no.such.module:Driver", "driver 'no.such.module:Driver': no module named 'no.such.module'"),
    ("wddmsim.kmd:Nope", "driver 'wddmsim.kmd:Nope': wddmsim.kmd has no Nope; the drivers it defines: ReferenceDriver"),
    ("justaname", "driver 'justaname': expected 'package.module:Class' or 'path/to/file.py:Class'"),
])
def test_a_driver_that_does_not_load_is_exit_2_with_the_reason(spec, message):
    r = runner.invoke(main, ["run", str(ROOT / "examples" / "deep_queue.toml"), "--driver", spec])
    assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_old_adapter_keys_say_where_they_went(tmp_path):
    f = tmp_path / "old.toml"
    f.write_text(textwrap.dedent('''
        [adapter]
        ddi_version = "win7"
        [[adapter.nodes]]
        name = "3D"
        engine = "3d"
        ring_size = 4096
        [[process]]
        name = "a"
        [[process.context]]
        name = "c"
        node = "3D"
        workload = { kind = "script", packets = [{ at = 0, work = 1 }] }
    '''))
    r = runner.invoke(main, ["run", str(f)])
    assert r.exit_code == 2
    assert f"{f}: adapter.nodes[0].ring_size: the driver's setting now, not the adapter's: write it in the " \
           "[driver] table as engines.<node name>.ring_size" in r.stderr
    assert f"{f}: adapter.ddi_version: the driver's setting now" in r.stderr
