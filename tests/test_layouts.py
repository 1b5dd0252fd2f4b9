"""Every structure's size, alignment and every member's offset, size and bit position, at every DDI
version and on both architectures, against the tables clang-14 printed in MSVC mode
(tools/gen_msvc_layouts.py -> tests/data/msvc_layouts.json)."""

import ctypes
import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wddmsim.ddi import layout, registry, versions
from wddmsim.ddi.schema import Record
from wddmsim.ddi.structs.submit import DXGKARG_SUBMITCOMMAND

TABLES = json.loads((Path(__file__).parent / "data" / "msvc_layouts.json").read_text())
CASES = [
    (arch, name, v)
    for arch, types in TABLES["layouts"].items()
    for name, entries in types.items()
    for entry in entries
    for v in entry["versions"]
]


def _entry(arch, name, version):
    for entry in TABLES["layouts"][arch][name]:
        if version in entry["versions"]:
            return entry
    return None


def diff(mine: dict, ref: dict) -> list[str]:
    """Human-readable differences between two layout tables."""
    out = []
    for key in ("size", "align"):
        if mine[key] != ref[key]:
            out.append(f"{key}: model {mine[key]}, compiler {ref[key]}")
    for path in sorted(set(mine["members"]) | set(ref["members"])):
        a, b = mine["members"].get(path), ref["members"].get(path)
        if a != b:
            out.append(f"{path}: model {a}, compiler {b}")
    return out


@pytest.mark.parametrize("arch,name,version", CASES, ids=[f"{a}-{n}-{v}" for a, n, v in CASES])
def test_layout_matches_compiler(arch, name, version):
    t = registry.lookup(name)
    ref = _entry(arch, name, version)
    if isinstance(t, Record):
        assert layout.exists(t, version), f"{name} should exist at {version}"
        assert diff(layout.layout_table(t, arch, version), ref) == []
    else:
        c = layout.scalar_ctype(t, arch)
        assert (ctypes.sizeof(c), ctypes.alignment(c), ref["members"]) == (ref["size"], ref["align"], {})


def test_every_known_type_has_compiler_tables():
    for arch in layout.ARCHES:
        assert set(TABLES["layouts"][arch]) == set(registry.NAMES)


@pytest.mark.parametrize("name", sorted(registry.RECORDS))
def test_structure_exists_exactly_where_the_header_has_it(name):
    rec = registry.RECORDS[name]
    listed = {v for e in TABLES["layouts"]["x64"][name] for v in e["versions"]}
    assert {v.name for v in versions.VERSIONS if layout.exists(rec, v)} == listed


def test_versions_match_the_generator():
    assert TABLES["versions"] == {v.name: v.value for v in versions.VERSIONS}


def test_a_moved_member_is_caught():
    """The comparison is not vacuous: swapping two members of DXGKARG_SUBMITCOMMAND moves offsets."""
    items = list(DXGKARG_SUBMITCOMMAND.members)
    i = next(k for k, it in enumerate(items) if getattr(it, "name", "") == "DmaBufferSize")
    items[i], items[i + 1] = items[i + 1], items[i]
    moved = dataclasses.replace(DXGKARG_SUBMITCOMMAND, name="DXGKARG_SUBMITCOMMAND_MOVED", members=tuple(items))
    problems = diff(layout.layout_table(moved, "x64", "latest"), _entry("x64", "DXGKARG_SUBMITCOMMAND", "wddm3_2"))
    assert problems == [
        "DmaBufferSize: model {'offset': 28, 'size': 4}, compiler {'offset': 24, 'size': 4}",
        "DmaBufferSubmissionStartOffset: model {'offset': 24, 'size': 4}, compiler {'offset': 28, 'size': 4}",
    ]


def test_submitcommand_spot_check_from_the_seed():
    """Microsoft's DXGKARG_SUBMITCOMMAND page: the Windows 7 and Windows 8 additions land at the end
    of the structure."""
    x64 = layout.layout_table(DXGKARG_SUBMITCOMMAND, "x64", "latest")
    assert x64["size"] == 96
    assert {k: v["offset"] for k, v in x64["members"].items() if "." not in k} == {
        "hDevice": 0, "hContext": 0, "DmaBufferSegmentId": 8, "DmaBufferPhysicalAddress": 16,
        "DmaBufferSize": 24, "DmaBufferSubmissionStartOffset": 28, "DmaBufferSubmissionEndOffset": 32,
        "pDmaBufferPrivateData": 40, "DmaBufferPrivateDataSize": 48, "DmaBufferPrivateDataSubmissionStartOffset": 52,
        "DmaBufferPrivateDataSubmissionEndOffset": 56, "SubmissionFenceId": 60, "VidPnSourceId": 64,
        "FlipInterval": 68, "Flags": 72, "EngineOrdinal": 76, "DmaBufferVirtualAddress": 80, "NodeOrdinal": 88,
    }
    assert layout.layout_table(DXGKARG_SUBMITCOMMAND, "x86", "vista")["size"] == 64
    assert layout.layout_table(DXGKARG_SUBMITCOMMAND, "x86", "win7")["size"] == 72
    assert layout.layout_table(DXGKARG_SUBMITCOMMAND, "x86", "win8")["size"] == 80


@pytest.mark.parametrize(
    "version,masks",
    [
        ("vista", {"Paging": 0x1, "Present": 0x2, "RedirectedPresent": 0x4, "NullRendering": 0x8, "Flip": 0x10,
                   "FlipWithNoWait": 0x20, "Reserved": 0xFFFFFFC0}),
        ("win8", {"ContextSwitch": 0x40, "Reserved": 0xFFFFFF80}),
        ("wddm2_0", {"Resubmission": 0x80, "Reserved": 0xFFFFFF00}),
        ("wddm2_2", {"VirtualMachineData": 0x100, "Reserved": 0xFFFFFE00}),
    ],
)
def test_submitcommandflags_masks_are_the_seeds(version, masks):
    rec = registry.RECORDS["DXGK_SUBMITCOMMANDFLAGS"]
    got = {ml.path: ((1 << ml.bit_width) - 1) << ml.bit_offset for ml in layout.members(rec, "x64", version) if ml.bit_width}
    for name, mask in masks.items():
        assert got[name] == mask


@pytest.mark.skipif(shutil.which("clang-14") is None, reason="clang-14 is not installed; the committed tables stand")
def test_committed_tables_are_what_the_generator_writes(tmp_path):
    out = tmp_path / "layouts.json"
    subprocess.run([sys.executable, "tools/gen_msvc_layouts.py", "--output", str(out)], check=True,
                   cwd=Path(__file__).parents[1], capture_output=True)
    assert json.loads(out.read_text()) == TABLES


def test_every_record_name_means_one_record():
    """ctypes classes are cached by record name: two different records with one name (a nested
    arm called like another structure's) would silently share a layout."""
    from wddmsim.ddi.schema import Array, Group, Member, Record

    seen: dict[str, Record] = {}
    clashes = []

    def walk(t):
        if isinstance(t, Array):
            walk(t.elem)
            return
        if not isinstance(t, Record):
            return
        other = seen.setdefault(t.name, t)
        if other is not t and other != t:
            clashes.append(t.name)
            return
        for item in t.members:
            visit(item)

    def visit(item):
        if isinstance(item, Group):
            for sub in item.members:
                visit(sub)
        elif isinstance(item, Member):
            walk(item.type)

    for rec in registry.RECORDS.values():
        walk(rec)
    assert clashes == []
