"""`wddmsim verify`: the suite picks its cases from what the driver declares, the reference driver
passes at each interface version, and the report's three forms (table, JSON, JUnit) say the same."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.kmd import ReferenceDriver
from wddmsim.verify.runner import probe, select, verify
from wddmsim.verify.suite import AREAS, CASES

ROOT = Path(__file__).resolve().parents[1]

#: Cases a driver without the capability sees as not applicable, per DDI version of the reference
#: driver (its defaults otherwise).
SKIPPED = {
    "wddm2_0": {"tdr/adapter_reset", "faults/page_fault_timeout", "interrupts/overlay_vsync", "hardware_queues/basic",
                "hardware_queues/gpu_wait_chain", "hardware_queues/suspend", "hardware_queues/hang",
                "hardware_queues/page_fault", "flips/hw_flip_queue"},
    "wddm2_7": {"tdr/adapter_reset", "faults/page_fault_timeout", "interrupts/overlay_vsync", "flips/hw_flip_queue"},
}


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("version", sorted(SKIPPED))
def test_the_reference_driver_passes_every_case_that_applies(version):
    report = verify(ReferenceDriver, settings={"ddi_version": version})
    assert report.passed
    assert {r.case.id for r in report.results if r.verdict == "n/a"} == SKIPPED[version]
    assert report.count("fail") == 0
    assert report.count("pass") == len(CASES) - len(SKIPPED[version])
    # Every passing case exercised the interrupt rules, and the software-scheduled ones the
    # submission and fence rules.
    for r in report.results:
        if r.verdict == "pass":
            assert {38, 39, 41}.issubset(r.rules), r.case.id
            if r.case.area != "hardware_queues":
                assert {32, 33}.issubset(r.rules), r.case.id


def test_the_probe_reads_what_the_driver_declares():
    d = probe(ReferenceDriver, {"ddi_version": "win7", "preemption_aware": False})
    assert (d.version, d.preemption_aware, d.virtual_addressing, d.hardware_scheduling) == ("win7", False, False, False)
    d = probe(ReferenceDriver, {"ddi_version": "wddm2_7"})
    assert (d.version, d.nodes, d.preemption_aware, d.virtual_addressing, d.hardware_scheduling) == \
        ("wddm2_7", 3, True, True, True)


def test_a_driver_without_preemption_sees_the_preemption_cases_as_not_applicable():
    report = verify(ReferenceDriver, settings={"preemption_aware": False}, only=["preemption"])
    assert [(r.case.name, r.verdict, r.reason) for r in report.results] == [
        (g, "n/a", "the driver is not PreemptionAware") for g in ("dma_buffer", "primitive", "interval", "none")]
    assert not report.passed  # nothing ran: no verdict of "passes"


def test_select_takes_areas_and_case_ids_and_refuses_the_rest():
    assert [c.id for c in select(["flips/no_wait", "null_rendering"])] == ["flips/no_wait", "null_rendering/all"]
    assert len(select(None)) == len(CASES)
    with pytest.raises(ValueError, match="no area or case called nosuch"):
        select(["nosuch"])


def test_cli_table_json_and_junit_agree(tmp_path):
    junit = tmp_path / "v.xml"
    r = _invoke("verify", "wddmsim.kmd:ReferenceDriver", "--only", "submission", "--junit", str(junit))
    assert r.exit_code == 0, r.output
    assert re.search(r"PASS: 3 passed, 0 failed, 0 not applicable; \d+ rules exercised", r.output)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "0", "0")
    assert [tc.get("name") for tc in suite.iter("testcase")] == ["single", "back_to_back", "memory_ops"]
    r = _invoke("verify", "wddmsim.kmd:ReferenceDriver", "--only", "submission", "--json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert (out["passed"], out["counts"]) == (True, {"pass": 3, "fail": 0, "n/a": 0})
    assert [c["scenario"] for c in out["cases"]] == ["single", "back_to_back", "memory_ops"]
    # The exercised rules split by what their check judges: rule 36 (a completion for a buffer the
    # GPU never ran) is ground truth, rule 38 (NotifyInterrupt at device IRQL) judges the driver,
    # rule 4 (a zero private-data start offset the OS sets) only re-checks what the OS built.
    split = out["rules_exercised_by_status"]
    assert sum(split.values()) == len(out["rules_exercised"])
    assert {4, 36, 38} <= set(out["rules_exercised"]) and all(split[k] > 0 for k in split)
    m = re.search(r"(\d+) rules exercised \((\d+) judge the driver, (\d+) the GPU's ground truth, "
                  r"(\d+) re-check what the OS built\)", _invoke("verify", "wddmsim.kmd:ReferenceDriver",
                                                           "--only", "submission").output)
    assert [int(g) for g in m.groups()] == [len(out["rules_exercised"]), split["runtime"],
                                            split["ground_truth"], split["construction"]]


def test_cli_bad_input_exits_2_with_the_reason(tmp_path):
    r = _invoke("verify", "wddmsim.kmd:ReferenceDriver", "--only", "nosuch")
    assert r.exit_code == 2 and "no area or case called nosuch" in r.output
    r = _invoke("verify", "wddmsim.kmd:NoSuchDriver")
    assert r.exit_code == 2 and "NoSuchDriver" in r.output
    r = _invoke("verify", "wddmsim.kmd:ReferenceDriver", "--set", "ring_size=12")
    assert r.exit_code == 2 and "ring_size" in r.output
    # A WDDM 2.0 driver without DxgkDdiSubmitCommandVirtual: named before anything runs.
    drv = tmp_path / "lacking.py"
    drv.write_text("from wddmsim.kmd import ReferenceDriver\n\n\nclass Lacking(ReferenceDriver):\n"
                   "    DxgkDdiSubmitCommandVirtual = None\n")
    r = _invoke("verify", f"{drv}:Lacking")
    assert r.exit_code == 2 and "DxgkDdiSubmitCommandVirtual" in r.output


def test_a_failure_names_rule_bugcheck_crossing_and_record(tmp_path):
    drv = tmp_path / "nodpc.py"
    drv.write_text("from wddmsim.kmd import ReferenceDriver\n\n\nclass NoNotifyDpc(ReferenceDriver):\n"
                   "    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):\n        pass\n")
    r = _invoke("verify", f"{drv}:NoNotifyDpc", "--only", "submission/single", "--json")
    assert r.exit_code == 1
    case = json.loads(r.output)["cases"][0]
    f = case["failure"]
    assert (case["verdict"], f["rule"], f["ground_truth"]) == ("fail", 39, False)
    assert f["bugcheck"]["explained"] and f["event"]["event"] in ("DdiCall", "Callback")


def test_the_doc_lists_every_case():
    doc = (ROOT / "docs" / "verify.md").read_text()
    listed = re.findall(r"^\| `([a-z_0-9]+/[a-z_0-9]+)` \|", doc, re.M)
    assert listed == [c.id for c in CASES]
    assert set(AREAS) == {c.area for c in CASES}


def test_the_mmio_no_wait_case_really_replaces_flips():
    """flips/mmio_no_wait presents 8 frames at 100 fps on a 60 Hz display: with the reference driver
    3 flips are replaced before their vsync (FlipReplaced) and 5 displayed, which the case's own
    check accounts for."""
    from wddmsim.trace.sinks import ListSink
    from wddmsim.verify.runner import Outcome, _build

    (case,) = select(["flips/mmio_no_wait"])
    d = probe(ReferenceDriver)
    sink = ListSink()
    system = _build(case.scenario(d), ReferenceDriver, None, sink)
    result = system.run()
    out = Outcome(system, result, sink.events)
    replaced = sink.of("FlipReplaced")
    accepted = [e for e in sink.of("MmioFlip") if e["status"] == 0]
    assert (len(accepted), len(replaced), out.summary["displays"][0]["displayed"]) == (8, 3, 5)
    assert case.expect(out) == []


@pytest.mark.rule(91)
def test_the_hw_flip_queue_case_queues_cancels_and_reads_the_log():
    """flips/hw_flip_queue with the reference driver at WDDM 3.0 with MaxHwQueuedFlips 4: 30 flips
    queued ahead (10 interval-1, then 20 interval-0), 15 shown and 15 cancelled by a newer flip, every
    crossing judged by rule 91; the probe sees the queue only under hardware scheduling."""
    from wddmsim.trace.sinks import ListSink
    from wddmsim.verify.runner import Outcome, _build

    settings = {"ddi_version": "wddm3_0", "overlay_planes": 2, "max_hw_queued_flips": 4}
    (case,) = select(["flips/hw_flip_queue"])
    d = probe(ReferenceDriver, settings)
    assert d.hw_flip_queue and d.hardware_scheduling
    assert d.lacks(case.needs) is None
    assert probe(ReferenceDriver, {"ddi_version": "wddm2_7"}).lacks(case.needs) == (
        "the driver does not declare the hardware flip queue (DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1, WDDM 3.0)")
    sink = ListSink()
    system = _build(case.scenario(d), ReferenceDriver, settings, sink)
    result = system.run()
    out = Outcome(system, result, sink.events)
    shown = out.summary["displays"][0]
    assert (len(sink.of("HwFlip")), len(sink.of("HwFlipCancel")), shown["displayed"], shown["dropped"]) == (30, 15, 15, 15)
    assert 91 in system.adapter.rules_exercised()
    assert case.expect(out) == []
