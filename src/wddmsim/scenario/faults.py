"""Faults a scenario injects (``[[fault]]``) and the OS's timeout detection and recovery that
answers them (``[tdr]``).

A fault hangs an engine, makes it fault on an unmapped address, makes a driver entry point fail
with an NTSTATUS, or raises a storm of interrupts no engine owns; :class:`Fault` checks that a
fault has the fields of its kind. :class:`Tdr` holds the GraphicsDrivers registry values the model
honours (TdrLevel, TdrDelay, TdrLimitCount, TdrLimitTime). Whether a fault names a node or context
that exists, and how many interrupts a storm raises within the run, is checked with the whole
scenario (:mod:`.consistency`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from wddmsim.ddi.ntstatus import NTSTATUS

from .bounds import MAX_COUNT, MAX_DURATION, MIN_STORM_INTERVAL
from .fields import Duration, Period, ScenarioModel, int_in, ns, time_in

__all__ = ["FAULTABLE_DDIS", "Fault", "Tdr"]


class Tdr(ScenarioModel):
    """Timeout detection and recovery: the GraphicsDrivers registry values the model honours."""

    #: TdrLevel: 0 no detection, 1 bug check 0x116 on a timeout (no recovery), 3 recover
    level: Literal[0, 1, 3] = 3
    #: TdrDelay: how long a preemption request may go unanswered
    delay: Period = ns("2s")
    #: how long a packet may run before the scheduler asks to preempt it (the model's choice)
    watchdog: Period = ns("2s")
    #: TdrLimitCount and TdrLimitTime: more adapter timeouts than this within the window is
    #: bug check 0x116
    limit_count: int_in(0, 1_000_000, "TdrLimitCount: timeouts within limit_time, the model's limit") = 5
    limit_time: Period = ns("60s")


#: Driver entry points a ``ddi_error`` fault can make fail.
FAULTABLE_DDIS = (
    "DxgkDdiRender", "DxgkDdiPresent", "DxgkDdiPatch", "DxgkDdiSubmitCommand", "DxgkDdiPreemptCommand",
    "DxgkDdiCancelCommand", "DxgkDdiBuildPagingBuffer",
    "DxgkDdiQueryDependentEngineGroup", "DxgkDdiResetEngine", "DxgkDdiResetFromTimeout",
    "DxgkDdiRestartFromTimeout",
)


class Fault(ScenarioModel):
    """A fault injected into the run.

    - ``hang``: an engine stops making progress, at time ``at`` on ``node``, or when it starts the
      ``packet``-th packet of ``process``/``context``.
    - ``page_fault``: the engine faults on an unmapped address when it starts that packet
      (``fatal``: the hardware reports an unrecoverable error).
    - ``ddi_error``: the ``call``-th call of driver entry point ``ddi`` returns ``status``.
    - ``interrupt_storm``: from ``at`` for ``duration`` the GPU raises an interrupt no engine owns
      every ``interval``.
    """

    kind: Literal["hang", "page_fault", "ddi_error", "interrupt_storm"]
    node: str | None = None
    at: Duration | None = None
    process: str | None = None
    context: str | None = None
    packet: int_in(1, MAX_COUNT, "the context's n-th packet, from 1") | None = None
    fatal: bool = False
    ddi: str | None = None
    call: int_in(1, MAX_COUNT, "the entry point's n-th call, from 1") = 1
    status: str = "STATUS_UNSUCCESSFUL"
    duration: Period | None = None
    interval: time_in(MIN_STORM_INTERVAL, MAX_DURATION, "the gap between a storm's interrupts: 1us at least, the "
                                                      "model's floor; each interrupt costs the CPU an ISR and a "
                                                      "DPC of about 1us each (adapter.cpu_cost), so a finer storm "
                                                      "only piles up work the CPU never catches up with") | None = None

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Fault:
        by_time = self.node is not None or self.at is not None
        by_packet = self.process is not None or self.context is not None or self.packet is not None
        packet_complete = None not in (self.process, self.context, self.packet)
        kind = self.kind
        if kind == "hang":
            if by_time == by_packet or (by_time and (self.node is None or self.at is None)) or \
                    (by_packet and not packet_complete):
                raise ValueError("a hang names either node and at, or process, context and packet")
        elif kind == "page_fault":
            if not packet_complete or by_time:
                raise ValueError("a page_fault names process, context and packet")
        elif kind == "ddi_error":
            if self.ddi not in FAULTABLE_DDIS:
                raise ValueError(f"ddi must be one of {', '.join(FAULTABLE_DDIS)}, got {self.ddi!r}")
            if self.status not in NTSTATUS.__members__ or NTSTATUS[self.status] == 0:
                raise ValueError(f"status must name an NTSTATUS error, got {self.status!r}")
        elif kind == "interrupt_storm":
            if self.at is None or self.duration is None or self.interval is None:
                raise ValueError("an interrupt_storm needs at, duration and interval")
        return self
