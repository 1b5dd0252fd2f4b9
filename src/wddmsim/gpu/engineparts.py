"""The engine's fault exception and preemption state, kept in a module of their own.

:mod:`.engine` is compiled by mypyc where a compiler is present (see ``wddmsim._native``); these
two classes stay interpreted Python in every build: :class:`EngineFault` is subclassed by
interpreted code (:class:`~wddmsim.gpu.mmu.PageFault`), which a compiled class would forbid, and
:class:`PreemptState` subclasses ``tuple``, which a compiled class cannot. :mod:`.engine`
re-exports both.
"""

from __future__ import annotations

__all__ = ["EngineFault", "PreemptState"]


class EngineFault(Exception):
    """The command processor met something it cannot execute; the engine stops."""


class PreemptState(tuple):
    """:attr:`Engine.preempt_state`: the plain 4-tuple (buffer address or None, offset of the next
    command, buffer end, ns of WORK still owed) it always was, equal to and unpacked like one, with
    ``address_space``: the engine's address-space register when it stopped (0: physical), the
    address space the resumed buffer's addresses belong to."""

    address_space = 0

    def __new__(cls, saved, address_space: int = 0):
        self = tuple.__new__(cls, saved)
        if address_space:
            self.address_space = address_space
        return self
