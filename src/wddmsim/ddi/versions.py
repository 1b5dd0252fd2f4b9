"""DDI interface versions and WDDM versions.

A miniport declares the DDI it was built against with ``DXGKDDI_INTERFACE_VERSION`` and the WDDM
level it implements with ``DXGK_DRIVERCAPS.WDDMVersion`` (a ``DXGK_WDDMVERSION``). Structure layouts
in ``d3dkmddi.h`` are guarded by the interface version, so every structure in :mod:`wddmsim.ddi` is
built for one of the versions named here.

Spec: Microsoft's DXGK_WDDMVERSION page; values from Microsoft's published headers (d3dukmdt.h,
d3dkmddi.h).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class DdiVersion:
    """One ``DXGKDDI_INTERFACE_VERSION``: its order, our short name, the header value and the
    WDDM level and Windows release that introduced it."""

    value: int
    name: str
    macro: str
    wddm: str
    release: str

    def __str__(self) -> str:
        return self.name


_VERSIONS = (
    DdiVersion(0x1052, "vista", "DXGKDDI_INTERFACE_VERSION_VISTA", "1.0", "Windows Vista"),
    DdiVersion(0x1053, "vista_sp1", "DXGKDDI_INTERFACE_VERSION_VISTA_SP1", "1.05", "Windows Vista SP1"),
    DdiVersion(0x2005, "win7", "DXGKDDI_INTERFACE_VERSION_WIN7", "1.1", "Windows 7"),
    DdiVersion(0x300E, "win8", "DXGKDDI_INTERFACE_VERSION_WIN8", "1.2", "Windows 8"),
    DdiVersion(0x4002, "wddm1_3", "DXGKDDI_INTERFACE_VERSION_WDDM1_3", "1.3", "Windows 8.1"),
    DdiVersion(0x5023, "wddm2_0", "DXGKDDI_INTERFACE_VERSION_WDDM2_0", "2.0", "Windows 10 1507"),
    DdiVersion(0x6003, "wddm2_1", "DXGKDDI_INTERFACE_VERSION_WDDM2_1", "2.1", "Windows 10 1607"),
    DdiVersion(0x700A, "wddm2_2", "DXGKDDI_INTERFACE_VERSION_WDDM2_2", "2.2", "Windows 10 1703"),
    DdiVersion(0x8001, "wddm2_3", "DXGKDDI_INTERFACE_VERSION_WDDM2_3", "2.3", "Windows 10 1709"),
    DdiVersion(0x9006, "wddm2_4", "DXGKDDI_INTERFACE_VERSION_WDDM2_4", "2.4", "Windows 10 1803"),
    DdiVersion(0xA00B, "wddm2_5", "DXGKDDI_INTERFACE_VERSION_WDDM2_5", "2.5", "Windows 10 1809"),
    DdiVersion(0xB004, "wddm2_6", "DXGKDDI_INTERFACE_VERSION_WDDM2_6", "2.6", "Windows 10 1903"),
    DdiVersion(0xC004, "wddm2_7", "DXGKDDI_INTERFACE_VERSION_WDDM2_7", "2.7", "Windows 10 2004"),
    DdiVersion(0xD001, "wddm2_8", "DXGKDDI_INTERFACE_VERSION_WDDM2_8", "2.8", "Windows 10 preview (Manganese)"),
    DdiVersion(0xE003, "wddm2_9", "DXGKDDI_INTERFACE_VERSION_WDDM2_9", "2.9", "Windows Server 2022"),
    DdiVersion(0xF003, "wddm3_0", "DXGKDDI_INTERFACE_VERSION_WDDM3_0", "3.0", "Windows 11 21H2"),
    DdiVersion(0x10004, "wddm3_1", "DXGKDDI_INTERFACE_VERSION_WDDM3_1", "3.1", "Windows 11 22H2"),
    DdiVersion(0x11007, "wddm3_2", "DXGKDDI_INTERFACE_VERSION_WDDM3_2", "3.2", "Windows 11 24H2"),
)

#: Every known interface version, oldest first.
VERSIONS: tuple[DdiVersion, ...] = _VERSIONS
#: The newest interface version the model knows; ``latest`` on the command line.
LATEST: DdiVersion = _VERSIONS[-1]

_BY_NAME = {v.name: v for v in _VERSIONS}
_BY_NAME["latest"] = LATEST
#: Short names accepted wherever a DDI version is asked for (``latest`` included).
VERSION_NAMES: tuple[str, ...] = tuple(v.name for v in _VERSIONS) + ("latest",)


def ddi_version(name: str | DdiVersion) -> DdiVersion:
    """Return the :class:`DdiVersion` called ``name`` (``vista`` ... ``wddm3_2``, ``latest``).

    Raises :class:`KeyError` with the accepted names when ``name`` is unknown.
    """
    if isinstance(name, DdiVersion):
        return name
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise KeyError(f"unknown DDI version {name!r}; known: {', '.join(VERSION_NAMES)}") from None


def from_value(value: int) -> DdiVersion:
    """The newest known interface version whose value is <= ``value`` (how header guards read)."""
    best = None
    for v in _VERSIONS:
        if v.value <= value:
            best = v
    if best is None:
        raise KeyError(f"DXGKDDI_INTERFACE_VERSION 0x{value:X} is older than Vista")
    return best


class DXGK_WDDMVERSION(enum.IntEnum):
    """``DXGK_DRIVERCAPS.WDDMVersion``: the WDDM level a driver implements."""

    DXGKDDI_WDDMv1 = 0x1000
    DXGKDDI_WDDMv1_2 = 0x1200
    DXGKDDI_WDDMv1_3 = 0x1300
    DXGKDDI_WDDMv2 = 0x2000
    DXGKDDI_WDDMv2_1 = 0x2100
    DXGKDDI_WDDMv2_1_5 = 0x2105
    DXGKDDI_WDDMv2_1_6 = 0x2106
    DXGKDDI_WDDMv2_2 = 0x2200
    DXGKDDI_WDDMv2_3 = 0x2300
    DXGKDDI_WDDMv2_4 = 0x2400
    DXGKDDI_WDDMv2_5 = 0x2500
    DXGKDDI_WDDMv2_6 = 0x2600
    DXGKDDI_WDDMv2_7 = 0x2700
    DXGKDDI_WDDMv2_8 = 0x2800
    DXGKDDI_WDDMv2_9 = 0x2900
    DXGKDDI_WDDMv3_0 = 0x3000
    DXGKDDI_WDDMv3_1 = 0x3100
    DXGKDDI_WDDMv3_2 = 0x3200


def wddm_version_of(version: DdiVersion) -> DXGK_WDDMVERSION:
    """The WDDM level a driver built against ``version`` reports (Vista..Win7 report WDDM 1.0/1.1 as
    ``DXGKDDI_WDDMv1``, the oldest enumerator)."""
    if version.value < ddi_version("win8").value:
        return DXGK_WDDMVERSION.DXGKDDI_WDDMv1
    major, _, minor = version.wddm.partition(".")
    suffix = "" if (major == "2" and minor == "0") else f"_{minor}"
    return DXGK_WDDMVERSION[f"DXGKDDI_WDDMv{major}{suffix}"]


def is_wddm2(version: DdiVersion) -> bool:
    """True for WDDM 2.0 and later (e.g. ``Flags.Resubmission`` is meaningful only there)."""
    return version.value >= ddi_version("wddm2_0").value
