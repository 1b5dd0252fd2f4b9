"""VSync interrupt control: when the OS has the display's vsync interrupt on, and who waits on it.

Windows turns the ``DXGK_INTERRUPT_CRTC_VSYNC`` interrupt on and off with
``DxgkDdiControlInterrupt(hAdapter, DXGK_INTERRUPT_CRTC_VSYNC, TRUE/FALSE)`` (PASSIVE_LEVEL; the OS
never passes another type). Enabled, the driver reports ``CRTC_VSYNC`` at every vertical retrace
with the address then scanned out; disabled, it need not. Since Vista SP1 a driver that declares
``DXGK_VIDSCHCAPS.VSyncPowerSaveAware`` lets the OS turn the interrupt off while nothing on screen
changes, "after 10 consecutive VSync periods" with no screen update, and back on when there is
something to show; without it the OS never turns it off for the applications that need it.

The policy the model follows (:class:`VsyncControl`):

- at adapter start the interrupt is off: nothing needs it yet;
- it goes on (``TRUE``) when a flip that waits for a vsync (``FlipInterval`` 1..4) is presented, or
  a thread waits for a vertical blank (``D3DKMTWaitForVerticalBlankEvent``, :meth:`VsyncControl.wait`);
  the call is made from the thread that presents or waits, at PASSIVE_LEVEL;
- a reported ``CRTC_VSYNC`` is idle when it showed no flip, no flip is pending on any VidPn source,
  no blt or composed present waits for its vsync, and nobody waits for a vertical blank; after :data:`VSYNC_IDLE_TIMEOUT` consecutive idle vsyncs on every source,
  the OS turns the interrupt off (``FALSE``) from a worker thread (PASSIVE_LEVEL), for a
  ``VSyncPowerSaveAware`` driver only;
- an immediate flip (interval 0) waits for no vsync and turns nothing on; blt and composed
  presents are shown at the vsync the OS computes from the mode it set, and turn nothing on.

Off, nothing is scheduled: an idle display costs no events.

Rule 48, VsyncReportedWhileEnabled (``wddmsim rules 48``, docs/rules.md): while the OS has the
interrupt on, the driver reports CRTC_VSYNC at every vsync of every source, except a source whose
hardware flip queue has an interrupt target PresentId other than 0 (DxgkDdiSetInterruptTargetPresentId,
WDDM 3.0: Microsoft's "Hardware flip queue" page lets the driver interrupt only from that flip on). The OS knows each
source's refresh period (the mode it set); a source with no report for more than
:data:`LATE_PERIODS` periods while the interrupt was on (a report may come one period late, in a
later ISR pass) breaks the rule. Windows has no stop of its own for it (its vertical-blank waiters
simply hang): the verifier reports it (0xC4, parameter 1 = 48). The watch costs one timer per
:data:`LATE_PERIODS` periods while on, none while off.

Microsoft's pages: d3dkmddi/nc-d3dkmddi-dxgkddi_controlinterrupt, d3dkmddi/ns-d3dkmddi-_dxgk_vidschcaps
(VSyncPowerSaveAware), windows-hardware/drivers/display/saving-energy-with-vsync-control
(https://learn.microsoft.com/).
"""

from __future__ import annotations

from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.ntstatus import status_name
from ..sim import PASSIVE

#: Consecutive idle vsyncs after which a VSyncPowerSaveAware driver's vsync interrupt goes off (the
#: default of Windows' VsyncIdleTimeout: 10 periods, 160 ms at 60 Hz).
VSYNC_IDLE_TIMEOUT = 10

#: Refresh periods a source may go without a CRTC_VSYNC report while the interrupt is on (rule 48).
LATE_PERIODS = 2

_CRTC_VSYNC = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC)


