"""Rule 50, MpoPlaneInRange: a multiplane-overlay vsync report (DXGK_INTERRUPT_CRTC_VSYNC_WITH_
MULTIPLANE_OVERLAY2/3) names only planes below the driver's MaxOverlayPlanes (DXGK_DRIVERCAPS); the
OS reads each entry's LayerIndex (DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2/3 pages) and Windows stops with
bug check 0x119/0xE (REPORT_VSYNC_PLANE_OUT_OF_RANGE) otherwise. The verify case
``interrupts/overlay_vsync`` runs flips for a driver that declares overlays, n/a for one that does not."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.kmd import ReferenceDriver
from wddmsim.dxgkrnl.loader import load_class
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.verify import verify
from wddmsim.verify.suite import CASES

from zoo.interrupts import ReportsPlaneBeyondMax, _PlaneVsyncs

MinimalDriver = load_class(f"{Path(__file__).parents[1] / 'examples' / 'drivers' / 'minimal.py'}:MinimalDriver", "driver")
CASE = next(c for c in CASES if c.id == "interrupts/overlay_vsync")
WDDM2_1 = {"ddi_version": "wddm2_1"}


class TwoPlanes(_PlaneVsyncs):
    """Declares two planes and reports both, 0 and 1, after every CRTC_VSYNC."""


def _run(driver, *, verifier="strict", settings=WDDM2_1):
    trace = ListSink()
    system = System(scenario_from_dict(CASE.scenario(None), "<overlay_vsync>"), trace=trace, driver=driver,
                    settings=settings, verifier=verifier)
    return system, system.run(), trace.events


def test_the_os_reads_the_caps_of_a_driver_with_overlays():
    system, _, _ = _run(TwoPlanes)
    caps = system.adapter.caps
    assert (caps.SupportMultiPlaneOverlay, caps.MaxOverlayPlanes) == (True, 2)
    ref, _, _ = _run(ReferenceDriver)
    assert (ref.adapter.caps.SupportMultiPlaneOverlay, ref.adapter.caps.MaxOverlayPlanes) == (False, 0)


def test_each_plane_vsync_is_read_at_its_vsync_in_virtual_time():
    """Every CRTC_VSYNC the driver reports is followed, at the same instant, by one PlaneVSync per
    plane (0 then 1), on the display's refresh grid."""
    system, result, events = _run(TwoPlanes)
    assert result.bugcheck is None
    period = system.gpu.displays[0].period_ns
    vsyncs = [e["t"] for e in events if e["event"] == "VSync"]
    planes = [(e["t"], e["source"], e["layer"]) for e in events if e["event"] == "PlaneVSync"]
    assert vsyncs and all(t % period == 0 for t in vsyncs)
    assert planes == [(t, 0, layer) for t in vsyncs for layer in (0, 1)]
    assert system.adapter.dxgk.overlays.plane_vsyncs == planes
    assert 50 in system.adapter.verifier.judged_rules


@pytest.mark.rule(50)
def test_a_plane_at_max_overlay_planes_is_bug_check_0x119_0xe():
    system, result, events = _run(ReportsPlaneBeyondMax)
    crash = result.bugcheck
    assert crash is not None and (crash.rule, crash.rule_name) == (50, "MpoPlaneInRange")
    bc = crash.bugcheck
    assert (bc.code, bc.p1) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE)
    # Stopped at the first vsync it reported: planes 0 and 1 are in range, plane 2 is not.
    first = next(e["t"] for e in events if e["event"] == "VSync")
    assert crash.time == first
    assert "pMultiPlaneOverlayVsyncInfo[2].LayerIndex is 2" in crash.message


@pytest.mark.rule(50)
def test_in_report_mode_every_out_of_range_report_is_recorded_and_the_run_goes_on():
    system, result, events = _run(ReportsPlaneBeyondMax, verifier="report")
    found = [v for _, v in system.adapter.verifier.violations]
    vsyncs = [e for e in events if e["event"] == "VSync"]
    assert {v.rule for v in found} == {50}
    assert len(found) == len(vsyncs) >= 5
    assert "LayerIndex is 2" in found[0].message and "MaxOverlayPlanes = 2" in found[0].message


def test_the_case_is_na_by_caps_for_drivers_without_overlays():
    for driver in (ReferenceDriver, MinimalDriver):
        report = verify(driver, only=["interrupts/overlay_vsync"])
        (r,) = report.results
        assert r.verdict == "n/a" and "SupportMultiPlaneOverlay" in r.reason
    (r,) = verify(TwoPlanes, settings=WDDM2_1, only=["interrupts/overlay_vsync"]).results
    assert r.verdict == "pass", r.failure
    assert 50 in r.rules


