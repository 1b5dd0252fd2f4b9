"""NTSTATUS values used on the submission, paging, present and recovery paths.

Spec: the return values on Microsoft's reference pages for DxgkDdiSubmitCommand,
DxgkDdiSubmitCommandVirtual, DxgkDdiRender, DxgkDdiPresent, DxgkDdiCreateContext,
DxgkDdiControlInterrupt, DxgkDdiBuildPagingBuffer, DxgkDdiSetVidPnSourceAddress and
DxgkDdiSuspendContext, and the "Context monitoring" page (monitored-fence waits: STATUS_TIMEOUT,
STATUS_CANCELLED). Values are the ones of Microsoft's ``ntstatus.h``.
"""

from __future__ import annotations

import enum


class NTSTATUS(enum.IntEnum):
    """A kernel status code, as the 32-bit value drivers return (errors have the top bit set)."""

    STATUS_SUCCESS = 0x00000000
    STATUS_TIMEOUT = 0x00000102
    STATUS_PENDING = 0x00000103
    STATUS_RETRY = 0xC000022D
    STATUS_UNSUCCESSFUL = 0xC0000001
    STATUS_NOT_IMPLEMENTED = 0xC0000002
    STATUS_INVALID_HANDLE = 0xC0000008
    STATUS_INVALID_PARAMETER = 0xC000000D
    STATUS_NO_MEMORY = 0xC0000017
    STATUS_ACCESS_DENIED = 0xC0000022
    STATUS_BUFFER_TOO_SMALL = 0xC0000023
    STATUS_ILLEGAL_INSTRUCTION = 0xC000001D
    STATUS_PRIVILEGED_INSTRUCTION = 0xC0000096
    STATUS_NOT_SUPPORTED = 0xC00000BB
    STATUS_INVALID_USER_BUFFER = 0xC00000E8
    STATUS_CANCELLED = 0xC0000120
    STATUS_DEVICE_REMOVED = 0xC00002B6
    STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER = 0xC01E0001
    STATUS_GRAPHICS_DRIVER_MISMATCH = 0xC01E0009
    STATUS_GRAPHICS_ALLOCATION_BUSY = 0xC01E0102
    STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE = 0xC01E0200
    STATUS_GRAPHICS_CANNOTCOLORCONVERT = 0xC01E0008


def nt_success(status: int) -> bool:
    """``NT_SUCCESS``: true for success and informational codes (the signed value is >= 0)."""
    return (status & 0xFFFFFFFF) < 0x80000000


def status_name(status: int) -> str:
    """The symbolic name of ``status`` if known, else its hex value."""
    status &= 0xFFFFFFFF
    try:
        return NTSTATUS(status).name
    except ValueError:
        return f"0x{status:08X}"


def parse_status(text: str) -> int:
    """A status from its name (``STATUS_NO_MEMORY``) or a number (``0xC0000017``)."""
    text = text.strip()
    if text.upper() in NTSTATUS.__members__:
        return int(NTSTATUS[text.upper()])
    return int(text, 0) & 0xFFFFFFFF
