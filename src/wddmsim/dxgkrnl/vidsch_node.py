"""The OS side of one node of the software GPU scheduler (VidSch): :class:`NodeQueue`.

Each node (engine) the driver reports gets one: its hardware queue (the packets handed to the
driver with ``DxgkDdiSubmitCommand``, oldest first, up to the depth the scenario gives), its fence
ids (per node, from 1, one per submission: the model's choice where Microsoft's "Supplying fence
identifiers" page does not say whether the sequence is per node, per engine or per adapter), the
state of its worker thread, its argument blocks at fixed kernel addresses, and the figures the
summary reads. VidSch (:mod:`.vidsch` and its base classes) reads and writes it; so do the
preemption and TDR parts, through ``preemption`` and ``tdr``.
"""

from __future__ import annotations

from collections import deque

from ..ddi import rules as R
from .stats import LatencyStats


class NodeQueue:
    """The OS side of one node: hardware queue, fence counters, worker state, statistics."""

    __slots__ = (
        "ordinal", "name", "depth", "hw", "stopped", "next_fence", "last_submitted",
        "last_completed", "worker_busy", "dispatch_timer", "submit_args", "patch_args", "facts",
        "notify_facts", "packets", "busy_ns", "busy_since", "engine_type", "submit_address",
        "max_depth_seen", "submit_fill", "submit_long", "preemption", "tdr", "virtual_args",
        "last_stop", "last_stop_ctx", "handoffs", "submitting", "idle_waiting_ns", "idle_since",
    )

    def __init__(self, ordinal: int, name: str, depth: int):
        self.ordinal = ordinal
        self.name = name
        self.depth = depth
        self.hw: deque = deque()  # packets handed to the driver, oldest first
        self.stopped = 0  # how many at the front of hw the ISR has completed
        self.next_fence = 1
        self.last_submitted = 0
        self.last_completed = 0
        self.worker_busy = False
        self.dispatch_timer = None
        self.submit_args = None
        self.patch_args = None
        self.facts: R.Facts | None = None
        self.notify_facts: R.Facts | None = None
        self.packets = 0
        self.busy_ns = 0
        self.busy_since = -1
        self.engine_type = 0
        self.submit_address = 0
        self.max_depth_seen = 0
        self.submit_fill = None
        self.submit_long = False
        self.preemption = None  # preemption.NodePreemption
        self.tdr = None  # tdr.NodeTdr
        self.virtual_args = None  # DXGKARG_SUBMITCOMMANDVIRTUAL (made at the first virtual submission)
        self.last_stop = 0  # when the last context to run stopped running, and which it was
        self.last_stop_ctx = None
        self.handoffs = LatencyStats()  # a context stops, a waiting other one starts: the gap
        self.submitting = None  # the packet the worker is patching and submitting (out of every queue)
        # Nothing to run on the hardware queue while the OS holds work for the node (a ready context,
        # or a packet being submitted): the time so far, and since when now (-1: not so now).
        self.idle_waiting_ns = 0
        self.idle_since = -1