class _Wddm13Planes(_PlaneVsyncs):
    """Reports the WDDM 1.3 form, CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY (type 7): entries are
    DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO, LayerIndex at 0, Enabled at 4, PhysicalAddress at 8 and the
    plane's DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES at 16; 120 bytes on x64 (the generated tables)."""

    def DxgkDdiStartDevice(self, DxgkInterface):
        status = super().DxgkDdiStartDevice(DxgkInterface)
        self._plane_array = DxgkInterface.MmAllocateContiguousMemory(120 * 8)
        return status

    def _report_vsync(self, source):
        ReferenceDriver._report_vsync(self, source)
        import struct

        from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T

        self.mem.write(self._plane_array, b"".join(
            struct.pack("<Ii", layer, 1) + b"\0" * 112 for layer in self.layers))
        data = self._plane_data
        data.InterruptType = int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY)
        arm = data.CrtcVsyncWithMultiPlaneOverlay
        arm.VidPnTargetId = source
        arm.PhysicalAdapterMask = 0
        arm.MultiPlaneOverlayVsyncInfoCount = len(self.layers)
        arm.pMultiPlaneOverlayVsyncInfo = self._plane_array
        data.Flags.Value = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)


class Wddm13TwoPlanes(_Wddm13Planes):
    """Two planes, both reported (0, 1), in the WDDM 1.3 form."""


class Wddm13PlaneBeyondMax(_Wddm13Planes):
    """MaxOverlayPlanes = 2, but plane 2 reported too, in the WDDM 1.3 form."""

    layers = (0, 1, 2)


WDDM1_3 = {"ddi_version": "wddm1_3"}


def test_the_wddm1_3_report_is_read_with_its_generated_layout():
    """Type 7's entries (DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO, with the plane attributes) are read at
    their 120-byte stride: every plane vsync is recorded, in order, and rule 50 judged them."""
    system, result, events = _run(Wddm13TwoPlanes, settings=WDDM1_3)
    assert result.bugcheck is None
    vsyncs = [e["t"] for e in events if e["event"] == "VSync"]
    planes = [(e["t"], e["source"], e["layer"]) for e in events if e["event"] == "PlaneVSync"]
    assert vsyncs and planes == [(t, 0, layer) for t in vsyncs for layer in (0, 1)]
    assert 50 in system.adapter.verifier.judged_rules


@pytest.mark.rule(50)
def test_a_wddm1_3_plane_at_max_overlay_planes_is_bug_check_0x119_0xe():
    system, result, events = _run(Wddm13PlaneBeyondMax, settings=WDDM1_3)
    crash = result.bugcheck
    assert crash is not None and (crash.rule, crash.rule_name) == (50, "MpoPlaneInRange")
    assert (crash.bugcheck.code, crash.bugcheck.p1) == (
        BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE)
    assert crash.time == next(e["t"] for e in events if e["event"] == "VSync")
    assert "CrtcVsyncWithMultiPlaneOverlay.pMultiPlaneOverlayVsyncInfo[2].LayerIndex is 2" in crash.message


def test_entry_classes_are_the_generated_layouts():
    from wddmsim.dxgkrnl.overlays import entry_class

    sizes = {(arm, arch): ctypes.sizeof(entry_class(arm, arch, "wddm3_0"))
             for arm in ("CrtcVsyncWithMultiPlaneOverlay", "CrtcVsyncWithMultiPlaneOverlay2",
                         "CrtcVsyncWithMultiPlaneOverlay3") for arch in ("x64", "x86")}
    assert sizes == {
        ("CrtcVsyncWithMultiPlaneOverlay", "x64"): 120, ("CrtcVsyncWithMultiPlaneOverlay", "x86"): 112,
        ("CrtcVsyncWithMultiPlaneOverlay2", "x64"): 24, ("CrtcVsyncWithMultiPlaneOverlay2", "x86"): 24,
        ("CrtcVsyncWithMultiPlaneOverlay3", "x64"): 8, ("CrtcVsyncWithMultiPlaneOverlay3", "x86"): 8,
    }
    # A Windows 8 header has the type 7 arm but not the structure: its WDDM 1.3 layout is used.
    assert ctypes.sizeof(entry_class("CrtcVsyncWithMultiPlaneOverlay", "x64", "win8")) == 120


class Win8Planes(_Wddm13Planes):
    """A Windows 8 driver: its header has the type 7 arm and SupportMultiPlaneOverlay but no
    MaxOverlayPlanes (WDDM 1.3)."""

    layers = (0, 1, 2)

    def _caps(self):
        c = ReferenceDriver._caps(self)
        c.SupportMultiPlaneOverlay = 1
        return c


def test_a_windows_8_report_is_read_with_the_wddm1_3_layout_and_not_judged():
    system, result, events = _run(Win8Planes, settings={"ddi_version": "win8"})
    assert result.bugcheck is None
    vsyncs = [e["t"] for e in events if e["event"] == "VSync"]
    planes = [e["layer"] for e in events if e["event"] == "PlaneVSync"]
    assert vsyncs and planes == [0, 1, 2] * len(vsyncs)
    assert 50 not in system.adapter.verifier.judged_rules
