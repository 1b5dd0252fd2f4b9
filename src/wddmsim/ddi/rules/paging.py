"""Rules on building paging buffers: ``DXGKARG_BUILDPAGINGBUFFER`` (rule 68,
BuildPagingBufferStatus: ``wddmsim rules 68``, docs/rules.md).

Spec: Microsoft's DxgkDdiBuildPagingBuffer page (its three statuses; anything else is a critical
failure).
"""

from __future__ import annotations

from ..ntstatus import NTSTATUS
from .core import Facts, rule, u32

BUILD = "DXGKARG_BUILDPAGINGBUFFER"

_ALLOWED = {
    u32(int(NTSTATUS.STATUS_SUCCESS)),
    u32(int(NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY)),
    u32(int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)),
}


@rule(68, "BuildPagingBufferStatus", structs=(BUILD,))
def build_paging_status(obj, facts: Facts):
    """DxgkDdiBuildPagingBuffer returns only STATUS_SUCCESS, STATUS_GRAPHICS_ALLOCATION_BUSY or
    STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER.

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None or u32(status) in _ALLOWED:
        return None
    return [f"DxgkDdiBuildPagingBuffer returned 0x{u32(status):08X} but may return only STATUS_SUCCESS, "
            f"STATUS_GRAPHICS_ALLOCATION_BUSY or STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"]
