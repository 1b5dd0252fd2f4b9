"""Deadlines: a context's jobs, when each finished against its deadline (the summary's
``deadline_misses``, ``jobs`` and ``tardiness_*``).

A *job* is the packets of a context that share a release time (``Packet.release``): a frame of a
``frame_loop`` (its start, :meth:`wddmsim.workloads.runtime.Runtime.release`), else each packet on
its own, released when it was queued. Its *absolute deadline* is its release plus the context's
relative deadline (:attr:`wddmsim.dxgkrnl.hints.SchedulingHints.relative_deadline`) in force when
the job was released (``Context.job_deadline``, recorded at the release; a packet that is its own
job takes the hint in force when it was queued). A job without a deadline is not tracked.

A job is open while packets may still join it (until the context's next release) and finished
when it is closed and every packet of it has completed: its *finish* is when its last packet
completed (``Packet.done``, the ISR that reported its fence), its *tardiness* ``max(0, finish -
deadline)``, a *miss* when that is above 0. At the end of a run (:meth:`ContextJobs.figures`) a job
whose packets have all completed counts as finished (a packet completed by the ISR whose DPC has
not run yet included); one still unfinished whose deadline has passed counts as missed with
tardiness ``end - deadline``; one whose deadline has not passed is not counted. A job with a packet
that never completes, cancelled (its device went to error, the adapter stopped) or aborted by a
reset, is not judged: it is neither met nor missed (the summary's ``cancelled`` and ``aborted``
count those packets).

Memory grows with the jobs not yet judged, not with the jobs run: tardiness goes into a
four-significant-digit histogram (:class:`~wddmsim.dxgkrnl.stats.LatencyStats`).

A model measure: Windows has no deadline (:mod:`wddmsim.dxgkrnl.hints`).
"""

from __future__ import annotations

from collections import deque

from .stats import LatencyStats


class Job:
    """One job: release, absolute deadline, packets not completed yet, finish so far, whether
    packets may still join it, whether one of them will never complete."""

    __slots__ = ("release", "deadline", "left", "finish", "closed", "dropped")

    def __init__(self, release: int, deadline: int):
        self.release = release
        self.deadline = deadline
        self.left = 0
        self.finish = -1
        self.closed = False
        self.dropped = False


class ContextJobs:
    """One context's jobs with a deadline: the judged ones' tardiness and misses, the rest pending."""

    __slots__ = ("current", "pending", "tardiness", "misses")

    def __init__(self):
        self.current: Job | None = None  # the open job (packets may still join it)
        self.pending: deque[Job] = deque()  # jobs not judged yet, in release order
        self.tardiness = LatencyStats()
        self.misses = 0

    # -- what the scheduler tells it ------------------------------------------------------------
    def queued(self, packet, own: bool, relative: int | None) -> None:
        """``packet`` entered its context's software queue: it joins the open job if it shares its
        release, else it starts a job (``own``: each packet is a job of its own) with the relative
        deadline ``relative`` (None: the job has none and is not tracked)."""
        cur = self.current
        if cur is not None and (own or cur.release != packet.release):
            self.current = None
            cur.closed = True
            if not cur.left:
                self._judge(cur)
            cur = None
        if cur is None:
            if relative is None:
                packet.job = None
                return
            cur = Job(packet.release, packet.release + relative)
            self.pending.append(cur)
            if own:
                cur.closed = True
            else:
                self.current = cur
        cur.left += 1
        packet.job = cur

    def completed(self, packet) -> None:
        """``packet`` (of a tracked job) was retired; it completed at ``packet.done``."""
        job = packet.job
        packet.job = None
        job.left -= 1
        if packet.done > job.finish:
            job.finish = packet.done
        if not job.left and job.closed:
            self._judge(job)

    def dropped(self, packet) -> None:
        """``packet`` (of a tracked job) will never complete (cancelled or aborted)."""
        job = packet.job
        packet.job = None
        job.left -= 1
        job.dropped = True
        if not job.left and job.closed:
            self._judge(job)

    def _judge(self, job: Job) -> None:
        self.pending.remove(job)
        if job.dropped:
            return
        late = job.finish - job.deadline
        if late > 0:
            self.misses += 1
            self.tardiness.add(late)
        else:
            self.tardiness.add(0)

    # -- the summary ------------------------------------------------------------------------------
    def figures(self, now: int, done: dict) -> tuple[int, LatencyStats]:
        """``(misses, tardiness)`` at the end of a run at ``now``: the judged jobs and, without
        changing anything, the pending ones as the module doc says. ``done``: job -> (packets of it
        completed but not retired yet, the latest of their completion times)."""
        misses = self.misses
        stats = self.tardiness
        extra = []
        for job in self.pending:
            if job.dropped:
                continue
            n, last = done.get(job, (0, -1))
            if job.left - n == 0:
                late = max(job.finish, last) - job.deadline
            elif job.deadline < now:
                late = now - job.deadline
            else:
                continue
            extra.append(late if late > 0 else 0)
        if extra:
            stats = _copy(stats)
            for late in extra:
                stats.add(late)
                misses += late > 0
        return misses, stats


def _copy(stats: LatencyStats) -> LatencyStats:
    out = LatencyStats()
    out.count, out.total, out.min, out.max = stats.count, stats.total, stats.min, stats.max
    out._hist = dict(stats._hist)
    return out
