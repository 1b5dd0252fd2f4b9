"""``layout.filler``: one pack_into per run of members gives the same bytes as member-by-member
ctypes assignment, at every version and architecture, and refuses what it cannot fill."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi import layout
from wddmsim.ddi.registry import RECORDS
from wddmsim.ddi.versions import VERSIONS

NAMES = ["DXGKARG_SUBMITCOMMAND", "DXGKARG_RENDER", "DXGKARG_PATCH"]
CASES = [(n, a, v) for n in NAMES for a in ("x64", "x86") for v in VERSIONS[::4]]


def _scalar_paths(cls):
    out = []
    for ml in layout.members(cls.record, cls.arch, cls.ddi_version):
        if ml.bit_width is not None or ml.path == "hDevice":
            continue
        if ml.path.endswith(".Value") or (ml.depth == 0 and not _is_record(ml)):
            out.append(ml)
    return out


def _is_record(ml):
    from wddmsim.ddi.schema import Record
    return isinstance(ml.type, Record) and not ml.type.leaf


def _assign(obj, path, value):
    *parents, last = path.split(".")
    for p in parents:
        obj = getattr(obj, p)
    target = getattr(obj, last)
    if hasattr(target, "QuadPart"):
        target.QuadPart = value
    else:
        setattr(obj, last, value)


@pytest.mark.parametrize("name,arch,version", CASES, ids=[f"{n}-{a}-{v.name}" for n, a, v in CASES])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_filler_matches_member_assignment(name, arch, version, data):
    try:
        cls = layout.ctype(RECORDS[name], arch, version)
    except Exception:
        return
    mls = _scalar_paths(cls)
    values = [data.draw(st.integers(0, (1 << (8 * ml.size - 1)) - 1)) for ml in mls]
    by_hand = cls()
    for ml, v in zip(mls, values):
        _assign(by_hand, ml.path, v)
    filled = cls.from_buffer_copy(bytes([0xAB]) * len(bytes(cls())))  # junk everywhere first
    layout.filler(cls, [ml.path for ml in mls])(filled, *values)
    # Every member's bytes agree (padding is zero in both only where the filler covered it).
    for ml, v in zip(mls, values):
        assert bytes(filled)[ml.offset:ml.offset + ml.size] == bytes(by_hand)[ml.offset:ml.offset + ml.size]


def test_filler_leaves_other_members_alone_and_refuses_bitfields():
    cls = layout.ctype(RECORDS["DXGKARG_SUBMITCOMMAND"], "x64", "wddm2_0")
    a = cls()
    a.VidPnSourceId = 3
    layout.filler(cls, ["SubmissionFenceId", "NodeOrdinal"])(a, 7, 2)
    assert (a.SubmissionFenceId, a.NodeOrdinal, a.VidPnSourceId) == (7, 2, 3)
    with pytest.raises(ValueError, match="bitfield"):
        layout.filler(cls, ["Flags.Paging"])
    with pytest.raises(KeyError, match="no member"):
        layout.filler(cls, ["NoSuchMember"])
    with pytest.raises(struct.error):
        layout.filler(cls, ["SubmissionFenceId"])(a, 1 << 32)
