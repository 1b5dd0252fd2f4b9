"""VidMm, the monitored fences and VidSch are each one class (or table) made of modules with one job
apiece (dxgkrnl/vidmm_paging.py, fence_object.py, fence_waits.py, vidsch_node.py,
vidsch_submit.py, vidsch_complete.py, vidsch_figures.py): every name their importers knew stays
importable from the old module as the same object, and no method is defined in two of the parts
(one would silently shadow the other)."""

import importlib

import pytest

from wddmsim.dxgkrnl.fences import FenceTable
from wddmsim.dxgkrnl.vidmm import VidMm
from wddmsim.dxgkrnl.vidsch import VidSch

#: old module -> (the module a name moved to, the names)
MOVED = {
    "vidmm": [("vidmm_paging", ["SUCCESS", "INSUFFICIENT", "BUSY", "BUILD", "POISON_WINDOW", "_POISON",
                                "FLAG_PAGING", "FLAG_CONTEXT_SWITCH", "PAGE", "Suspended"])],
    "fences": [("fence_object", ["U64_MAX", "U32_MAX", "HALF_RANGE", "MAX_OBJECTS_SIGNALED",
                                 "MAX_OBJECTS_WAITED_ON", "SYNC_FLAGS", "SUCCESS", "TIMEOUT", "CANCELLED",
                                 "INVALID_HANDLE", "INVALID_PARAMETER", "ACCESS_DENIED", "DESTROYED_STATUS",
                                 "MonitoredFence"]),
               ("fence_waits", ["QueueWait"])],
    "vidsch": [("vidsch_submit", ["SUCCESS", "INVALID_PARAMETER", "FLAG_PAGING", "FLAG_PRESENT",
                                  "FLAG_NULL_RENDERING", "FLAG_FLIP", "FLAG_FLIP_NO_WAIT"]),
               ("vidsch_node", ["NodeQueue"])],
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_names_stay_importable_from_the_old_module(old):
    module = importlib.import_module(f"wddmsim.dxgkrnl.{old}")
    for new, names in MOVED[old]:
        moved = importlib.import_module(f"wddmsim.dxgkrnl.{new}")
        for name in names:
            assert getattr(module, name) is getattr(moved, name), f"{old}.{name}"


def test_the_fences_public_names_are_unchanged():
    import wddmsim.dxgkrnl.fences as fences

    assert fences.__all__ == ["DESTROYED_STATUS", "HALF_RANGE", "MAX_OBJECTS_SIGNALED", "MAX_OBJECTS_WAITED_ON",
                              "SYNC_FLAGS", "U32_MAX", "U64_MAX", "FenceTable", "MonitoredFence", "QueueWait"]
    assert all(hasattr(fences, name) for name in fences.__all__)


@pytest.mark.parametrize("cls, parts", [
    (VidMm, ["VidMm", "VidMmPaging"]),
    (FenceTable, ["FenceTable", "FenceWaits"]),
    (VidSch, ["VidSch", "VidSchSubmission", "VidSchCompletion", "VidSchFigures"]),
])
def test_each_part_defines_its_own_methods(cls, parts):
    bases = [k for k in cls.__mro__ if k is not object]
    assert [k.__name__ for k in bases] == parts
    seen: dict[str, str] = {}
    for k in bases:
        for name, value in vars(k).items():
            if callable(value) and not name.startswith("__"):
                assert name not in seen, f"{name} is defined in both {seen[name]} and {k.__name__}"
                seen[name] = k.__name__
