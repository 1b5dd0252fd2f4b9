"""Random valid scenarios with faults for fuzzing wddmsim, and the run that judges them. The test
suite (tests/test_fuzz_runs.py) draws a bounded number of them through Hypothesis;
``tools/fuzz.py`` draws many more in a process pool. A scenario is a pure function of a seed (a
:class:`random.Random`), so a failing one is made again from its seed alone, and written out as a
file (:func:`to_toml`) for a person to rerun. (Broken inputs, buffers and scenario files, are
:mod:`wddmsim.testing.mutate`'s.)

* :func:`scenario_data`: a scenario table (the dict ``tomllib`` would give) that stays within the
  schema (:mod:`wddmsim.scenario.schema`): 1-3 nodes of several engine kinds and preemption
  granularities, the software or the hardware scheduler, GPU virtual addressing on or off,
  processes with contexts running every workload kind the schema has, priorities, destroy/suspend
  times, adapter stops, budgets, displays, monitored and native fences, chains, every D3DKMT call a
  scenario may make (and a GPU in stepped mode), legacy drivers, compositors, TDR settings and
  faults of every kind (hang, page fault, failing DDI calls, interrupt storms). Durations are a few to
  tens of milliseconds of virtual time, so one run takes well under a wall second.
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass

__all__ = ["FAULT_KINDS", "STATUSES", "RunOutcome", "Runaway", "run_scenario", "scenario_data", "to_toml"]

#: The fault kinds a scenario may inject (schema.Fault.kind).
FAULT_KINDS = ("hang", "page_fault", "ddi_error", "interrupt_storm")
#: NTSTATUS errors a failing DDI call returns.
STATUSES = ("STATUS_UNSUCCESSFUL", "STATUS_NO_MEMORY", "STATUS_INVALID_PARAMETER", "STATUS_NOT_SUPPORTED",
            "STATUS_DEVICE_REMOVED", "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER", "STATUS_GRAPHICS_ALLOCATION_BUSY",
            "STATUS_INVALID_HANDLE", "STATUS_TIMEOUT", "STATUS_PENDING", "STATUS_RETRY", "STATUS_CANCELLED",
            "STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE", "STATUS_ACCESS_DENIED")
_DDIS = ("DxgkDdiRender", "DxgkDdiPresent", "DxgkDdiPatch", "DxgkDdiSubmitCommand", "DxgkDdiPreemptCommand",
         "DxgkDdiCancelCommand", "DxgkDdiBuildPagingBuffer", "DxgkDdiQueryDependentEngineGroup",
         "DxgkDdiResetEngine", "DxgkDdiResetFromTimeout", "DxgkDdiRestartFromTimeout")
_OTHER_ENGINES = ("compute", "copy", "video_decode", "video_encode", "video_processing", "other")
_PREEMPTION = ("none", "dma_buffer", "primitive", "interval", "instruction")
_CLASSES = ("idle", "below_normal", "normal", "above_normal", "high", "realtime")
#: The research policies a fuzzed scenario may run under the software scheduler (wddmsim.policies).
RESEARCH_POLICIES = ("fifo", "round_robin", "priority", "fair", "edf", "llf", "partition", "mlfq")
#: The research policies of the GPU's own scheduler a hardware-scheduled scenario may run.
GPU_RESEARCH_POLICIES = ("round_robin", "fifo")
_SOFTWARE_VERSIONS = ("vista", "win7", "win8", "wddm2_0", "wddm2_4", "wddm2_7")
_VA_VERSIONS = ("wddm2_0", "wddm2_1", "wddm2_4", "wddm2_7", "wddm3_0")
_HW_VERSIONS = ("wddm2_5", "wddm2_7", "wddm2_9", "wddm3_1")


def _us(rng: random.Random, lo: int, hi: int) -> str:
    """A duration of ``lo``..``hi`` microseconds, written the way a scenario file writes one."""
    return f"{rng.randint(lo, hi)}us"


def _ms(ns: int) -> str:
    return f"{ns // 1000}us"


def _workload(rng: random.Random, kinds: list[str], duration_ns: int) -> dict:
    """One workload table of a kind drawn from ``kinds``; chains are made by the caller."""
    kind = rng.choice(kinds)
    start = _us(rng, 0, min(2000, duration_ns // 4000)) if rng.random() < 0.3 else None
    count = rng.randint(1, 20) if rng.random() < 0.3 else None
    w: dict = {"kind": kind}
    if kind == "frame_loop":
        w |= {"fps": rng.choice([30, 60, 90.5, 144, 240]), "packets_per_frame": rng.randint(1, 3),
              "work": _us(rng, 50, 3000), "jitter": rng.choice([0.0, 0.1, 0.5]),
              "present": rng.random() < 0.7, "present_mode": rng.choice(["blt", "flip", "flip_no_wait", "composed"]),
              "sync_interval": rng.randint(0, 4), "max_frame_latency": rng.randint(1, 4)}
        if rng.random() < 0.2:
            w["fps_changes"] = [{"at": _us(rng, 1000, 3000), "fps": 30}, {"at": _us(rng, 4000, 8000), "fps": 120}]
    elif kind == "swap_chain":
        w |= {"runtime": rng.choice(["DXGI", "D3D9", "Other"]), "swap_effect": rng.choice(["flip", "copy", "exclusive"]),
              "fullscreen": rng.random() < 0.5, "sync_interval": rng.randint(-1, 4),
              "allows_tearing": rng.random() < 0.3}
        if rng.random() < 0.6:
            w |= {"fps": rng.choice([60, 120, 240]), "cpu": _us(rng, 0, 2000), "work": _us(rng, 0, 3000)}
        else:
            t = 0
            frames = []
            for _ in range(rng.randint(1, 6)):
                t += rng.randint(0, 5000) * 1000
                cpu = rng.randint(0, 2000) * 1000
                frame = {"start": _ms(t), "cpu": _ms(cpu), "gpu": _us(rng, 0, 3000)}
                if rng.random() < 0.5:
                    frame["submit"] = _ms(rng.randint(0, cpu // 1000) * 1000)
                frames.append(frame)
            w["frames"] = frames
            count = None
    elif kind == "compute_batch":
        w |= {"batch": rng.randint(1, 8), "work": _us(rng, 20, 3000), "interval": _us(rng, 0, 1000),
              "sync": rng.random() < 0.7}
        if rng.random() < 0.3:
            w["window"] = rng.randint(1, 4)
    elif kind == "copy_stream":
        w |= {"size": rng.choice(["4KiB", "64KiB", "1MiB", 100]), "interval": _us(rng, 100, 3000)}
    elif kind == "memory_pressure":
        allocations = rng.randint(1, 8)
        w |= {"allocations": allocations, "size": rng.choice(["64KiB", "1MiB", "4MiB"]),
              "touch": rng.randint(1, allocations), "work": _us(rng, 0, 500), "interval": _us(rng, 200, 2000),
              "segment": rng.choice(["memory", "aperture"])}
        if rng.random() < 0.3:
            w["offer"] = [{"at": _us(rng, 1000, 4000), "allocations": [0]}]
            w["reclaim"] = [{"at": _us(rng, 4000, 8000), "allocations": [0]}]
    elif kind == "bursty":
        w |= {"burst": rng.randint(1, 6), "work": _us(rng, 20, 1000), "mean_gap": _us(rng, 100, 3000)}
    elif kind == "script":
        t = 0
        packets = []
        for _ in range(rng.randint(1, 6)):
            t += rng.randint(0, 3000)
            packet = {"at": f"{t}us", "work": _us(rng, 10, 2000), "repeat": rng.randint(1, 3)}
            if rng.random() < 0.2:
                packet["null_rendering"] = True
            packets.append(packet)
        w["packets"] = packets
        count = None
    if start is not None:
        w["start"] = start
    if count is not None:
        w["count"] = count
    return w


def _fault(rng: random.Random, kind: str, nodes: list[str], contexts: list[tuple[str, str]], duration: int) -> dict:
    if kind == "hang":
        if rng.random() < 0.5:
            return {"kind": "hang", "node": rng.choice(nodes), "at": _ms(rng.randint(0, duration * 3 // 4))}
        process, context = rng.choice(contexts)
        return {"kind": "hang", "process": process, "context": context, "packet": rng.randint(1, 12)}
    if kind == "page_fault":
        process, context = rng.choice(contexts)
        return {"kind": "page_fault", "process": process, "context": context, "packet": rng.randint(1, 12),
                "fatal": rng.random() < 0.3}
    if kind == "ddi_error":
        return {"kind": "ddi_error", "ddi": rng.choice(_DDIS), "call": rng.randint(1, 40),
                "status": rng.choice(STATUSES)}
    return {"kind": "interrupt_storm", "at": _ms(rng.randint(0, duration * 3 // 4)),
            "duration": _us(rng, 50, 2000), "interval": _us(rng, 2, 50)}


def scenario_data(rng: random.Random, *, faults: bool = True) -> dict:
    """A random valid scenario as a TOML table, drawn from ``rng`` (see the module docstring for
    what it may hold). ``faults``: whether to inject 1-3 faults (of every kind in turn)."""
    duration = rng.randint(2, 30) * 1_000_000
    hardware = rng.random() < 0.3
    gpu_va = True if hardware else rng.choice([None, False, True])
    va = hardware or bool(gpu_va)
    data: dict = {"name": "fuzz", "seed": rng.randint(0, 2**31), "duration": _ms(duration)}
    # adapter
    nodes = [{"name": "3D", "engine": "3d"}]
    for i, engine in enumerate(rng.sample(_OTHER_ENGINES, rng.randint(0, 2))):
        nodes.append({"name": f"N{i}", "engine": engine})
    for node in nodes:
        node["preemption"] = rng.choice(_PREEMPTION)
        if rng.random() < 0.5:
            node["preemption_interval"] = _us(rng, 10, 200)
        if rng.random() < 0.3:
            node["preemption_save"] = _us(rng, 0, 20)
        if rng.random() < 0.3:
            node["hw_queue_depth"] = rng.randint(1, 4)
        if rng.random() < 0.2:
            node["first_fence_id"] = (1 << 32) - rng.randint(1, 20)
        if hardware and rng.random() < 0.3:
            node["hw_queue_slots"] = rng.randint(1, 3)
    adapter: dict = {"scheduling": "hardware" if hardware else "software", "nodes": nodes,
                     "displays": rng.sample([60.0, 75.0, 144.0, 240.0], rng.randint(1, 2)),
                     "max_queued_flips": rng.randint(1, 3), "hw_queue_depth": rng.randint(1, 4)}
    if gpu_va is not None:
        adapter["gpu_va"] = gpu_va
    if rng.random() < 0.05:
        adapter["null_rendering"] = True
    if not hardware and rng.random() < 0.15:
        adapter["stop_at"] = _ms(rng.randint(duration // 4, duration - 1000) // 1000 * 1000)
    if not va and rng.random() < 0.3:
        adapter["segments"] = [{"name": "VRAM", "kind": "memory", "size": "8MiB", "budget": "4MiB"},
                               {"name": "Aperture", "kind": "aperture", "size": "8MiB", "cpu_visible": True}]
    if hardware and rng.random() < 0.3:
        adapter["bands"] = {"grace": {"focus": _us(rng, 0, 200), "normal": _us(rng, 0, 200)},
                            "normal_share": rng.randint(0, 50)}
    data["adapter"] = adapter
    # driver
    versions = _HW_VERSIONS if hardware else _VA_VERSIONS if va else _SOFTWARE_VERSIONS
    native = hardware and rng.random() < 0.3
    driver: dict = {"ddi_version": "wddm3_2" if native else rng.choice(versions)}
    if native:
        driver["native_fence"] = True
    for key in ("preemption_aware", "per_engine_reset", "cancel_aware"):
        if rng.random() < 0.25:
            driver[key] = rng.random() < 0.5
    if not va and len(nodes) == 1 and rng.random() < 0.2:
        driver["multi_engine_aware"] = False  # a legacy driver: devices, not contexts, submit
        for key in ("preemption_aware", "per_engine_reset", "cancel_aware"):
            driver.pop(key, None)  # the Windows 8 capabilities need MultiEngineAware
    if rng.random() < 0.15:
        driver["paging_buffer_size"] = rng.choice(["4KiB", "16KiB"])
        driver["paging_transfer_chunk"] = rng.choice(["0", "4KiB", "64KiB"])
    if not hardware and rng.random() < 0.1:
        driver["ring_size"] = "4KiB"
    data["driver"] = driver
    data["scheduler"] = {"policy": rng.choice(["strict_priority", "priority_quantum"]), "quantum": _us(rng, 200, 4000)}
    if hardware:
        # Under hardware scheduling [scheduler] policy is the GPU's scheduler's: the OS's strict
        # priority has none there (docs/policies.md, "Under hardware scheduling").
        data["scheduler"]["policy"] = "priority_quantum"
    if not hardware and rng.random() < 0.4:
        # A research policy (wddmsim.policies) instead of the OS's own: the host's checks and the
        # ledger hold the policy to the contract, so a shipped policy that breaks it is found here.
        data["scheduler"]["policy"] = rng.choice(RESEARCH_POLICIES)
    elif hardware and rng.random() < 0.4:
        # The GPU's scheduler under a research policy instead of the band rules (its own settings).
        data["scheduler"] = {"policy": rng.choice(GPU_RESEARCH_POLICIES)}
    data["tdr"] = {"level": rng.choice([0, 1, 3, 3]), "delay": _us(rng, 500, 20000), "watchdog": _us(rng, 500, 20000),
                   "limit_count": rng.randint(0, 5), "limit_time": _us(rng, 1000, 60000)}
    # processes
    kinds = ["frame_loop", "compute_batch", "copy_stream", "bursty", "script"]
    if not hardware:
        kinds.append("swap_chain")
    if not va:
        kinds.append("memory_pressure")
    node_names = [n["name"] for n in nodes]
    processes = []
    contexts: list[tuple[str, str]] = []
    for p in range(rng.randint(1, 3)):
        klass = rng.choice(_CLASSES)
        proc: dict = {"name": f"p{p}.exe", "priority": klass, "context": []}
        if rng.random() < 0.2:
            proc["budget"] = [{"at": _us(rng, 0, 5000), "size": rng.choice(["0", "1MiB", "64MiB"])}]
        if rng.random() < 0.1:
            proc["virtual_machine"] = True
        for c in range(rng.randint(1, 3)):
            w = _workload(rng, kinds, duration)
            if hardware and w["kind"] == "frame_loop":
                w["present_mode"] = "blt"
            ctx: dict = {"name": f"c{c}", "node": rng.choice(node_names), "priority": rng.randint(-7, 7), "workload": w}
            if rng.random() < 0.15:
                ctx["destroy_at"] = _ms(rng.randint(0, duration))
            if hardware:
                bands = ["idle", "normal"] + (["focus", "realtime"] if klass in ("high", "realtime") else [])
                if rng.random() < 0.4:
                    ctx["band"] = rng.choice(bands)
                if rng.random() < 0.2:
                    ctx["suspend_at"] = _ms(rng.randint(0, duration))
                    ctx["suspend_for"] = _us(rng, 100, 3000)
                if rng.random() < 0.2:
                    ctx["hw_queues"] = rng.randint(1, 3)
                if rng.random() < 0.2:
                    ctx["quantum"] = _us(rng, 200, 3000)
                if rng.random() < 0.1:
                    ctx["disable_gpu_timeout"] = True
            proc["context"].append(ctx)
            contexts.append((proc["name"], ctx["name"]))
        processes.append(proc)
    fences: list[dict] = []
    if va and rng.random() < 0.5:
        # Script packets that wait for and signal a shared monitored fence (native or not).
        fence = {"name": "f", "initial": rng.choice([0, 5])}
        if native and rng.random() < 0.7:
            fence["native"] = True
        fences.append(fence)
        scripts = [c for p in processes for c in p["context"] if c["workload"]["kind"] == "script"]
        for ctx in scripts:
            for packet in ctx["workload"]["packets"]:
                if rng.random() < 0.5:
                    packet |= {"signal_fence": "f", "signal_value": rng.randint(0, 12),
                               "signal_step": rng.randint(0, 2)}
                elif rng.random() < 0.5:
                    by = "gpu" if fence.get("native") or (hardware and rng.random() < 0.5) else "os"
                    packet |= {"wait_fence": "f", "wait_value": rng.randint(0, 12), "wait_by": by}
    if va and rng.random() < 0.4:
        # A chain through a monitored fence: its members are new contexts, one per position.
        members = rng.randint(1, 3)
        chain_native = native and rng.random() < 0.5
        wait = "gpu" if chain_native or (hardware and rng.random() < 0.5) else "os"
        fences.append({"name": "chain", "native": True} if chain_native else {"name": "chain"})
        proc = {"name": "chain.exe", "context": []}
        for pos in range(members):
            proc["context"].append({"name": f"m{pos}", "node": rng.choice(node_names),
                                    "workload": {"kind": "chain", "fence": "chain", "members": members, "position": pos,
                                                 "work": _us(rng, 20, 1000), "wait": wait,
                                                 "count": rng.randint(1, 10)}})
            contexts.append(("chain.exe", f"m{pos}"))
        processes.append(proc)
    if fences:
        data["fence"] = fences
    data["process"] = processes
    # calls
    calls = []
    for fence in fences:
        process = rng.choice(processes)["name"]
        if rng.random() < 0.4:
            call = {"api": "SignalSynchronizationObjectFromCpu", "at": _ms(rng.randint(0, duration)), "process": process,
                    "fence": fence["name"], "value": rng.randint(0, 20)}
            if rng.random() < 0.5:
                call |= {"every": _us(rng, 300, 3000), "count": rng.randint(1, 5), "step": rng.randint(0, 3)}
            if not fence.get("native") and rng.random() < 0.2:
                call["rewind"] = True
            calls.append(call)
        if rng.random() < 0.4:
            call = {"api": "WaitForSynchronizationObjectFromCpu", "at": _ms(rng.randint(0, duration)),
                    "process": process, "fence": fence["name"], "value": rng.randint(0, 20)}
            if rng.random() < 0.5:
                call["timeout"] = _us(rng, 100, 5000)
            calls.append(call)
        if rng.random() < 0.15:
            calls.append({"api": "DestroySynchronizationObject", "at": _ms(rng.randint(0, duration)),
                          "process": process, "fence": fence["name"]})
    movable = [(p["name"], c["name"]) for p in processes for c in p["context"]
               if c["workload"]["kind"] in ("compute_batch", "bursty", "script")]
    if not hardware and movable and len(node_names) > 1 and rng.random() < 0.3:
        process, context = rng.choice(movable)
        calls.append({"api": "MoveWork", "at": _ms(rng.randint(0, duration)), "process": process, "context": context,
                      "node": rng.sample(node_names, 2), "every": _us(rng, 1000, 5000), "count": 2})
    if not hardware and rng.random() < 0.3:
        process, context = rng.choice(contexts)
        calls.append({"api": "SetContextSchedulingPriority", "at": _ms(rng.randint(0, duration)), "process": process,
                      "context": context, "priority": [rng.randint(-7, 7), rng.randint(-7, 7)],
                      "every": _us(rng, 500, 3000), "count": 3})
    if not hardware and rng.random() < 0.2:
        calls.append({"api": "SetProcessSchedulingPriorityClass", "at": _ms(rng.randint(0, duration)),
                      "process": rng.choice(processes)["name"], "priority_class": rng.choice(_CLASSES)})
    if not hardware and rng.random() < 0.2:
        process, context = rng.choice(contexts)
        hints = {"weight": rng.choice([0.5, 1, 3]), "period": _us(rng, 1000, 20000), "deadline": _us(rng, 1000, 20000),
                 "utilization": rng.choice([0.2, 0.5, 1.0])}
        keep = rng.sample(sorted(hints), rng.randint(1, 4))
        calls.append({"api": "SetSchedulingHints", "at": _ms(rng.randint(0, duration)), "process": process,
                      "context": context, **{k: hints[k] for k in keep}})
    if rng.random() < 0.07:
        # A GPU in stepped mode: its engines run only what StepEngine calls let through (under
        # hardware scheduling, the context the GPU's scheduler has loaded; tests/test_stepped_hardware.py).
        adapter["engine_mode"] = "stepped"
        for name in rng.sample(node_names, rng.randint(1, len(node_names))):
            calls.append({"api": "StepEngine", "at": _ms(rng.randint(0, duration // 2)), "node": name,
                          "steps": rng.randint(1, 3), "every": _us(rng, 200, 2000)})
    if calls:
        data["call"] = calls
    if not hardware and any(c["workload"]["kind"] in ("swap_chain", "frame_loop") for p in processes
                            for c in p["context"]) and rng.random() < 0.3:
        compositor = {"node": "3D", "cpu": _us(rng, 0, 200), "work": _us(rng, 50, 1000)}
        if rng.random() < 0.5:
            compositor["update"] = [{"at": _ms(t)} for t in sorted(rng.randint(0, duration) for _ in range(3))]
        data["compositor"] = [compositor]
    if rng.random() < 0.2:
        for i, proc in enumerate(processes):
            proc["pid"] = 1000 + 4 * i
    if faults:
        chosen = [FAULT_KINDS[rng.randrange(4)] for _ in range(rng.randint(1, 3))]
        data["fault"] = [_fault(rng, k, node_names, contexts, duration) for k in chosen]
    return data


# -------------------------------------------------------------------------------------- TOML


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return json.dumps(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _table(lines: list[str], path: str, table: dict) -> None:
    subs = []
    for k, v in table.items():
        if isinstance(v, dict) and k != "workload":
            subs.append((k, v, False))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            subs.append((k, v, True))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v, many in subs:
        name = f"{path}.{_key(k)}" if path else _key(k)
        for item in (v if many else [v]):
            lines.append("")
            lines.append(f"[[{name}]]" if many else f"[{name}]")
            _table(lines, name, item)


def to_toml(data: dict) -> str:
    """``data`` (a scenario table of strings, numbers, booleans, arrays and tables) as TOML text
    that ``tomllib`` reads back as ``data``: arrays of tables as ``[[...]]``, workloads inline."""
    lines: list[str] = []
    _table(lines, "", data)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- runs


class Runaway(Exception):
    """A run that emitted more events than its budget: it would run away (an unbounded run is a
    finding, like a crash)."""


class _CountingSink:
    """Counts the events of a run, remembers the last one, raises :class:`Runaway` past
    ``max_events``, and passes every event on to ``inner`` (a log file) when there is one."""

    def __init__(self, max_events: int, inner=None):
        self.max_events = max_events
        self.inner = inner
        self.count = 0
        self.last: tuple[str, dict] | None = None
        # A DdiCall's structure as its raw bytes unless the log file wants it otherwise.
        self.raw_args = getattr(inner, "raw_args", True) if inner is not None else True

    def emit(self, t: int, event: str, fields: dict) -> None:
        self.count += 1
        if self.count > self.max_events:
            raise Runaway(f"more than {self.max_events} events by t={t} ns")
        self.last = (event, fields)
        if self.inner is not None:
            self.inner.emit(t, event, fields)


@dataclass(frozen=True)
class RunOutcome:
    """How one fuzz run ended: ``outcome`` is the LogEnd reason (``time`` or ``bugcheck``, or
    ``max_events`` when the run's kernel-event budget ran out),
    ``refused`` (the system could not be built, with the user-facing ``message``) or ``invalid``
    (the scenario table broke the schema: a generator bug); ``events`` counts the events, ``end``
    is the virtual time reached."""

    outcome: str
    events: int = 0
    end: int = 0
    message: str = ""


def run_scenario(data, *, verifier: str = "strict", events_path: str | None = None, seed: int | None = None,
                 max_events: int = 1_000_000, max_kernel_events: int = 5_000_000) -> RunOutcome:
    """Validate scenario table ``data`` (or take a validated :class:`~wddmsim.scenario.Scenario`)
    and run it (:class:`~wddmsim.runner.system.System`) with the verifier in ``verifier`` mode and
    ``seed`` (None: the scenario's), writing its event log to ``events_path`` when given (in this
    process, so that two runs can be compared byte for byte). ``max_kernel_events`` is the run's
    ``--max-events`` budget (:class:`~wddmsim.runner.stop.RunStop`): a run that needs more kernel
    events ends early, cleanly, with the outcome ``max_events`` (a runaway, like :class:`Runaway`,
    which ``max_events`` events of the log raise).

    A refusal to build the system the way ``wddmsim run`` refuses it (a setting the driver refuses,
    an adapter Windows would not start, an application call that fails at creation) is the outcome
    ``refused``; any other exception (the model crashing, a ledger violation, :class:`Runaway`)
    propagates to the caller, which counts it."""
    from ..dxgkrnl import ApiError
    from ..dxgkrnl.errors import AdapterStartError
    from ..runner.stop import RunStop
    from ..scenario import ScenarioError, scenario_from_dict
    from ..runner.system import ConfigError, System
    from ..trace import JsonlSink

    from ..scenario import Scenario

    if isinstance(data, Scenario):
        scenario = data
    else:
        try:
            scenario = scenario_from_dict(data, "<fuzz>")
        except ScenarioError as e:
            return RunOutcome("invalid", message=str(e))
    inner = JsonlSink(events_path, process=False) if events_path else None
    sink = _CountingSink(max_events, inner)
    try:
        try:
            system = System(scenario, seed=seed, trace=sink, verifier=verifier)
        except (ConfigError, AdapterStartError) as e:
            return RunOutcome("refused", sink.count, message="; ".join(map(str, e.problems)))
        except ApiError as e:
            return RunOutcome("refused", sink.count, message=str(e))
        result = system.run(stop=RunStop(max_events=max_kernel_events))
    finally:
        if inner is not None:
            inner.close()
    event, fields = sink.last
    if event != "LogEnd":
        raise AssertionError(f"the log ends with {event}, not LogEnd")
    return RunOutcome(fields["reason"], sink.count, result.end)
