"""Timeout detection and recovery (TDR) for the packet scheduler, :class:`Tdr` (hardware
scheduling's is :mod:`.hwtdr`), after Microsoft's pages "Timeout detection and recovery (TDR)",
"TDR registry keys", "TDR changes in Windows 8" and "Thread synchronization and TDR".

This module holds the TDR registry values the model honours (:class:`TdrConfig`), each node's TDR
state (:class:`NodeTdr`), the TDR limits and the live dumps, and the recovery calls' plumbing; each
other job is a mixin class in a module of its own, which :class:`Tdr` combines:

- :mod:`.tdr_detect`: detection (the watchdog, ``DxgkDdiQueryCurrentFence``, the preemption
  deadline) and the choice of recovery, or the bug check of ``TdrLevel`` 1;
- :mod:`.tdr_faults`: GPU page faults (``DXGK_INTERRUPT_DMA_PAGE_FAULTED``);
- :mod:`.tdr_engine`: the per-engine reset and its dependent engines;
- :mod:`.tdr_adapterreset`: the adapter-wide reset;
- :mod:`.tdr_recovery`: what a reset does to the packets and devices it hits.

The limits ("TDR registry keys"): each timeout is counted; more than ``TdrLimitCount`` adapter
timeouts within ``TdrLimitTime`` is bug check 0x116 VIDEO_TDR_FAILURE, else an adapter timeout is a
0x117 live dump (P4 9 when an engine timeout was promoted to it). A recovery entry point that may
not fail (``DxgkDdiResetFromTimeout``, ``DxgkDdiRestartFromTimeout``) is bug check 0x116 when it
does.

Not modelled: TdrDdiDelay (no driver thread blocks in this model; a driver call that never returns is
stopped by the host-time DDI watchdog, :mod:`.watchdog`), DxgkDdiCollectDbgInfo, and VidMm's
eviction during the adapter reset (with the paging work).

Microsoft's pages: "Timeout detection and recovery (TDR)", "TDR registry keys", "TDR changes in
Windows 8", "Thread synchronization and TDR", DxgkDdiResetEngine, DxgkDdiQueryDependentEngineGroup,
DxgkDdiQueryEngineStatus, bug checks 0x116, 0x117, 0x119 (P1 0xA), 0x141 and 0x142.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ddi import layout
from ..ddi.bugcheck import BugCheck, BugCheckCode
from ..ddi.ntstatus import NTSTATUS
from ..ddi import rules as R
from ..ddi.registry import RECORDS
from .crash import BugCheckStop, CrashRecord
from .tdr_detect import TdrDetection
from .tdr_faults import (  # noqa: F401  (re-exported: the fault flags' names, once defined here)
    _ADAPTER_RESET_REQUIRED,
    _ENGINE_RESET_REQUIRED,
    _FENCE_INVALID,
    NOTIFY,
    TdrFaults,
)
from .tdr_engine import DEPENDENT_PREEMPT_WAIT, TdrEngineReset  # noqa: F401  (DEPENDENT_PREEMPT_WAIT: re-exported)
from .tdr_adapterreset import FLAG_PAGING, TdrAdapterReset  # noqa: F401  (FLAG_PAGING: re-exported)
from .tdr_recovery import TdrRecovery

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
S = 1_000_000_000


@dataclass
class TdrConfig:
    """The TDR registry values the model honours (GraphicsDrivers key), times in ns."""

    level: int = 3
    delay: int = 2 * S
    watchdog: int = 2 * S
    limit_count: int = 5
    limit_time: int = 60 * S


class NodeTdr:
    """One node's TDR timers and reset state."""

    __slots__ = ("watch", "timer", "resetting", "held_for", "group")

    def __init__(self):
        self.watch = None  # watchdog timer (one per node, re-armed lazily)
        self.timer = None  # TdrDelay timer of the outstanding preemption request
        self.resetting = False  # interrupts from the node are ignored
        self.held_for = None  # the node whose reset waits for this dependent one to be preempted
        self.group = None  # this node's reset waiting on its dependents: (running, timeout, mask, busy, timer)


