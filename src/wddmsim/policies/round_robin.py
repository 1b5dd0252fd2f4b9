"""Round robin: the ready contexts of a node take turns, one packet each.

Source: the Linux DRM GPU scheduler's ``DRM_SCHED_POLICY_RR`` (drivers/gpu/drm/scheduler/
sched_main.c, ``drm_sched_rq_select_entity_rr``: the run queue's entities in turn, starting after
the one served last), the policy of a time-shared system's ready queue (Silberschatz et al.,
*Operating System Concepts*, "Round-Robin Scheduling") with one packet as the time slice.

Settings: none.

Defining property: while n contexts stay ready, each gets one packet in every n picks (a turn
order of first ready, first served; a context that becomes ready joins the end of the turn). A
context with long packets gets more GPU time than one with short packets: turns are counted in
packets, not in time (see ``fair`` for shares of time).
"""

from __future__ import annotations

from collections import deque

from wddmsim.policies import Policy


class RoundRobin(Policy):
    name = "round_robin"

    def setup(self):
        self.turns = {}  # node -> deque of its ready contexts, the next to serve first

    def on_ready(self, ctx, now):
        self.turns.setdefault(ctx.node, deque()).append(ctx)

    def on_idle(self, ctx, now):
        self.turns[ctx.node].remove(ctx)

    def pick(self, node, now):
        turns = self.turns[node]
        ctx = turns[0]
        turns.rotate(-1)  # served: to the back of the turn
        return ctx
