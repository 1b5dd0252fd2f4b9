"""Rule 91 (HwFlipQueueOrdering) of the rule catalogue (``wddmsim rules 91``, docs/rules.md): the
order of a hardware flip queue (WDDM 3.0).

Not a registered rule (it is not judged from one structure): :class:`FlipQueueJudge` follows one
adapter's hardware flip queues, per VidPn source and plane, through what crosses the DDI and
answers :class:`~wddmsim.ddi.rules.core.Violation` lists:

- :meth:`FlipQueueJudge.submitted`: the OS queued a flip (a plane of
  DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 with its PresentId and the call's
  TargetFlipTime). A plane's PresentIds increase and its target flip time is not before that of any
  flip still pending on the plane (queued, neither logged nor cancelled): the page's words, "greater
  than or equal to any of the pending flip target times for this plane";
- :meth:`FlipQueueJudge.cancelled`: DxgkDdiCancelFlips for a plane (DXGK_CANCELFLIPS_PLANE). The
  driver's ``PresentIdCancelled`` is 0 (none cancelled) or a PresentId from the requested one to the
  last submitted: the flips cancelled together form one run, ending at the last PresentId submitted;
- :meth:`FlipQueueJudge.completed`: flip queue log entries a vsync report made visible
  (DXGK_FLIPQUEUE_LOG_ENTRY). PresentIds complete in order (each above the last one logged), never
  beyond the last submitted; an entry shown (a timestamp, not the cancelled marker) is not one the
  driver said it cancelled, and shown timestamps never go backwards.

Decisions: a target flip time of 0 asks for no target (as soon as possible) and is not compared; the
judge keeps, per plane, the last PresentId submitted, the pending flips' targets (no more than the
flips queued), the last logged and the cancelled run. A flip stops being pending when the log names
it or PresentId above it, or when the driver says it cancelled it.

The OS's side of the queue (dxgkrnl/hwflipqueue.py) calls it on every submission, cancel answer and
log entry it reads, and hands what it finds to the verifier.

Spec: Microsoft's "Hardware flip queue" page (display/hardware-flip-queue), and the d3dkmddi pages
DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3 (TargetFlipTime), DXGK_MULTIPLANE_OVERLAY_PLANE3
(PresentId), DXGKDDI_CANCELFLIPS, DXGK_CANCELFLIPS_PLANE, DXGK_FLIPQUEUE_LOG_ENTRY and
DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3.
"""

from __future__ import annotations

from collections import deque

from .core import Violation

NUMBER = 91
NAME = "HwFlipQueueOrdering"
#: the cancelled marker of a log entry's PresentTimestamp (the model's value, gpu/display.py)
CANCELLED = -1


class _Plane:
    __slots__ = ("last_id", "pending", "last_logged", "last_shown", "cancelled_from", "cancelled_to")

    def __init__(self) -> None:
        self.last_id = 0
        self.pending: deque = deque()  # (PresentId, target) of the flips queued, not yet done
        self.last_logged = 0
        self.last_shown = -1
        self.cancelled_from = 0  # the run the driver last said it cancelled, [from, to]
        self.cancelled_to = 0


class FlipQueueJudge:
    """Rule 91 over one adapter's hardware flip queues (see the module doc)."""

    def __init__(self) -> None:
        self.planes: dict[tuple[int, int], _Plane] = {}

    def _plane(self, source: int, plane: int) -> _Plane:
        key = (source, plane)
        st = self.planes.get(key)
        if st is None:
            st = self.planes[key] = _Plane()
        return st

    @staticmethod
    def _v(message: str) -> Violation:
        return Violation(NUMBER, NAME, message)

    def last_submitted(self, source: int, plane: int) -> int:
        st = self.planes.get((source, plane))
        return st.last_id if st is not None else 0

    def submitted(self, source: int, plane: int, present_id: int, target_time: int) -> list[Violation]:
        """The OS queued PresentId ``present_id`` on the plane with ``target_time`` (0: no target)."""
        st = self._plane(source, plane)
        out = []
        where = f"VidPn source {source} plane {plane}"
        if present_id <= st.last_id:
            out.append(self._v(f"{where}: PresentId {present_id} was queued after PresentId {st.last_id}; a "
                               f"plane's PresentIds increase"))
        latest = max((t for _, t in st.pending), default=0)
        if target_time and latest and target_time < latest:
            out.append(self._v(f"{where}: PresentId {present_id} has TargetFlipTime {target_time}, before the "
                               f"{latest} of a flip still pending on the plane; target flip times of a plane "
                               f"never go backwards"))
        st.last_id = max(st.last_id, present_id)
        if target_time:
            st.pending.append((present_id, target_time))
        return out

    def cancelled(self, source: int, plane: int, requested: int, cancelled_from: int) -> list[Violation]:
        """The driver answered DxgkDdiCancelFlips for [``requested``, last submitted] with
        ``PresentIdCancelled`` = ``cancelled_from``."""
        st = self._plane(source, plane)
        last = st.last_id
        if cancelled_from == 0:
            return []
        if not requested <= cancelled_from <= last:
            return [self._v(f"VidPn source {source} plane {plane}: DxgkDdiCancelFlips asked for PresentIds "
                            f"{requested}..{last} and the driver answered PresentIdCancelled {cancelled_from}; "
                            f"flips cancelled together form one run from at least the requested PresentId to "
                            f"the last one submitted ({last}), or 0 when none was")]
        st.cancelled_from, st.cancelled_to = cancelled_from, last
        while st.pending and st.pending[-1][0] >= cancelled_from:
            st.pending.pop()
        return []

    def completed(self, source: int, plane: int, entries) -> list[Violation]:
        """Flip queue log entries ``(PresentId, timestamp or CANCELLED)`` newly reported for the plane."""
        st = self._plane(source, plane)
        out = []
        where = f"VidPn source {source} plane {plane}"
        for present_id, stamp in entries:
            if present_id <= st.last_logged:
                out.append(self._v(f"{where}: the flip queue log reports PresentId {present_id} after PresentId "
                                   f"{st.last_logged}; flips complete in order"))
            elif present_id > st.last_id:
                out.append(self._v(f"{where}: the flip queue log reports PresentId {present_id}, beyond the last "
                                   f"PresentId submitted ({st.last_id})"))
            if stamp != CANCELLED:
                if st.cancelled_from and st.cancelled_from <= present_id <= st.cancelled_to:
                    out.append(self._v(f"{where}: PresentId {present_id} is logged shown at {stamp}, but the driver "
                                       f"said DxgkDdiCancelFlips cancelled {st.cancelled_from}..{st.cancelled_to}"))
                if stamp < st.last_shown:
                    out.append(self._v(f"{where}: PresentId {present_id} is logged shown at {stamp}, before the "
                                       f"{st.last_shown} of the flip logged before it"))
                st.last_shown = max(st.last_shown, stamp)
            st.last_logged = max(st.last_logged, present_id)
            while st.pending and st.pending[0][0] <= st.last_logged:
                st.pending.popleft()
        return out
