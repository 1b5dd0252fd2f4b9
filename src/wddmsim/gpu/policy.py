"""The decisions of the GPU's own scheduler under hardware scheduling: the interface an engine's
firmware (:class:`~wddmsim.gpu.scheduler.GpuScheduler`, the mechanism: contexts, queues, slots,
context load and save, suspend, reset) consults, and :class:`BandPolicy`, the default, the band
rules Windows programs (``DxgkDdiSetupPriorityBands``, ``DxgkDdiSetContextSchedulingProperties``).

The firmware asks its policy two things:

- :meth:`GpuPolicy.pick`: which runnable context gets the engine when it is free;
- :meth:`GpuPolicy.deadline`: until when the context on the engine may keep it: the instant the
  firmware asks the engine to preempt it (None: no limit while things stay as they are). Asked at
  the end of every decision that leaves a context's ring on the engine, and when the running
  context's queue has drained (may it go on with its next queue?). A suspended context is preempted
  at once without asking.

and tells it (each method optional; ``now`` is the virtual time in ns):

- a context became runnable, or stopped being runnable (:meth:`~GpuPolicy.runnable`,
  :meth:`~GpuPolicy.unrunnable`; the one on the engine stays runnable while it has work), and
  its state became *ready*, waiting for the engine (:meth:`~GpuPolicy.waiting`);
- a context got the engine, or left it with the engine time of that turn and whether the firmware
  took it off (a preemption, a suspend, an engine reset) or it ran out of runnable work
  (:meth:`~GpuPolicy.switched_in`, :meth:`~GpuPolicy.switched_out`);
- a context's scheduling properties changed (:meth:`~GpuPolicy.changed`); the band table is about
  to change (:meth:`~GpuPolicy.configuring`);
- a decision is over (:meth:`~GpuPolicy.decided`); a timer it set with
  ``fw.set_timer(at, token)`` fired (:meth:`~GpuPolicy.timer`; a decision follows).

A policy acts through ``self.fw``, its engine's scheduler: ``fw.sim.now``, ``fw.index`` (the
engine), ``fw.grace``, ``fw.quantum``, ``fw.process_grace``, ``fw.normal_share_pct`` (the band
table the driver programmed), ``fw.preempt()`` (ask the engine to preempt the running context at
its granularity), ``fw.set_timer`` / ``fw.cancel_timer`` and ``fw.kick()`` (decide again at this
instant). A context (:class:`~wddmsim.gpu.scheduler.HwContext`) carries what the driver programmed
(``cid``, ``process``, ``band``, ``level``, ``priority``, ``quantum``, ``grace_same``,
``grace_lower``) and what the firmware knows of it (``order``: creation order, ``state``,
``suspended``, ``runnable``, ``last_run``: a stamp that grows at each switch-in, -1 never run,
``run_start``, ``busy_ns``); ``policy_data`` is the policy's own, for its record of the context.

Replacing the firmware's policy is a model extension: a real GPU's scheduler is its vendor's
firmware. :mod:`wddmsim.policies.hwprotocol` puts a researcher's policy here, checked.
"""

from __future__ import annotations

from fractions import Fraction
from heapq import heapify, heappop, heappush
from math import ceil

IDLE_BAND = 0
NORMAL_BAND = 1
FOCUS_BAND = 2
REALTIME_BAND = 3
BAND_NAMES = ("idle", "normal", "focus", "realtime")

__all__ = ["IDLE_BAND", "NORMAL_BAND", "FOCUS_BAND", "REALTIME_BAND", "BAND_NAMES", "GpuPolicy", "BandPolicy"]


