"""Every type the DDI layer knows, by its ``d3dkmddi.h`` name.

``wddmsim layout`` and ``wddmsim decode`` look names up here; :func:`lookup` suggests the nearest
names for a typo.
"""

from __future__ import annotations

import difflib

from . import enums, schema
from .schema import EnumType, Record, Typedef
from .versions import VERSIONS
from .structs import (
    adapter,
    caps,
    common,
    context,
    device,
    display,
    flipqueue,
    gpummu,
    hwsched,
    interrupt,
    mpo3,
    nativefence,
    overlay,
    paging,
    patch,
    preempt,
    render,
    submit,
    sync,
)

_MODULES = (
    common, submit, interrupt, patch, preempt, context, display, adapter, device, render, paging, gpummu, hwsched, sync,
    nativefence, caps, overlay, flipqueue, mpo3,
)

#: Records by name.
RECORDS: dict[str, Record] = {}
for _mod in _MODULES:
    for _value in vars(_mod).values():
        if isinstance(_value, Record) and _value.name == _value.name.upper():
            RECORDS[_value.name] = _value

#: Scalars and enumerations that are types of their own in the header.
SCALARS: dict[str, Typedef | EnumType] = {
    t.name: t
    for t in (
        schema.NTSTATUS,
        schema.D3DGPU_VIRTUAL_ADDRESS,
        schema.D3DDDI_VIDEO_PRESENT_SOURCE_ID,
        schema.D3DDDI_VIDEO_PRESENT_TARGET_ID,
        schema.D3DKMT_HANDLE,
        enums.FLIPINTERVAL,
        enums.INTERRUPT_TYPE,
        enums.BUILDPAGINGBUFFER_OPERATION,
        enums.PAGE_FAULT_FLAGS,
        enums.RENDER_PIPELINE_STAGE,
        enums.ENGINE_STATE,
        enums.GENERAL_ERROR_CODE,
        enums.ENGINE_TYPE,
        enums.PAGETABLEUPDATEMODE,
        enums.PTE_PAGE_SIZE,
        enums.SCHEDULING_PRIORITY_BAND,
        enums.KERNEL_SUBMISSION_TYPE,
        enums.NATIVEFENCE_TYPE,
        enums.QUERYADAPTERINFOTYPE,
        enums.WDDMVERSION,
        enums.GRAPHICS_PREEMPTION_GRANULARITY,
        enums.COMPUTE_PREEMPTION_GRANULARITY,
    )
}

NAMES: tuple[str, ...] = tuple(sorted(RECORDS) + sorted(SCALARS))

#: The DDI version each enumeration or scalar type above appeared in, where it is later than Vista:
#: the header guards tools/msvc_layouts/DECISIONS.md records for the C declarations (a record
#: carries its own ``since``).
SCALAR_SINCE: dict[str, str] = {
    "DXGK_WDDMVERSION": "win7",
    "D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY": "win8",
    "D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY": "win8",
    "DXGK_ENGINE_TYPE": "wddm1_3",
    "DXGK_GENERAL_ERROR_CODE": "wddm2_0",
    "DXGK_PAGETABLEUPDATEMODE": "wddm2_0",
    "DXGK_PAGE_FAULT_FLAGS": "wddm2_0",
    "DXGK_PTE_PAGE_SIZE": "wddm2_0",
    "DXGK_RENDER_PIPELINE_STAGE": "wddm2_0",
    "DXGK_SCHEDULING_PRIORITY_BAND": "wddm2_4",
    "DXGK_KERNEL_SUBMISSION_TYPE": "wddm2_5",
    "D3DDDI_NATIVEFENCE_TYPE": "wddm3_1",
    "DXGK_ENGINE_STATE": "wddm3_1",
}


def since(t: Record | Typedef | EnumType) -> str:
    """The short name of the DDI version the type ``t`` appeared in (``vista`` for the oldest)."""
    if isinstance(t, Record):
        return t.since or VERSIONS[0].name
    return SCALAR_SINCE.get(t.name, VERSIONS[0].name)


class UnknownType(KeyError):
    """A name that is no known DDI type; ``suggestions`` holds the nearest known names."""

    def __init__(self, name: str, suggestions: list[str]):
        super().__init__(name)
        self.name = name
        self.suggestions = suggestions

    def __str__(self) -> str:
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        return f"unknown structure {self.name!r}{hint}"


def lookup(name: str) -> Record | Typedef | EnumType:
    """The type called ``name`` (case-insensitive, a leading underscore allowed)."""
    key = name.strip().lstrip("_").upper()
    if key in RECORDS:
        return RECORDS[key]
    if key in SCALARS:
        return SCALARS[key]
    close = difflib.get_close_matches(key, NAMES, n=3, cutoff=0.5)
    if not close:
        close = [n for n in NAMES if key and (key in n or n in key)][:3]
    raise UnknownType(name, close)
