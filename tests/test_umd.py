"""The user-mode half of a driver pair (wddmsim.umd): the reference user-mode driver's encodings,
and a driver pair whose user-mode half speaks its own private-data format (the OS builds no
command and no private data of its own)."""

from __future__ import annotations

import struct

import pytest

from wddmsim.gpu import commands as C
from wddmsim.dxgkrnl.errors import AdapterStartError
from wddmsim.kmd import ReferenceDriver
from wddmsim.dxgkrnl.loader import LoadError, load_class
from wddmsim.runner.system import System
from wddmsim.trace import ListSink
from wddmsim.umd import (
    BufferRequest, CommandBuffer, Copy, FenceValue, Fill, ReferenceUmd, Target, Timestamp, UmdAdapterInfo, Work, Write,
)

from wddm2util import MS, adapter, run, scenario


def script(name: str, *packets) -> dict:
    return {"name": name, "context": [{"name": "c", "node": "3D", "workload": {
        "kind": "script", "packets": [dict(at=at, work=work, repeat=repeat) for at, work, repeat in packets]}}]}


class Alloc:
    """An allocation as the user-mode driver sees it: a GPU virtual address (WDDM 2.x)."""

    def __init__(self, va):
        self.va = va


def test_physical_buffers_leave_addresses_to_the_patch_list_with_each_allocation_listed_once():
    a, b = Alloc(0), Alloc(0)
    cb = ReferenceUmd().build(BufferRequest((
        Copy(Target(a), Target(b, 64), 4096), Fill(Target(a, 8), 16, 0x5A5A5A5A), Work(1000))))
    copy_len = len(C.copy(0, 0, 0))
    assert cb.commands == C.copy(0, 0, 4096) + C.fill(0, 16, 0x5A5A5A5A) + C.work(1000)
    assert cb.allocations == (a, b)
    assert cb.patches == ((0, C.COPY_SRC, 0), (1, C.COPY_DST, 64), (0, copy_len + C.FILL_DST, 8))
    assert cb.private == b""


def test_virtual_buffers_hold_addresses_waits_signals_and_the_progress_write():
    a = Alloc(0x40_0000_0000)
    req = BufferRequest((Timestamp(Target(a, 16)), Write(Target(address=0x1000), 7)), virtual=True,
                        wait=FenceValue(0x50_0000, 0x1_0000_0003, 32), signal=FenceValue(0x50_0008, 9),
                        progress=FenceValue(0x60_0000, 4), context=0x33)
    cb = ReferenceUmd(UmdAdapterInfo(private_driver_data=struct.pack("<I", 0x1234ABCD))).build(req)
    body = C.timestamp(a.va + 16) + C.fence(0x1000, 7)
    assert cb.commands == (C.wait(0x50_0000, 3, bits=32) + body + C.fence(0x50_0008, 9, interrupt=True)
                           + C.fence(0x60_0000, 4, interrupt=True))
    assert cb.patches == () and cb.allocations == ()
    # The private record starts with the magic the kernel-mode half told the user-mode half.
    assert struct.unpack("<IIII", cb.private) == (0x1234ABCD, 0x33, len(cb.commands), len(body))


def test_an_operation_the_gpu_has_no_command_for_is_refused():
    class Dispatch:
        pass

    with pytest.raises(ValueError, match="no command for Dispatch"):
        ReferenceUmd().build(BufferRequest((Dispatch(),)))


# -- a driver pair with its own private data -----------------------------------------------------------
class StampUmd(ReferenceUmd):
    """A user-mode half whose private data is the 8 bytes b"STAMP!!!"."""

    def build(self, request):
        cb = super().build(request)
        return CommandBuffer(cb.commands, cb.allocations, cb.patches, b"STAMP!!!" if request.virtual else b"")


class StampKmd(ReferenceDriver):
    """Accepts only its user-mode half's private data."""

    UserModeDriverName = f"{__name__}:StampUmd"
    seen: list = []

    def DxgkDdiSubmitCommandVirtual(self, hAdapter, pSubmitCommandVirtual):
        args = pSubmitCommandVirtual
        StampKmd.seen.append(self.mem.read(args.pDmaBufferPrivateData, args.DmaBufferUmdPrivateDataSize))
        # Hand the reference path the record it expects: this driver's format is its own business.
        self.mem.write(args.pDmaBufferPrivateData, struct.pack("<I", self.PRIVATE_MAGIC))
        return super().DxgkDdiSubmitCommandVirtual(hAdapter, args)


def test_the_kernel_mode_driver_names_its_user_mode_half_and_the_os_passes_its_bytes_through():
    StampKmd.seen = []
    system, result, events = run(scenario(adapter("va"), [script("app", (0, "1ms", 3))]), driver=StampKmd)
    assert result.bugcheck is None
    assert isinstance(system.umd, StampUmd)
    assert StampKmd.seen == [b"STAMP!!!"] * 3


def test_a_user_mode_driver_name_that_does_not_load_is_a_clear_error():
    class Lost(ReferenceDriver):
        UserModeDriverName = "no_such_package.umd:Umd"

    with pytest.raises(AdapterStartError, match="user-mode driver 'no_such_package.umd:Umd': no module named"):
        System(scenario(adapter("va"), [script("app", (0, "1ms", 1))]), trace=ListSink(), driver=Lost)


@pytest.mark.parametrize("spec,message", [
    ("nocolon", "expected 'package.module:Class'"),
    ("wddmsim.kmd:NoSuchDriver", "wddmsim.kmd has no NoSuchDriver; the drivers it defines: ReferenceDriver"),
    ("wddmsim.kmd.driver:PRIVATE_DATA_SIZE", "PRIVATE_DATA_SIZE is a int, not a class"),
    ("no_such_package:Driver", "no module named 'no_such_package'"),
    ("missing/file.py:X", "does not exist"),
])
def test_load_class_says_what_went_wrong(spec, message):
    with pytest.raises(LoadError, match=message):
        load_class(spec, "driver")


def test_load_class_reads_a_file_and_reports_its_import_error_with_its_traceback(tmp_path):
    good = tmp_path / "mydriver.py"
    good.write_text("from wddmsim.kmd import ReferenceDriver\n\nclass Mine(ReferenceDriver):\n    pass\n")
    assert load_class(f"{good}:Mine", "driver").__name__ == "Mine"
    bad = tmp_path / "broken.py"
    bad.write_text("x = 1\nraise RuntimeError('boom at import')\n")
    with pytest.raises(LoadError) as err:
        load_class(f"{bad}:Mine", "driver")
    text = str(err.value)
    assert "loading" in text and "RuntimeError: boom at import" in text and "broken.py\", line 2" in text
    assert "loader.py" not in text and "<frozen" not in text


def test_buffers_reach_the_gpu_as_the_user_mode_driver_built_them():
    """The bytes at the buffer's address are exactly the user-mode driver's."""
    system, result, _ = run(scenario(adapter("va"), [script("app", (0, "1ms", 1))]))
    ctx = system.contexts[0]
    area = system.adapter.wddm2._areas[ctx.handle]
    built = system.umd.build(BufferRequest((Work(MS),), virtual=True, context=ctx.handle))
    assert system.gpu.memory.read(area.base, len(built.commands)) == built.commands