class GpuPolicy:
    """What an engine's firmware consults for its decisions; the base answers nothing."""

    #: the policy's name
    name = ""

    def attach(self, fw) -> None:
        """Bound to engine ``fw.index``'s scheduler, before any context exists."""
        self.fw = fw

    # -- the two decisions ------------------------------------------------------------------------------
    def pick(self, now: int):
        """The runnable context that gets the free engine now, or None to leave it idle. Asked only
        while at least one context is runnable."""
        raise NotImplementedError

    def deadline(self, cur, now: int) -> int | None:
        """When ``cur`` (on the engine) must be preempted; None: not while things stay as they are.
        An instant at or before ``now`` preempts now."""
        return None

    # -- what the policy is told ------------------------------------------------------------------------
    def runnable(self, c, now: int) -> None:
        """``c`` has work the engine could run (a mapped queue with work, not blocked, resumed)."""

    def unrunnable(self, c, now: int) -> None:
        """``c`` has none (or was destroyed)."""

    def waiting(self, c, now: int) -> None:
        """``c``'s state became ready: it waits for the engine (DXGK_SCHEDULING_LOG_CONTEXT_STATE)."""

    def changed(self, c, before: tuple, now: int) -> None:
        """``set_context`` changed ``c``'s properties; ``before`` = (band, level, priority,
        quantum, grace_same, grace_lower) it had."""

    def configuring(self, now: int) -> None:
        """The driver is about to reprogram the band table (``fw.grace`` ... ``fw.normal_share_pct``
        still hold the old values)."""

    def switched_in(self, c, now: int) -> None:
        """``c`` got the engine."""

    def switched_out(self, c, ran_ns: int, preempted: bool, now: int) -> None:
        """``c`` left the engine after ``ran_ns`` of engine time in this turn; ``preempted``: the
        firmware took it off (a preemption, a suspend, an engine reset), else it had nothing
        runnable left (its queues drained or stalled on a WAIT)."""

    def decided(self, running, now: int) -> None:
        """A decision is over; ``running`` holds the engine (None: idle)."""

    def timer(self, token, now: int) -> None:
        """A timer set with ``fw.set_timer(at, token)`` fired."""


class _Claim:
    """BandPolicy's record of a context (``HwContext.policy_data``): the group of runnable
    contexts it is indexed in (None: not runnable) and when its claim on the engine began."""

    __slots__ = ("grp", "since")

    def __init__(self):
        self.grp: _Group | None = None
        self.since = 0


def _claim(c) -> _Claim:
    rec = c.policy_data
    if rec is None:
        rec = c.policy_data = _Claim()
    return rec


class _Group:
    """The runnable contexts of one rank (band, and realtime level in REALTIME): the index that lets
    a decision look at the few contexts that matter instead of every context.

    ``lru`` is a heap of ``(last_run, order, context)`` (rule 2's order) and ``rs`` one of
    ``(claim start, order, context)`` (rule 3's claims); both are lazy: an entry whose context has
    left the group or whose key has changed since is dropped when it reaches the top. ``procs``
    holds the members of each process (rule 2's and rule 3's in-process priorities)."""

    __slots__ = ("rank", "members", "procs", "lru", "rs")

    def __init__(self, rank: tuple[int, int]):
        self.rank = rank
        self.members: dict = {}
        self.procs: dict = {}
        self.lru: list = []
        self.rs: list = []

    def first_lru(self):
        """The member least recently run (never run first, then creation order)."""
        heap = self.lru
        while True:
            lr, _, c = heap[0]
            if c.policy_data.grp is self and c.last_run == lr:
                return c
            heappop(heap)

    def min_ready_since(self, skip=None) -> int | None:
        """The earliest claim start of a member whose process is not ``skip`` (None: any)."""
        heap = self.rs
        held = []
        found = None
        while heap:
            rs, _, c = heap[0]
            rec = c.policy_data
            if rec.grp is not self or rec.since != rs:
                heappop(heap)
                continue
            if skip is not None and c.process == skip:
                held.append(heappop(heap))
                continue
            found = rs
            break
        for item in held:
            heappush(heap, item)
        return found

    def compact(self) -> None:
        """Drop the stale entries once they outnumber the members."""
        n = len(self.members)
        if len(self.lru) > 2 * n + 16:
            self.lru = [(c.last_run, c.order, c) for c in self.members]
            heapify(self.lru)
        if len(self.rs) > 2 * n + 16:
            self.rs = [(c.policy_data.since, c.order, c) for c in self.members]
            heapify(self.rs)


def _rank(c) -> tuple[int, int]:
    return (c.band, c.level if c.band == REALTIME_BAND else 0)


