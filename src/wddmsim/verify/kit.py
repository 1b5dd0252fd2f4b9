"""The conformance suite's building blocks: what a driver declares (:class:`Declared`), a case
(:class:`Case`) and a finished run it judges (:class:`Outcome`), the suite's GPU (:data:`NODES`), the
helpers that build a case's scenario dict, and the expectations most cases share.

The cases themselves are in :mod:`.cases_work`, :mod:`.cases_display` and :mod:`.cases_recovery`;
:mod:`.suite` gathers them in order (docs/verify.md lists them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

MS = 1_000_000
US = 1_000

#: The suite's GPU: what every case's adapter is built from.
NODES = [
    {"name": "3D", "engine": "3d"},
    {"name": "Compute", "engine": "compute"},
    {"name": "Copy", "engine": "copy"},
]


@dataclass(frozen=True)
class Declared:
    """What the driver declared at adapter start, as the suite sees it."""

    version: str  # the DDI version's name (``wddm2_0`` ...)
    version_value: int
    nodes: int  # nodes the OS schedules
    multi_engine_aware: bool
    preemption_aware: bool
    per_engine_reset: bool
    cancel_aware: bool
    virtual_addressing: bool
    hardware_scheduling: bool
    flip_interval: bool
    flip_no_wait: bool
    page_faults: bool
    mmio_flips: bool = False
    overlays: bool = False  # SupportMultiPlaneOverlay with MaxOverlayPlanes >= 1
    #: MaxHwQueuedFlips > 1 once the OS enabled the hardware flip queue (WDDM 3.0, hardware scheduling)
    hw_flip_queue: bool = False

    def lacks(self, needs: tuple[str, ...]) -> str | None:
        """Why a case that ``needs`` these does not apply to this driver (None: it does)."""
        why = {
            "multiple_nodes": (self.nodes >= 2, "the driver schedules one node (not multiple-engine aware)"),
            "preemption": (self.preemption_aware, "the driver is not PreemptionAware"),
            "engine_reset": (self.per_engine_reset, "the driver does not report SupportPerEngineTDR"),
            "no_engine_reset": (not self.per_engine_reset, "the driver reports SupportPerEngineTDR"),
            "cancel": (self.cancel_aware, "the driver is not CancelCommandAware"),
            "gpu_va": (self.virtual_addressing, "the driver does not support GPU virtual addressing"),
            "hardware_scheduling": (self.hardware_scheduling, "the driver does not support hardware scheduling"),
            "flip_interval": (self.flip_interval, "the driver does not report FlipCaps.FlipInterval"),
            "flip_no_wait": (self.flip_no_wait, "the driver does not report FlipCaps.FlipOnVSyncWithNoWait"),
            "mmio_flips": (self.mmio_flips, "the driver does not report FlipCaps.FlipOnVSyncMmIo (its flips are "
                                            "DMA-buffer commands)"),
            "overlays": (self.overlays, "the driver does not report SupportMultiPlaneOverlay (no overlay planes)"),
            "hw_flip_queue": (self.hw_flip_queue, "the driver does not declare the hardware flip queue "
                                                  "(DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1, WDDM 3.0)"),
            "page_faults": (self.page_faults, "the driver's DDI version has no DmaPageFaulted interrupt"),
            "no_page_faults": (not self.page_faults, "the driver reports page faults"),
        }
        for need in needs:
            ok, reason = why[need]
            if not ok:
                return reason
        return None


@dataclass
class Outcome:
    """A finished case: the system, its run result and summary, and the event log."""

    system: object
    result: object
    events: list

    @property
    def summary(self) -> dict:
        return self.result.summary

    def of(self, *names: str) -> list[dict]:
        return [e for e in self.events if e["event"] in names]

    def context(self, full_name: str) -> dict:
        return next(c for c in self.summary["contexts"] if c["context"] == full_name)


@dataclass(frozen=True)
class Case:
    """One scenario of the suite: ``scenario(declared)`` builds the scenario dict for this driver;
    ``expect(outcome)`` returns what went wrong (empty: the case passes)."""

    area: str
    name: str
    title: str
    scenario: Callable[[Declared], dict]
    expect: Callable[[Outcome], list[str]]
    needs: tuple[str, ...] = ()
    #: called with the built system before it runs (to seed memory the expectations read back)
    prepare: Callable[[object], None] | None = None

    @property
    def id(self) -> str:
        return f"{self.area}/{self.name}"


# -- building scenarios ----------------------------------------------------------------------------------
def scenario(name: str, processes: list, *, duration: str = "100ms", adapter: dict | None = None,
             faults: list | None = None, **top) -> dict:
    ad_spec = {"nodes": [dict(n) for n in NODES], **(adapter or {})}
    out = {"name": name, "duration": duration, "seed": 1, "adapter": ad_spec, "process": processes, **top}
    if faults:
        out["fault"] = faults
    return out


def process(name: str, *contexts, priority: str = "normal") -> dict:
    return {"name": name, "priority": priority, "context": list(contexts)}


def context(name: str, workload: dict, node: str = "3D", **extra) -> dict:
    return {"name": name, "node": node, "workload": workload, **extra}


def script(*packets) -> dict:
    """Packets ``(at, work)`` or ``(at, work, repeat)``."""
    return {"kind": "script", "packets": [
        {"at": p[0], "work": p[1], "repeat": p[2] if len(p) > 2 else 1} for p in packets]}


def batches(work: str, batch: int, count: int, interval: str = "0ns") -> dict:
    return {"kind": "compute_batch", "work": work, "batch": batch, "count": count, "interval": interval}


# -- expectations ---------------------------------------------------------------------------------------
def everything_retired(out: Outcome) -> list[str]:
    """Every context submitted something and every packet it submitted was retired."""
    bad = []
    for c in out.summary["contexts"]:
        if c["submitted"] == 0:
            bad.append(f"{c['context']} submitted nothing")
        elif c["completed"] != c["submitted"]:
            bad.append(f"{c['context']}: {c['completed']} of {c['submitted']} packets retired "
                       f"({c['cancelled']} cancelled, {c['aborted']} aborted)")
        if c["device_error"]:
            bad.append(f"{c['context']}: its device went to error")
        if c["api_error"]:
            bad.append(f"{c['context']}: the application got {c['api_error']}")
    return bad


def no_recovery(out: Outcome) -> list[str]:
    """No timeout, no reset: a driver that keeps up never makes the OS recover."""
    tdr = out.summary["tdr"]
    found = [f"{len(out.of('TdrDetected'))} timeout(s) detected"] if out.of("TdrDetected") else []
    if tdr["engine_resets"] or tdr["adapter_resets"]:
        found.append(f"{tdr['engine_resets']} engine and {tdr['adapter_resets']} adapter reset(s)")
    return found


def healthy(out: Outcome) -> list[str]:
    return everything_retired(out) + no_recovery(out)


def all_of(*checks: Callable[[Outcome], list[str]]) -> Callable[[Outcome], list[str]]:
    def run(out: Outcome) -> list[str]:
        found = []
        for check in checks:
            found += check(out)
        return found
    return run


def fences_in_order(out: Outcome) -> list[str]:
    """Every node's packets completed in their submission order (fences never go backwards)."""
    bad = []
    last: dict[int, int] = {}
    for e in out.of("DmaPacketStop"):
        if e["status"] != "Completed":
            continue
        node, fence = e["node"], e["fence"]
        if fence < last.get(node, 0):
            bad.append(f"node {node}: fence {fence} completed after fence {last[node]}")
        last[node] = max(last.get(node, 0), fence)
    return bad


def memory_is(check: Callable[[object], list[str]]) -> Callable[[Outcome], list[str]]:
    """Ground truth: what the GPU left in memory."""
    return lambda out: check(out.system)
