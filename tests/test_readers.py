"""The precompiled readers the event log uses read exactly what the generic codec reads: for every
DDI structure, on both architectures, at every DDI version where it exists, on all-zero,
all-ones and random bytes (and on any bytes hypothesis draws), ``args_reader`` gives the same
object, key order included, as ``nest(codec.values(...))``."""

import ctypes
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi import codec, layout, readers, registry, versions
from wddmsim.ddi.structs.submit import DXGKARG_SUBMITCOMMAND

CASES = [(name, arch, v.name) for name in sorted(registry.RECORDS) for arch in layout.ARCHES
         for v in versions.VERSIONS if layout.exists(registry.RECORDS[name], v)]


def _generic(rec, raw, arch, version):
    return readers.nest(codec.values(rec, raw, arch, version))


def _same(a, b) -> bool:
    """Equal values, equal key order (the log writes keys in order), and the reader's own JSON
    text is the log's encoding of the object."""
    text = json.dumps(b, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(a) == json.dumps(b) and a == b and a.json == text


@pytest.mark.parametrize("name", sorted(registry.RECORDS))
def test_reader_equals_codec_on_every_layout(name):
    rec = registry.RECORDS[name]
    cases = [(a, v) for n, a, v in CASES if n == name]
    assert cases, name
    for arch, version in cases:
        size = ctypes.sizeof(layout.ctype(rec, arch, version))
        rnd = random.Random(f"{name}/{arch}/{version}")
        read = readers.args_reader(rec, arch, version)
        assert read.size == size
        for raw in (bytes(size), b"\xff" * size, bytes(rnd.getrandbits(8) for _ in range(size))):
            assert _same(read(raw), _generic(rec, raw, arch, version)), (arch, version, raw.hex())


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), data=st.data())
def test_reader_equals_codec_on_any_bytes(case, data):
    name, arch, version = case
    rec = registry.RECORDS[name]
    size = ctypes.sizeof(layout.ctype(rec, arch, version))
    raw = data.draw(st.binary(min_size=size, max_size=size))
    assert _same(readers.args_reader(rec, arch, version)(raw), _generic(rec, raw, arch, version))


def test_reader_reads_a_ctypes_instance_in_place():
    obj = codec.new(DXGKARG_SUBMITCOMMAND, "x86", "win7", hContext=0x1234, SubmissionFenceId=7,
                    DmaBufferPhysicalAddress=-2, Flags=0x41)
    got = readers.args_reader(DXGKARG_SUBMITCOMMAND, "x86", "win7")(obj)
    assert got == _generic(DXGKARG_SUBMITCOMMAND, bytes(obj), "x86", "win7")
    assert got["hContext"] == 0x1234 and got["SubmissionFenceId"] == 7
    assert got["DmaBufferPhysicalAddress"] == -2  # PHYSICAL_ADDRESS is a signed LONGLONG
    assert got["Flags"]["Value"] == 0x41 and got["Flags"]["Paging"] == 1 and got["Flags"]["Present"] == 0


def test_a_reader_is_built_once_per_layout():
    a = readers.args_reader(DXGKARG_SUBMITCOMMAND, "x64", "wddm2_0")
    assert readers.args_reader(DXGKARG_SUBMITCOMMAND, "x64", versions.ddi_version("wddm2_0")) is a
    assert readers.args_reader(DXGKARG_SUBMITCOMMAND, "x86", "wddm2_0") is not a


def test_an_unknown_architecture_is_refused():
    with pytest.raises(ValueError, match="unknown architecture"):
        readers.args_reader(DXGKARG_SUBMITCOMMAND, "arm64", "latest")
