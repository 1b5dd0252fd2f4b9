"""Earliest deadline first, the policy docs/policies.md writes step by step.

Run it: uv run wddmsim run examples/research/mixed_deadlines.toml --policy examples/policies/my_edf.py:MyEdf
"""

from wddmsim.policies import Policy


class MyEdf(Policy):
    """The ready context whose next job is due first runs next."""

    def pick(self, node, now):
        ready = self.os.ready(node)
        due = [ctx for ctx in ready if ctx.next_deadline is not None]
        if not due:
            return ready[0]  # nothing has a deadline: first come, first served
        return min(due, key=lambda ctx: ctx.next_deadline)

    def on_ready(self, ctx, now):
        # A job due before one on the GPU (running, or queued to run next) takes its place, where
        # the driver can preempt: what is taken back goes through pick again, by deadline.
        if ctx.next_deadline is None or not self.os.can_preempt:
            return
        on_gpu = [packet.deadline_at for packet in self.os.queued_on_hardware(ctx.node)]
        if any(due is None or ctx.next_deadline < due for due in on_gpu):
            self.os.preempt(ctx.node)