class VsyncControl:
    """The OS's vsync interrupt state for one adapter (see the module doc)."""

    __slots__ = ("adapter", "sim", "enabled", "power_save", "idle", "waiters", "enables", "disables",
                 "_off_queued", "_on_queued", "periods", "last", "since", "watched", "_watch", "quiet")

    def __init__(self, adapter, sources: int):
        self.adapter = adapter
        self.sim = adapter.sim
        #: what the OS last asked with DxgkDdiControlInterrupt
        self.enabled = False
        #: DXGK_VIDSCHCAPS.VSyncPowerSaveAware: the OS may turn it off again
        self.power_save = adapter.caps.VSyncPowerSaveAware
        #: consecutive idle CRTC_VSYNC reports, per VidPn source
        self.idle = [0] * sources
        #: per source, the events of threads waiting for its next vertical blank
        self.waiters: list[list] = [[] for _ in range(sources)]
        self.enables = 0
        self.disables = 0
        self._off_queued = False
        self._on_queued = False
        #: each source's refresh period (ns), from the mode the OS set
        self.periods = [round(1e9 / hz) for hz in adapter.display_refresh]
        #: per source, the last CRTC_VSYNC report (or the turn-on) while on
        self.last = [0] * sources
        #: when the interrupt was last turned on
        self.since = 0
        #: rule 48 was judged (the interrupt was on for a while)
        self.watched = False
        #: sources whose hardware flip queue interrupt target (DxgkDdiSetInterruptTargetPresentId, not 0)
        #: says when the driver interrupts, instead of every vsync (dxgkrnl/hwflipqueue.py)
        self.quiet: set[int] = set()
        self._watch = None

    # -- turning it on ----------------------------------------------------------------------------------
    def needed(self, reason: str) -> None:
        """Something needs vsync reports (``reason``: "flip" or "vblank"): on, if it is off. From a
        thread at PASSIVE_LEVEL the call is made at once; from elsewhere a worker makes it."""
        idle = self.idle
        for i in range(len(idle)):
            idle[i] = 0
        if self.enabled:
            return
        if self.sim.irql == PASSIVE:
            self._control(True, reason)
        elif not self._on_queued:
            self._on_queued = True
            self.sim.soon(self._on_worker, reason, irql=PASSIVE)

    def _on_worker(self, reason: str) -> None:
        self._on_queued = False
        if not self.enabled:
            self._control(True, reason)

    def wait(self, source: int):
        """D3DKMTWaitForVerticalBlankEvent: an event that triggers at ``source``'s next reported
        CRTC_VSYNC (turning the interrupt on if it is off)."""
        ev = self.sim.event()
        self.waiters[source].append(ev)
        self.needed("vblank")
        hwflips = getattr(self.adapter, "hwflips", None)
        if hwflips is not None:
            hwflips.vblank_wanted(source)  # its interrupt target goes to 0: every vsync
        return ev

    # -- what the driver reported -------------------------------------------------------------------------
    def reported(self, source: int, busy: bool) -> None:
        """A CRTC_VSYNC of ``source`` was processed (device IRQL; ``busy``: it showed a flip, or
        something waits to be shown): wake its vblank waiters, count idle vsyncs, and queue the
        turn-off when every source has been idle long enough."""
        if not 0 <= source < len(self.idle):
            return
        self.last[source] = self.sim.now
        waiting = self.waiters[source]
        if waiting:
            self.waiters[source] = []
            now = self.sim.now
            for ev in waiting:
                ev.succeed(now)
        if busy or any(self.waiters):
            self.idle[source] = 0
            return
        self.idle[source] += 1
        if (self.enabled and self.power_save and not self._off_queued
                and min(self.idle) >= VSYNC_IDLE_TIMEOUT):
            self._off_queued = True
            self.sim.soon(self._off_worker, irql=PASSIVE)

    def _off_worker(self) -> None:
        self._off_queued = False
        if self.enabled and min(self.idle) >= VSYNC_IDLE_TIMEOUT and not any(self.waiters):
            self._control(False, "idle")

    # -- rule 48: reports keep coming while it is on ---------------------------------------------------------
    def _arm(self) -> None:
        due = min(last + LATE_PERIODS * period for last, period in zip(self.last, self.periods)) + 1
        self._watch = self.sim.at(due, self._check, irql=PASSIVE)

    def _check(self) -> None:
        """At PASSIVE_LEVEL, after the instant's ISRs: a source silent for more than LATE_PERIODS
        periods while on breaks rule 48; otherwise watch again from the latest reports."""
        self._watch = None
        if not self.enabled:
            return
        self.watched = True
        now = self.sim.now
        for source, (last, period) in enumerate(zip(self.last, self.periods)):
            if source in self.quiet:
                self.last[source] = now  # the hardware flip queue's interrupt target decides
                continue
            if now - last > LATE_PERIODS * period:
                self.last[source] = now  # judged once per silence
                verifier = self.adapter.verifier
                if verifier.mode != "off":
                    from ..ddi import rules as R

                    verifier.handle([R.Violation(48, "VsyncReportedWhileEnabled", (
                        f"the OS has had DXGK_INTERRUPT_CRTC_VSYNC enabled (DxgkDdiControlInterrupt) since "
                        f"{self.since} ns, but no CRTC_VSYNC was reported for VidPn source {source} from {last} to "
                        f"{now} ns, more than {LATE_PERIODS} refresh periods ({LATE_PERIODS * period} ns): while "
                        f"the interrupt is enabled the driver reports every vsync"))], None, None, 0)
        self._arm()

    # -- the call ----------------------------------------------------------------------------------------
    def _control(self, enable: bool, reason: str) -> None:
        adapter = self.adapter
        status = adapter.ddi.call("DxgkDdiControlInterrupt", adapter.hAdapter, _CRTC_VSYNC, enable,
                             log_args={"InterruptType": "DXGK_INTERRUPT_CRTC_VSYNC", "EnableInterrupt": int(enable)})
        # Whatever the status, the OS's state is what it asked for (the contract's decision).
        self.enabled = enable
        now = self.sim.now
        if enable:
            self.enables += 1
            self.since = now
            self.last = [now] * len(self.last)
            self._arm()
        else:
            self.disables += 1
            if self._watch is not None:
                self._watch.cancel()
                self._watch = None
        if adapter.trace is not None:
            adapter.trace.emit(self.sim.now, "VSyncControl", {"enabled": int(enable), "reason": reason,
                                                        "status": status_name(status)})
