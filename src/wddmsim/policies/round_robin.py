"""Round robin: the ready contexts of a node take turns, one packet each.

Source: the Linux DRM GPU scheduler's ``DRM_SCHED_POLICY_RR`` (drivers/gpu/drm/scheduler/
sched_main.c, ``drm_sched_rq_select_entity_rr``: the run queue's entities in turn, starting after
the one served last), the time-sharing round robin of a CPU's ready queue (Silberschatz, Galvin
and Gagne, *Operating System Concepts*, "Round-Robin Scheduling") with one packet as the slice.

The turn goes to the ready context served least recently; contexts never served go first, in the
order they became ready.

Settings: none.

Defining property: while n contexts stay ready, each gets one packet in every n picks, whatever
order their packets were queued in. Turns are counted in packets, not time: a context with long
packets gets more GPU time than one with short ones (``fair`` shares time).
"""

from __future__ import annotations

from wddmsim.policies import Policy


class RoundRobin(Policy):
    name = "round_robin"

    def setup(self):
        self.turn = 0
        self.served = {}  # context -> the turn it was last served in

    def pick(self, node, now):
        # min() keeps the first of equals: of the never served, the one ready longest.
        ctx = min(self.os.ready(node), key=lambda c: self.served.get(c, -1))
        self.turn += 1
        self.served[ctx] = self.turn
        return ctx