class Tdr(TdrDetection, TdrFaults, TdrEngineReset, TdrAdapterReset, TdrRecovery):
    """Detection and recovery for one adapter's :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (its jobs'
    mixins: see the module doc)."""

    def __init__(self, vidsch, config: TdrConfig):
        self.vs = vidsch
        self.sim = vidsch.sim
        self.config = config
        adapter = vidsch.adapter
        self.adapter = adapter
        self.per_engine = bool(getattr(adapter.caps, "SupportPerEngineTDR", False))
        self.adapter_timeouts: list[int] = []
        self.engine_timeouts: list[int] = []
        self.engine_resets = 0
        self.adapter_resets = 0
        self.live_dumps: list[tuple[int, int, int]] = []  # (t, code, p4)
        self.devices_in_error: list = []
        self.paging_hit = False  # the engine reset in progress aborted a paging packet
        self._reset_cls = None
        self._group_cls = None
        self._status_cls = None
        if adapter.version.value >= 0x300E:  # the WIN8 structures exist
            self._reset_cls = layout.ctype(RECORDS["DXGKARG_RESETENGINE"], adapter.arch, adapter.version)
            self._group_cls = layout.ctype(RECORDS["DXGKARG_QUERYDEPENDENTENGINEGROUP"], adapter.arch, adapter.version)
            self._status_cls = layout.ctype(RECORDS["DXGKARG_QUERYENGINESTATUS"], adapter.arch, adapter.version)
        self._fence_args = layout.ctype(RECORDS["DXGKARG_QUERYCURRENTFENCE"], adapter.arch, adapter.version)()
        self.address = adapter.pool.alloc(4096)  # where the recovery arguments live (bug check P3)
        for node_queue in vidsch.nodes:
            node_queue.tdr = NodeTdr()

    # -- limits, live dumps and the recovery calls ------------------------------------------------------
    def count_timeout(self, times: list[int]) -> int:
        """Record a timeout now in ``times`` (``engine_timeouts`` or ``adapter_timeouts``); how many
        fall within TdrLimitTime."""
        now = self.sim.now
        times.append(now)
        while times and times[0] <= now - self.config.limit_time:
            times.pop(0)
        return len(times)

    def live_dump(self, code: BugCheckCode, p4: int = 0) -> None:
        """A live kernel dump Windows would write (0x117, 0x141, 0x142): recorded and logged."""
        self.live_dumps.append((self.sim.now, int(code), p4))
        self._emit("LiveDump", {"code": int(code), "name": code.name, "p4": p4})

    def _call(self, name: str, args=None, facts=None) -> int:
        """A recovery entry point at PASSIVE_LEVEL, through the gateway: its status for the caller to
        act on (a failure promotes the reset). With ``facts`` the verifier judges what the driver
        answered in ``args`` after the call (rules 115 and 117)."""
        if args is None:
            return self.adapter.ddi.call(name, self.adapter.hAdapter)
        return self.adapter.ddi.call(name, self.adapter.hAdapter, args, facts=facts, judge="after",
                                     address=self.address)

    def _facts(self, node_queue) -> R.Facts:
        """What the OS knows around a recovery call on ``node_queue``: its fences, the node count."""
        adapter = self.adapter
        return R.Facts(version=adapter.version, multi_engine_aware=adapter.multi_engine_aware, node_count=len(self.vs.nodes),
                       last_completed_fence=node_queue.last_completed, last_submitted_fence=node_queue.last_submitted)

    def adapter_timeout(self, promoted: bool) -> None:
        """An adapter-wide reset for a timeout: counted (more than TdrLimitCount within TdrLimitTime
        is bug check 0x116), then the 0x117 live dump (P4 9 when promoted from an engine timeout)."""
        count = self.count_timeout(self.adapter_timeouts)
        if count > self.config.limit_count:
            bc = BugCheck(BugCheckCode.VIDEO_TDR_FAILURE, 0, 0, 0, count)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc,
                message=(f"{count} GPU timeouts within {self.config.limit_time / S:g} s: more than TdrLimitCount "
                         f"({self.config.limit_count})"),
                struct="", arch=self.adapter.arch, ddi_version=self.adapter.version.name, address=0, data=b"",
            ))
        self.live_dump(BugCheckCode.VIDEO_TDR_TIMEOUT_DETECTED, 9 if promoted else 0)

    def must_succeed(self, name: str) -> None:
        """A recovery entry point that may not fail: any other status is bug check 0x116."""
        self.adapter.ddi.call(name, self.adapter.hAdapter, bugcheck=lambda status: BugCheck(
            BugCheckCode.VIDEO_TDR_FAILURE, 0, 0, status & 0xFFFFFFFF, 0))

    def _emit(self, name: str, fields: dict) -> None:
        if self.vs.trace is not None:
            self.vs.trace.emit(self.sim.now, name, fields)
