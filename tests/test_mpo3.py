"""Multiplane-overlay flips of the third form, end to end: the OS's
DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 (dxgkrnl/mpoflip.py), the reference driver's
planes (kmd/overlay.py, the ``overlay_planes`` setting), the display's plane registers
(gpu/planes.py) and the driver's CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 report read by the OS
(dxgkrnl/overlays.py), in virtual time and on the event log; DxgkDdiCheckMultiPlaneOverlaySupport3
by caps; and the structures' layouts against the compiler tables (tests/data/msvc_layouts.json).

Microsoft's pages: d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddresswithmultiplaneoverlay3,
ns-d3dkmddi-_dxgk_multiplane_overlay_plane3, ns-d3dkmddi-_dxgk_plane_specific_input_flags,
nc-d3dkmddi-dxgkddi_checkmultiplaneoverlaysupport3, ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wddmsim.ddi import layout, registry
from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.dxgkrnl.mpoflip import MpoError, PlaneRequest, flipper
from wddmsim.dxgkrnl.overlays import DROPPED, NOT_SHOWN
from wddmsim.gpu import mmio as M
from wddmsim.kmd import ReferenceDriver
from wddmsim.scenario import scenario_from_dict
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

TABLES = json.loads((Path(__file__).parent / "data" / "msvc_layouts.json").read_text())
FLIP_DDI = "DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3"
CHECK_DDI = "DxgkDdiCheckMultiPlaneOverlaySupport3"
MPO = {"ddi_version": "wddm2_1", "overlay_planes": 2}
A, B, C = 0x4000_0000, 0x4010_0000, 0x4020_0000  # three surfaces (GPU addresses)
PLANE_EVENTS = ("MpoFlip", "PlaneVSync", "PlaneDisplayed", "PlaneDropped")


def _system(settings=MPO, driver=None, *, flips=False, duration="100ms"):
    work = ({"kind": "frame_loop", "fps": 60, "packets_per_frame": 1, "work": "1ms", "present_mode": "flip",
             "sync_interval": 1, "count": 4} if flips else
            {"kind": "script", "packets": [{"at": 0, "work": "1ms"}]})
    sc = {"name": "mpo3", "duration": duration, "seed": 1, "adapter": {"nodes": [{"name": "3D", "engine": "3d"}]},
          "driver": dict(settings), "process": [{"name": "app", "context": [{"name": "c", "node": "3D",
                                                                             "workload": work}]}]}
    trace = ListSink()
    kw = {} if driver is None else {"driver": driver}
    system = System(scenario_from_dict(sc, "<mpo3>"), trace=trace, **kw)
    return system, trace


def _at(system, t, fn):
    system.sim.at(t, fn)


def _plane_events(trace):
    return [{k: v for k, v in e.items() if k != "event"} | {"event": e["event"]}
            for e in trace.events if e["event"] in PLANE_EVENTS]


def _period(system):
    return system.gpu.displays[0].period_ns


# -- the flip, in virtual time ---------------------------------------------------------------------------------------
def test_a_two_plane_flip_made_mid_frame_latches_at_the_next_vsync_with_both_planes_reported():
    system, trace = _system()
    p = _period(system)
    t0 = 2 * p + p // 2  # mid-frame
    hw = system.gpu.mmio
    seen = {}

    def flip():
        seen["result"] = flipper(system.adapter).flip(0, [PlaneRequest(0, A), PlaneRequest(1, B)])
        seen["after_call"] = (hw.plane_address(0, 1), hw.plane_status(0))

    _at(system, t0, flip)
    result = system.run()
    assert result.bugcheck is None
    status, flips = seen["result"]
    assert status == int(NTSTATUS.STATUS_SUCCESS)
    assert seen["after_call"] == (0, 0)  # nothing shown before the vsync, nothing latched
    vsync = 3 * p  # the first vsync after the call
    assert [(f.layer, f.present_id, f.shown) for f in flips] == [(0, 1, vsync), (1, 1, vsync)]
    assert _plane_events(trace) == [
        {"t": t0, "event": "MpoFlip", "source": 0, "layer": 0, "present_id": 1, "surface": A, "enabled": 1,
         "immediate": 0, "status": 0},
        {"t": t0, "event": "MpoFlip", "source": 0, "layer": 1, "present_id": 1, "surface": B, "enabled": 1,
         "immediate": 0, "status": 0},
        {"t": vsync, "event": "PlaneVSync", "source": 0, "layer": 0},
        {"t": vsync, "event": "PlaneVSync", "source": 0, "layer": 1},
        {"t": vsync, "event": "PlaneDisplayed", "source": 0, "layer": 0, "present_id": 1, "latency": vsync - t0},
        {"t": vsync, "event": "PlaneDisplayed", "source": 0, "layer": 1, "present_id": 1, "latency": vsync - t0},
    ]
    # The call went through the gateway at device IRQL, once; the display shows both planes.
    calls = [e for e in trace.events if e["event"] == "DdiCall" and e["name"] == FLIP_DDI]
    assert [(e["t"], e["irql"], e["status"], e["args"]["PlaneCount"]) for e in calls] == \
        [(t0, "DIRQL", "STATUS_SUCCESS", 2)]
    assert (hw.scanout(0), hw.plane_address(0, 1), hw.plane_enabled(0, 1)) == (A, B, True)
    assert system.driver.plane_reports == 1 and system.driver.plane_shown == {(0, 0): 1, (0, 1): 1}
    assert 50 in system.adapter.verifier.judged_rules  # the report was judged against MaxOverlayPlanes


def test_an_immediate_plane_flip_shows_at_once_and_raises_no_vsync_report():
    system, trace = _system()
    p = _period(system)
    t0 = p + p // 3
    hw = system.gpu.mmio
    seen = {}

    def flip():
        _, (f,) = flipper(system.adapter).flip(0, [PlaneRequest(1, C, immediate=True)])
        seen["flip"] = f
        seen["now"] = (hw.plane_address(0, 1), hw.plane_status(0), f.shown)

    _at(system, t0, flip)
    assert system.run().bugcheck is None
    assert seen["now"] == (C, 0, t0)  # on screen when the call returned; no latch, no cause
    assert _plane_events(trace) == [
        {"t": t0, "event": "MpoFlip", "source": 0, "layer": 1, "present_id": 1, "surface": C, "enabled": 1,
         "immediate": 1, "status": 0},
        {"t": t0, "event": "PlaneDisplayed", "source": 0, "layer": 1, "present_id": 1, "latency": 0},
    ]
    assert system.driver.plane_reports == 0


def _latest_write_wins():
    system, trace = _system()
    p = _period(system)
    t1, t2 = 2 * p + p // 5, 2 * p + 3 * p // 5  # both inside the frame before the vsync at 3p
    got = []
    _at(system, t1, lambda: flipper(system.adapter).flip(0, [PlaneRequest(1, A)], on_done=got.append))
    _at(system, t2, lambda: flipper(system.adapter).flip(0, [PlaneRequest(1, B)], on_done=got.append))
    assert system.run().bugcheck is None
    return system, trace, got, (p, t1, t2)


def latest_write_wins_run() -> list[dict]:
    """The event log of two flips of one plane in one frame (tests/test_events_doc.py uses it)."""
    return _latest_write_wins()[1].events


def test_the_latest_write_before_a_vsync_wins_and_the_replaced_flip_is_dropped():
    system, trace, got, (p, t1, t2) = _latest_write_wins()
    hw = system.gpu.mmio
    vsync = 3 * p
    assert [(f.present_id, f.shown) for f in got] == [(1, DROPPED), (2, vsync)]
    assert [(e["t"], e["event"], e.get("present_id")) for e in _plane_events(trace)] == [
        (t1, "MpoFlip", 1), (t2, "MpoFlip", 2), (vsync, "PlaneVSync", None), (vsync, "PlaneDropped", 1),
        (vsync, "PlaneDisplayed", 2)]
    assert hw.plane_address(0, 1) == B
    assert next(e for e in trace.events if e["event"] == "PlaneDisplayed")["latency"] == vsync - t2


def test_a_write_at_a_vsync_instant_latches_at_the_next_one_and_a_disabled_plane_keeps_its_address():
    system, trace = _system()
    p = _period(system)
    hw = system.gpu.mmio
    fl = flipper(system.adapter)
    _at(system, p + 1, lambda: fl.flip(0, [PlaneRequest(1, A)]))  # shown at 2p
    _at(system, 2 * p, lambda: fl.flip(0, [PlaneRequest(1, 0, enabled=False)]))  # at the vsync: latches at 3p
    seen = {}
    _at(system, 3 * p - 1, lambda: seen.setdefault("before", (hw.plane_address(0, 1), hw.plane_enabled(0, 1))))
    assert system.run().bugcheck is None
    assert seen["before"] == (A, True)
    assert (hw.plane_address(0, 1), hw.plane_enabled(0, 1)) == (A, False)
    shown = [(e["t"], e["present_id"]) for e in trace.events if e["event"] == "PlaneDisplayed"]
    assert shown == [(2 * p, 1), (3 * p, 2)]


# -- who gets called ---------------------------------------------------------------------------------------------------
def test_a_driver_with_overlay_planes_0_is_never_called_with_the_mpo3_ddis():
    system, trace = _system({"ddi_version": "wddm2_7"}, flips=True)
    caps = system.adapter.caps
    assert (caps.SupportMultiPlaneOverlay, caps.MaxOverlayPlanes) == (False, 0)
    errors = []

    def attempt():
        try:
            flipper(system.adapter).flip(0, [PlaneRequest(0, A)])
        except MpoError as e:
            errors.append(str(e))

    _at(system, 5_000_000, attempt)
    result = system.run()
    assert result.bugcheck is None
    assert errors == ["the driver does not declare DXGK_DRIVERCAPS.SupportMultiPlaneOverlay with MaxOverlayPlanes "
                      ">= 1: the OS makes no multiplane-overlay flip"]
    assert FLIP_DDI not in system.adapter.ddi.calls and CHECK_DDI not in system.adapter.ddi.calls
    assert not [e for e in trace.events if e["event"] == "DdiCall" and "MultiPlaneOverlay" in e["name"]]
    assert sum(1 for e in trace.events if e["event"] == "Displayed") >= 3  # its flips ran the usual way


def test_the_caps_follow_the_setting_and_flips_of_the_primary_still_run():
    system, trace = _system({"ddi_version": "wddm2_7", "overlay_planes": 3}, flips=True)
    caps = system.adapter.caps
    assert (caps.SupportMultiPlaneOverlay, caps.MaxOverlayPlanes) == (True, 3)
    assert caps.raw.SupportMultiPlaneOverlayImmediateFlip == 1
    assert system.run().bugcheck is None
    assert FLIP_DDI not in system.adapter.ddi.calls  # declared, but nothing asked for a plane flip
    assert sum(1 for e in trace.events if e["event"] == "Displayed") >= 3
    assert not [e for e in trace.events if e["event"] in PLANE_EVENTS]


def test_overlay_planes_need_wddm2_1_and_the_gpu_planes():
    with pytest.raises(Exception, match="overlay_planes = 2 needs ddi_version wddm2_1 or later"):
        _system({"ddi_version": "wddm2_0", "overlay_planes": 2})
    with pytest.raises(Exception, match="less than or equal to 4"):
        _system({"ddi_version": "wddm2_1", "overlay_planes": 5})


def test_requests_the_os_would_not_make_are_refused_before_any_call():
    system, _ = _system({"ddi_version": "wddm2_1", "overlay_planes": 2})
    fl = flipper(system.adapter)
    bad = {
        "LayerIndex 2: the driver declares MaxOverlayPlanes = 2": [PlaneRequest(2, A)],
        "plane 1 is asked twice in one call": [PlaneRequest(1, A), PlaneRequest(1, B)],
        "no plane to flip": [],
    }
    for message, planes in bad.items():
        with pytest.raises(MpoError, match=message):
            fl.flip(0, planes)
    with pytest.raises(MpoError, match=r"VidPn source 3: the adapter has sources 0..0"):
        fl.flip(3, [PlaneRequest(0, A)])
    with pytest.raises(MpoError, match="has no member 'Nope'"):
        fl.flip(0, [PlaneRequest(0, A, attributes={"Nope": 1})])
    fl.flip(0, [PlaneRequest(0, A, present_id=7)])
    with pytest.raises(MpoError, match="PresentId 7 must be above the plane's last, 7"):
        fl.flip(0, [PlaneRequest(0, A, present_id=7)])
    assert system.adapter.ddi.calls[FLIP_DDI] == 1  # only the one good call reached the driver


# -- the driver's status -----------------------------------------------------------------------------------------------
class RetriesEveryFlip(ReferenceDriver):
    """Answers every MPO3 flip STATUS_RETRY with OutputFlags.PrePresentNeeded (call again at PASSIVE_LEVEL)."""

    def DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3(self, hAdapter, pArgs):
        pArgs.OutputFlags.PrePresentNeeded = 1
        return int(NTSTATUS.STATUS_RETRY)


class FailsEveryFlip(ReferenceDriver):
    """Answers every MPO3 flip STATUS_UNSUCCESSFUL."""

    def DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3(self, hAdapter, pArgs):
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


def test_status_retry_leaves_the_planes_unshown_and_dropped():
    system, trace = _system(driver=RetriesEveryFlip)
    got = {}
    _at(system, 1_000_000, lambda: got.setdefault("r", flipper(system.adapter).flip(0, [PlaneRequest(1, A)])))
    assert system.run().bugcheck is None
    status, (f,) = got["r"]
    assert (status, f.shown, f.status) == (int(NTSTATUS.STATUS_RETRY), DROPPED, int(NTSTATUS.STATUS_RETRY))
    assert [(e["t"], e["event"]) for e in _plane_events(trace)] == [(1_000_000, "MpoFlip"), (1_000_000, "PlaneDropped")]
    assert system.gpu.mmio.plane_address(0, 1) == 0


def test_any_other_failure_is_bug_check_0x119_0xb():
    system, _ = _system(driver=FailsEveryFlip)
    _at(system, 1_000_000, lambda: flipper(system.adapter).flip(0, [PlaneRequest(1, A)]))
    crash = system.run().bugcheck
    assert crash is not None and crash.time == 1_000_000 and crash.ddi == FLIP_DDI
    bc = crash.bugcheck
    assert (bc.code, bc.p1, bc.p2) == (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                      VidSchError.FAILED_SETVIDPNSOURCEMPO_COMMAND,
                                      int(NTSTATUS.STATUS_UNSUCCESSFUL))


# -- the support check -------------------------------------------------------------------------------------------------
def test_check_multiplane_overlay_support3_answers_by_caps():
    system, trace = _system({"ddi_version": "wddm2_1", "overlay_planes": 2})
    fl = flipper(system.adapter)
    full = {"SrcRect": (0, 0, 1920, 1080), "DstRect": (0, 0, 1920, 1080), "ClipRect": (0, 0, 1920, 1080)}
    answers = [
        fl.check(0, [PlaneRequest(0, attributes=full), PlaneRequest(1, attributes=full)]),
        fl.check(0, [PlaneRequest(0), PlaneRequest(1), PlaneRequest(1)]),  # three planes, MaxOverlayPlanes 2
        fl.check(0, [PlaneRequest(0), PlaneRequest(2)]),  # a plane the driver does not have
        fl.check(0, [PlaneRequest(0), PlaneRequest(1, attributes={"Rotation": 2})]),  # D3DDDI_ROTATION_90
        fl.check(0, [PlaneRequest(0), PlaneRequest(1, attributes={"Flags": 1})]),  # vertical mirroring
        fl.check(0, [PlaneRequest(0, attributes={"DstRect": (100, 0, 0, 10)})]),  # an inverted rectangle
        fl.check(0, [PlaneRequest(0)], post_composition={"SrcRect": (0, 0, 1024, 768)}),  # a stretch only
        fl.check(0, [PlaneRequest(0)], post_composition={"Rotation": 3}),  # a post-composition rotation
    ]
    assert [(a.supported, a.failing_plane, a.try_again, a.status) for a in answers] == [
        (True, 0, False, 0), (False, 2, False, 0), (False, 1, False, 0), (False, 1, False, 0),
        (False, 1, False, 0), (False, 0, False, 0), (True, 0, False, 0), (False, 0, False, 0)]
    calls = [e for e in trace.events if e["event"] == "DdiCall" and e["name"] == CHECK_DDI]
    assert len(calls) == 8 and {e["irql"] for e in calls} == {"PASSIVE_LEVEL"}
    assert FLIP_DDI not in system.adapter.ddi.calls  # asking flips nothing


# -- the hardware registers --------------------------------------------------------------------------------------------
def test_the_plane_registers_latch_like_the_primary():
    """Raw registers (a driver that reads no plane status: no overlay planes declared)."""
    system, trace = _system({"ddi_version": "wddm2_1"})
    hw, sim = system.gpu.mmio, system.sim
    p = _period(system)
    log = []

    def write():
        hw.set_plane_address(0, 2, A)
        hw.set_plane_address(0, 2, B)  # replaces the pending one
        log.append(("written", hw.plane_address(0, 2), hw.plane_status(0)))

    def look():
        log.append(("vsync", hw.plane_address(0, 2), hw.plane_status(0)))
        hw.plane_status_ack(0, 0b100)
        log.append(("acked", hw.plane_status(0)))

    sim.at(p // 2, write)
    sim.at(p + 1, look)
    assert system.run(until=2 * p).bugcheck is None
    assert log == [("written", 0, 0), ("vsync", B, 0b100), ("acked", 0)]
    # The latch raised the source's vsync cause: the driver reported a CRTC_VSYNC at that vsync.
    assert [e["t"] for e in trace.events if e["event"] == "VSync"] == [p]
    assert hw.plane_count(0) == M.PLANES_PER_SOURCE == 4
    with pytest.raises(ValueError, match="planes 0..3, not 4"):
        hw.set_plane_address(0, 4, A)


# -- the structures ----------------------------------------------------------------------------------------------------
def _table(arch, name, version):
    return next(e for e in TABLES["layouts"][arch][name] if version in e["versions"])


@pytest.mark.parametrize("arch,name,version,size,offsets", [
    ("x64", "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", "wddm2_9", 48,
     {"VidPnSourceId": 0, "InputFlags": 4, "OutputFlags": 8, "PlaneCount": 12, "ppPlanes": 16,
      "pPostComposition": 24, "Duration": 32, "pHDRMetaData": 40}),
    ("x64", "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", "wddm3_2", 56, {"TargetFlipTime": 48}),
    ("x86", "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", "wddm2_1", 32,
     {"ppPlanes": 16, "pPostComposition": 20, "Duration": 24, "pHDRMetaData": 28}),
    ("x86", "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", "wddm3_0", 40, {"TargetFlipTime": 32}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_PLANE3", "wddm3_2", 144,
     {"LayerIndex": 0, "PresentId": 8, "InputFlags": 16, "OutputFlags": 20, "MaxImmediateFlipLine": 24,
      "ContextCount": 28, "ppContextData": 32, "DriverPrivateDataSize": 40, "pDriverPrivateData": 48,
      "PlaneAttributes": 56}),
    ("x86", "DXGK_MULTIPLANE_OVERLAY_PLANE3", "wddm3_2", 128,
     {"ppContextData": 32, "DriverPrivateDataSize": 36, "pDriverPrivateData": 40, "PlaneAttributes": 44}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3", "wddm2_1", 68, {"ColorSpaceType": 64 - 4, "StretchQuality": 64}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3", "wddm2_3", 72, {"SDRWhiteLevel": 68}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3", "wddm2_4", 88, {"DirtyRectCnt": 72, "pDirtyRects": 80}),
    ("x86", "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3", "wddm2_4", 80, {"DirtyRectCnt": 72, "pDirtyRects": 76}),
    ("x64", "DXGK_PRIMARYCONTEXTDATA", "wddm2_1", 32,
     {"hContext": 0, "hAllocation": 8, "SegmentId": 16, "SegmentAddress": 24}),
    ("x86", "DXGK_PRIMARYCONTEXTDATA", "wddm2_1", 24, {"hAllocation": 4, "SegmentId": 8, "SegmentAddress": 16}),
    ("x64", "DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3", "wddm2_1", 40,
     {"PlaneCount": 0, "ppPlanes": 8, "PostCompositionCount": 16, "ppPostComposition": 24, "Supported": 32,
      "ReturnInfo": 36}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2", "wddm3_2", 104, {"PlaneAttributes": 16}),
    ("x64", "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE", "wddm2_1", 44, {"PostComposition": 4}),
])
def test_sizes_and_offsets_are_the_compilers(arch, name, version, size, offsets):
    mine = layout.layout_table(registry.RECORDS[name], arch, version)
    ref = _table(arch, name, version)
    assert (mine["size"], ref["size"]) == (size, size)
    for member, offset in offsets.items():
        assert (mine["members"][member]["offset"], ref["members"][member]["offset"]) == (offset, offset), member
    assert mine["members"] == ref["members"]


@pytest.mark.parametrize("name,version,masks", [
    ("DXGK_PLANE_SPECIFIC_INPUT_FLAGS", "wddm2_1",
     {"Enabled": 0x1, "FlipImmediate": 0x2, "FlipOnNextVSync": 0x4, "SharedPrimaryTransition": 0x8,
      "IndependentFlipExclusive": 0x10, "Reserved": 0xFFFF_FFE0}),
    ("DXGK_PLANE_SPECIFIC_INPUT_FLAGS", "wddm2_6", {"FlipImmediateNoTearing": 0x20, "Reserved": 0xFFFF_FFC0}),
    ("DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS", "wddm2_1",
     {"FlipConvertedToImmediate": 0x1, "PostPresentNeeded": 0x2, "Reserved": 0xFFFF_FFFC}),
    ("DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS", "wddm2_2", {"HsyncInterruptCompletion": 0x4, "Reserved": 0xFFFF_FFF8}),
    ("DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS", "wddm2_1", {"RetryAtLowerIrql": 0x8, "Reserved": 0xFFFF_FFF0}),
    ("DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS", "wddm2_9", {"PrePresentNeeded": 0x1, "Reserved": 0xFFFF_FFFE}),
    ("DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS", "wddm3_0",
     {"HwFlipQueueDrainNeeded": 0x2, "HwFlipQueueDrainAllPlanes": 0x4, "HwFlipQueueDrainAllSources": 0x8,
      "Reserved": 0xFFFF_FFF0}),
    ("DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO", "wddm1_3",
     {"FailingPlane": 0xF, "TryAgain": 0x10, "Reserved": 0xFFFF_FFE0}),
])
def test_flag_bits_are_where_the_pages_put_them(name, version, masks):
    for arch in ("x64", "x86"):
        got = {ml.path: ((1 << ml.bit_width) - 1) << ml.bit_offset
               for ml in layout.members(registry.RECORDS[name], arch, version) if ml.bit_width}
        ref = _table(arch, name, version)["members"]
        for bit, mask in masks.items():
            assert got[bit] == mask, (arch, bit)
            assert ((1 << ref[bit]["bit_width"]) - 1) << ref[bit]["bit_offset"] == mask, (arch, bit)


def test_the_family_exists_from_wddm2_1_and_the_return_info_from_wddm1_3():
    for name in ("DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", "DXGK_MULTIPLANE_OVERLAY_PLANE3",
                 "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3", "DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3"):
        rec = registry.RECORDS[name]
        assert (layout.exists(rec, "wddm2_0"), layout.exists(rec, "wddm2_1")) == (False, True), name
        assert TABLES["layouts"]["x64"][name][0]["versions"][0] == "wddm2_1"
    rec = registry.RECORDS["DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO"]
    assert (layout.exists(rec, "win8"), layout.exists(rec, "wddm1_3")) == (False, True)


def test_a_flip_nobody_reported_stays_pending():
    """Without a vsync after the call (the run ends first) the plane flip is still waiting."""
    system, trace = _system(duration="30ms")
    p = _period(system)
    got = {}
    _at(system, p + p // 2, lambda: got.setdefault("r", flipper(system.adapter).flip(0, [PlaneRequest(1, A)])))
    system.run(until=2 * p - 1)
    (f,) = got["r"].flips
    assert f.shown == NOT_SHOWN and system.adapter.dxgk.overlays.waiting(0, 1) == (f,)


def test_a_wddm3_driver_reports_its_plane_flips_with_overlay2_and_its_arguments_carry_target_flip_time():
    """OVERLAY3's entries name a flip queue log index, not a PresentId: outside the hardware flip
    queue the driver reports OVERLAY2 at every DDI version (kmd/overlay.py); the WDDM 3.0 argument
    has TargetFlipTime, which the OS leaves 0."""
    system, trace = _system({"ddi_version": "wddm3_2", "overlay_planes": 2})
    p = _period(system)
    _at(system, p // 2, lambda: flipper(system.adapter).flip(0, [PlaneRequest(1, A)]))
    assert system.run().bugcheck is None
    kinds = {e["args"]["InterruptType"] for e in trace.events
             if e["event"] == "Callback" and e["name"] == "DxgkCbNotifyInterrupt"}
    assert "DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2" in kinds
    assert "DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3" not in kinds
    (call,) = [e for e in trace.events if e["event"] == "DdiCall" and e["name"] == FLIP_DDI]
    assert call["args"]["TargetFlipTime"] == 0 and call["args"]["OutputFlags"]["HwFlipQueueDrainNeeded"] == 0
    assert [(e["t"], e["present_id"]) for e in trace.events if e["event"] == "PlaneDisplayed"] == [(p, 1)]
