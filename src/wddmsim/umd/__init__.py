"""User-mode display drivers: the half of a driver pair that builds command buffers.

:mod:`.interface` defines what the runtime asks a user-mode driver and what it answers;
:class:`ReferenceUmd` is the reference driver's user-mode half. The OS never imports this package:
the runtime (:mod:`wddmsim.workloads.runtime`) calls the user-mode driver and hands the kernel
the bytes it built.
"""

from .interface import (
    BufferRequest,
    CommandBuffer,
    Copy,
    FenceValue,
    Fill,
    NativeFenceValue,
    Target,
    Timestamp,
    UmdAdapterInfo,
    UserModeDriver,
    Work,
    Write,
)
from .reference import ReferenceUmd

__all__ = [
    "BufferRequest", "CommandBuffer", "Copy", "FenceValue", "Fill", "NativeFenceValue", "ReferenceUmd", "Target", "Timestamp",
    "UmdAdapterInfo", "UserModeDriver", "Work", "Write",
]