class BandPolicy(GpuPolicy):
    """The band rules (rules 2 to 4 of :mod:`wddmsim.gpu.scheduler`), the default:

    2. When the engine is free: the highest band wins (REALTIME > FOCUS > NORMAL > IDLE); in
       REALTIME the highest realtime level; in the band, a context loses to a context *of its own
       process* with a higher in-process priority; among the rest, the least recently run first
       (never run first, then creation order).
    3. The running context keeps the engine until a context of a higher band has been runnable for
       that band's grace (counted from when it became ready or from when the running context
       started, whichever is later); in REALTIME a higher level, or in any band a context of the
       same process with a higher in-process priority, for the running context's ``grace_lower``;
       its quantum (from when it got the engine) has expired while an equal candidate (same band
       and level; another process, or the same process with the same in-process priority) is
       runnable, and then its ``grace_same`` (same process) or the band's process grace (another
       process) has passed.
    4. NORMAL share: while a FOCUS context runs and a NORMAL context is runnable, NORMAL earns
       credit ``elapsed * pct / (100 - pct)``. When the credit reaches the NORMAL band's process
       quantum, the FOCUS context is preempted after NORMAL's band grace and a NORMAL context
       (rule 2 inside NORMAL) gets the engine for one NORMAL process quantum, spending credit
       while it runs; FOCUS's claim (after FOCUS's band grace) counts from the end of that
       quantum. In steady state NORMAL gets exactly ``pct`` % of the engine.

    A context's claim on the engine begins when its state becomes ready, and again when its band,
    level or in-process priority changes while it is ready. Runnable contexts are indexed by rank
    (:class:`_Group`), so a decision looks at the few contexts that matter.
    """

    name = "windows"

    def attach(self, fw) -> None:
        super().attach(fw)
        self._groups: dict[tuple[int, int], _Group] = {}
        self._granted = None  # the context the last pick gave NORMAL's share quantum
        self._grant = False  # the running NORMAL context is on its share quantum
        self._grant_end = 0
        self._credit = Fraction(0)  # NORMAL share credit, ns
        self._share_due: int | None = None  # when the credit reached the NORMAL quantum
        self._acct_at = fw.sim.now
        self._accruing = False
        self._spending = False

    # -- the index of runnable contexts ------------------------------------------------------------
    def runnable(self, c, now: int) -> None:
        self._join(c, _claim(c))

    def unrunnable(self, c, now: int) -> None:
        self._leave(c)

    def _join(self, c, rec: _Claim) -> None:
        rank = _rank(c)
        g = self._groups.get(rank)
        if g is None:
            g = self._groups[rank] = _Group(rank)
        rec.grp = g
        g.members[c] = None
        g.procs.setdefault(c.process, {})[c] = None
        heappush(g.lru, (c.last_run, c.order, c))
        heappush(g.rs, (rec.since, c.order, c))

    def _leave(self, c) -> None:
        rec = c.policy_data
        g = None if rec is None else rec.grp
        if g is None:
            return
        rec.grp = None
        del g.members[c]
        mates = g.procs[c.process]
        del mates[c]
        if not mates:
            del g.procs[c.process]
        if not g.members:
            del self._groups[g.rank]
        else:
            g.compact()

    def waiting(self, c, now: int) -> None:
        rec = _claim(c)
        rec.since = now
        if rec.grp is not None:
            heappush(rec.grp.rs, (now, c.order, c))

    def changed(self, c, before: tuple, now: int) -> None:
        rec = _claim(c)
        if before[:3] != (c.band, c.level, c.priority) and c.state == "ready":
            rec.since = now  # a new claim on the engine starts now
            if rec.grp is not None:
                heappush(rec.grp.rs, (now, c.order, c))
        if rec.grp is not None and rec.grp.rank != _rank(c):
            self._leave(c)
            self._join(c, rec)

    # -- rule 2 -------------------------------------------------------------------------------------------
    def pick(self, now: int):
        """Rule 2 (and rule 4's NORMAL turn) among the runnable contexts."""
        self._account(now)
        groups = self._groups
        if not groups:
            return None
        fw = self.fw
        top = max(groups)
        grant = False
        g = groups[top]
        if top[0] == FOCUS_BAND and fw.normal_share_pct and self._credit >= fw.quantum[NORMAL_BAND]:
            normals = groups.get((NORMAL_BAND, 0))
            if normals is not None:
                g, grant = normals, True
        c = g.first_lru()
        mates = g.procs[c.process]
        if not (len(mates) == 1 or c.priority == max(x.priority for x in mates)):
            # Several contexts of one process in the rank, the least recently run not its highest
            # priority: rule 2 in full over the group.
            best: dict = {}
            for x in g.members:
                p = best.get(x.process)
                if p is None or x.priority > p:
                    best[x.process] = x.priority
            c = min((x for x in g.members if x.priority == best[x.process]), key=lambda x: (x.last_run, x.order))
        self._granted = c if grant else None
        return c

    # -- rules 3 and 4 ------------------------------------------------------------------------------------
    def deadline(self, cur, now: int) -> int | None:
        """Rule 3 over the runnable contexts, a group at a time: in a group the earliest claim gives
        the earliest deadline, as every deadline grows with it; and rule 4's turn for NORMAL."""
        self._account(now)
        fw = self.fw
        best = None
        start = cur.run_start
        band = cur.band
        for rank, g in self._groups.items():
            b = rank[0]
            if b < band:
                continue
            if b > band:
                rs = g.min_ready_since()
                since = self._grant_end if (self._grant and b == FOCUS_BAND) else start
                d = max(rs, since) + fw.grace[b]
            elif band == REALTIME_BAND and rank[1] != cur.level:
                if rank[1] < cur.level:
                    continue
                d = max(g.min_ready_since(), start) + cur.grace_lower
            else:
                quantum = cur.quantum if cur.quantum is not None else fw.quantum[band]
                rs = g.min_ready_since(cur.process)
                d = None if rs is None else max(rs, start + quantum) + fw.process_grace[band]
                for c in g.procs.get(cur.process, ()):
                    if c is cur:
                        continue
                    if c.priority != cur.priority:
                        if c.priority < cur.priority:
                            continue
                        e = max(c.policy_data.since, start) + cur.grace_lower
                    else:
                        e = max(c.policy_data.since, start + quantum) + cur.grace_same
                    if d is None or e < d:
                        d = e
                if d is None:
                    continue
            if best is None or d < best:
                best = d
        pct = fw.normal_share_pct
        if band == FOCUS_BAND and pct and (NORMAL_BAND, 0) in self._groups:
            q = fw.quantum[NORMAL_BAND]
            if self._credit >= q:
                if self._share_due is None:
                    self._share_due = now
                due = self._share_due
            else:
                due = now + ceil((q - self._credit) * (100 - pct) / pct)
            d = max(due, start) + fw.grace[NORMAL_BAND]
            if best is None or d < best:
                best = d
        return best

    # -- the engine's turns and the NORMAL share account ---------------------------------------------------
    def switched_in(self, c, now: int) -> None:
        self._account(now)
        rec = c.policy_data
        if rec is not None and rec.grp is not None:
            heappush(rec.grp.lru, (c.last_run, c.order, c))
        grant = self._granted is c
        self._granted = None
        self._grant = grant
        self._grant_end = now + self.fw.quantum[NORMAL_BAND] if grant else 0

    def switched_out(self, c, ran_ns: int, preempted: bool, now: int) -> None:
        self._account(now)
        self._grant = False
        self._accruing = self._spending = False

    def decided(self, running, now: int) -> None:
        self._account(now)
        fw = self.fw
        if running is not None and running.band == FOCUS_BAND and fw.normal_share_pct and not self._grant:
            self._accruing = (NORMAL_BAND, 0) in self._groups
        else:
            self._accruing = False
        self._spending = self._grant and running is not None

    def configuring(self, now: int) -> None:
        self._account(now)
        self._share_due = None

    def _account(self, now: int) -> None:
        """NORMAL share credit for the time since the last account (the state of the account, FOCUS
        running with NORMAL waiting or NORMAL on its share, holds from one decision to the next)."""
        start = self._acct_at
        if now <= start:
            return
        self._acct_at = now
        dt = now - start
        if self._accruing:
            fw = self.fw
            pct = fw.normal_share_pct
            q = fw.quantum[NORMAL_BAND]
            before = self._credit
            self._credit = before + Fraction(dt * pct, 100 - pct)
            if before < q <= self._credit:
                self._share_due = start + ceil((q - before) * (100 - pct) / pct)
        elif self._spending:
            self._credit -= dt
            if self._credit < self.fw.quantum[NORMAL_BAND]:
                self._share_due = None
