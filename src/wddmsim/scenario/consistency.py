"""The checks that need more than one table of a scenario, run once every field is valid.

:func:`cross_field_problems` finds what one table cannot see alone: names that must be unique
(processes, contexts, fences, compositors' sources and pids), names that must exist (a context's
node, a call's process, context, fence or node, a fault's target), settings of one scheduling mode
used under the other, fences a script or chain names, a chain's members, and the ranges that
depend on the run's length (a storm's interrupts, a script packet's ``repeat``, :mod:`.bounds`).
:func:`scenario_clamps` then cuts what the run takes otherwise than written, each with a warning.
Problems carry their locations from the top of the scenario; :class:`.schema.Scenario` reports
them together (:func:`.problems.conflicts`).
"""

from __future__ import annotations

from ..util.units import format_duration
from .bounds import MAX_REPEAT, MAX_STORM_INTERRUPTS, show
from .calls import MOVABLE_WORKLOADS
from .faults import Fault
from .fields import Location
from .problems import field_path, quoted
from .processes import PRIVILEGED_BANDS, PRIVILEGED_CLASSES
from .workloads import ScriptPacket

# ``Scenario`` in the annotations below is :class:`.schema.Scenario`, which imports this module (so
# this one names it without importing it).

__all__ = ["cross_field_problems", "scenario_clamps"]


def cross_field_problems(scenario: Scenario) -> list[tuple[Location, str]]:
    """Every problem that needs more than one field to see, in file order, with locations from
    the top of the scenario. Empty when the scenario is consistent."""
    problems: list[tuple[Location, str]] = []
    stop_at = scenario.adapter.stop_at
    if stop_at is not None and stop_at >= scenario.duration:
        problems.append((("adapter", "stop_at"), f"the adapter stop at {format_duration(stop_at)} is not before the end of "
                                                 f"the run (duration {format_duration(scenario.duration)})"))
    node_names = [node.name for node in scenario.adapter.nodes]
    first_process: dict[str, int] = {}
    for p, process in enumerate(scenario.process):
        if process.name in first_process and (process.pid is None
                                              or scenario.process[first_process[process.name]].pid is None):
            # Two processes may run one program (a replayed capture's) when each has its pid; then
            # no [[call]] or [[fault]] may name them (checked below).
            problems.append(
                (("process", p, "name"),
                 f"duplicate process name {process.name!r} "
                 f"(process[{first_process[process.name]}] has it)")
            )
        else:
            first_process[process.name] = p
        first_context: dict[str, int] = {}
        for c, context in enumerate(process.context):
            if context.name in first_context:
                problems.append(
                    (("process", p, "context", c, "name"),
                     f"duplicate context name {context.name!r} in process {process.name!r} "
                     f"(process[{p}].context[{first_context[context.name]}] has it)")
                )
            else:
                first_context[context.name] = c
            w = context.workload
            if getattr(w, "vidpn_source", 0) >= len(scenario.adapter.displays):
                problems.append(
                    (("process", p, "context", c, "workload", "vidpn_source"),
                     f"VidPn source {w.vidpn_source} does not exist; the adapter has "
                     f"{len(scenario.adapter.displays)} display(s)")
                )
            if context.node not in node_names:
                problems.append(
                    (("process", p, "context", c, "node"),
                     f"no node named {context.node!r}; the adapter's nodes are "
                     f"{quoted(node_names)}")
                )
    adapter = scenario.adapter
    hardware = adapter.scheduling == "hardware"
    gpu_va = hardware or bool(adapter.gpu_va)
    # [scheduler] policy names the OS's policy or, under hardware scheduling, the GPU's (docs/policies.md).
    from ..policies.load import mode_problems

    sched = scenario.scheduler
    problems += mode_problems(sched.policy, sched.model_extra or {}, sched.settings, hardware)
    fence_names = [f.name for f in scenario.fence]
    for f, name in enumerate(fence_names):
        if name in fence_names[:f]:
            problems.append((("fence", f, "name"), f"duplicate fence name {name!r}"))
    if scenario.fence and not gpu_va:
        problems.append((("fence",), "monitored fences need GPU virtual addressing (adapter.gpu_va = true or "
                                     "adapter.scheduling = \"hardware\")"))
    native_names = {f.name for f in scenario.fence if f.native}
    for f, spec in enumerate(scenario.fence):
        if not spec.native:
            continue
        if not hardware:
            problems.append((("fence", f, "native"), "native GPU fences need hardware scheduling "
                                                     "(adapter.scheduling = \"hardware\")"))
        drv = scenario.driver
        if drv.class_ is None and (drv.settings.get("ddi_version") != "wddm3_2" or drv.settings.get("native_fence") is not True):
            problems.append((("fence", f, "native"), "native GPU fences need a WDDM 3.2 driver that reports "
                                                     "DXGK_VIDSCHCAPS.NativeGpuFence: for the reference driver "
                                                     "driver.ddi_version = \"wddm3_2\" and driver.native_fence = true"))
    if not hardware:
        for n, node in enumerate(adapter.nodes):
            if node.hw_queue_slots is not None:
                problems.append((("adapter", "nodes", n, "hw_queue_slots"),
                                 "hw_queue_slots are the hardware scheduler's; the adapter uses the software "
                                 "scheduler (adapter.scheduling)"))
    chains: dict[str, list[tuple[int, int, int]]] = {}
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            where = ("process", p, "context", c)
            if not hardware:
                for key in ("band", "quantum", "suspend_at"):
                    if getattr(context, key) is not None:
                        problems.append((where + (key,), f"{key} is a hardware-scheduling setting; the adapter "
                                                         f"uses the software scheduler (adapter.scheduling)"))
                if context.hw_queues != 1 or context.disable_gpu_timeout or context.realtime_level \
                        or context.grace_same or context.grace_lower:
                    problems.append((where, "hw_queues, disable_gpu_timeout, realtime_level, grace_same and "
                                            "grace_lower are hardware-scheduling settings; the adapter uses the "
                                            "software scheduler (adapter.scheduling)"))
            if hardware and context.band in PRIVILEGED_BANDS and process.priority not in PRIVILEGED_CLASSES:
                # DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES.priorityBand: FOCUS and REALTIME need a caller
                # holding SE_INC_BASE_PRIORITY_NAME; Windows refuses the request before the driver sees
                # it, so the context could not exist with that band.
                problems.append((where + ("band",),
                                 f"the {context.band} band needs the SE_INC_BASE_PRIORITY_NAME privilege, which the "
                                 f"model gives to processes of priority class high or realtime; process "
                                 f"{process.name!r} is {process.priority}"))
            w = context.workload
            if w.kind == "script":
                for k, packet in enumerate(w.packets):
                    at = where + ("workload", "packets", k)
                    for key in ("wait_fence", "signal_fence"):
                        name = getattr(packet, key)
                        if name is not None and name not in fence_names:
                            problems.append((at + (key,), f"no fence named {name!r}; declare it in a [[fence]] table"))
                    if packet.wait_fence in native_names and packet.wait_by == "os":
                        problems.append((at + ("wait_by",), f"fence {packet.wait_fence!r} is native: the GPU waits for "
                                                            f"it by itself (wait_by = \"gpu\"); the OS holds no queue "
                                                            f"behind a native fence"))
                    if packet.signal_step and packet.signal_fence is None:
                        problems.append((at + ("signal_step",), "signal_step needs a signal_fence"))
                    if packet.wait_fence is not None and packet.wait_by == "gpu" and not hardware:
                        problems.append((at + ("wait_by",), "under the software scheduler GPU waits are the OS's "
                                                            "(wait_by = \"os\"): a WAIT command would stall the node's "
                                                            "engine with the buffer that satisfies it queued behind"))
            if w.kind == "chain":
                if w.wait == "gpu" and not hardware:
                    problems.append((where + ("workload", "wait"),
                                     "under the software scheduler GPU waits are the OS's (wait = \"os\"): a WAIT "
                                     "command stalls the node's engine with the buffer that would satisfy it queued "
                                     "behind, which the quantum scheduler turns into a livelock"))
                if w.fence in native_names and w.wait == "os":
                    problems.append((where + ("workload", "wait"), f"fence {w.fence!r} is native: the GPU waits for "
                                                                   f"it by itself (wait = \"gpu\")"))
                if w.fence not in fence_names:
                    problems.append((where + ("workload", "fence"),
                                     f"no fence named {w.fence!r}; declare it in a [[fence]] table"))
                else:
                    chains.setdefault(w.fence, []).append((w.members, w.position, p))
            elif w.kind == "memory_pressure" and gpu_va:
                problems.append((where + ("workload", "kind"),
                                 "memory_pressure needs VidMm to evict, which it does on allocation lists: use an "
                                 "adapter without GPU virtual addressing"))
            elif w.kind == "frame_loop" and w.present and hardware and w.present_mode == "composed":
                # Flips are checked once the driver's caps are known (system.py: the hardware flip queue).
                problems.append((where + ("workload", "present_mode"),
                                 f"under hardware scheduling presents are blts (DxgkDdiPresentToHwQueue) or flips "
                                 f"through the hardware flip queue; present_mode {w.present_mode!r} is not "
                                 f"modelled there"))
    for name, members in chains.items():
        sizes = {m for m, _, _ in members}
        positions = sorted(pos for _, pos, _ in members)
        where = ("fence", fence_names.index(name))
        if len(sizes) != 1:
            problems.append((where, f"the chain on fence {name!r} has members of different sizes {sorted(sizes)}"))
        else:
            size = sizes.pop()
            if positions != list(range(size)):
                problems.append((where, f"the chain on fence {name!r} has members = {size}: it needs exactly one "
                                        f"context at each position 0..{size - 1}, found positions {positions}"))
    contexts = {(pr.name, c.name) for pr in scenario.process for c in pr.context}
    process_names = [pr.name for pr in scenario.process]
    shared = {n for n in process_names if process_names.count(n) > 1}
    for i, named in [(("call", i), x) for i, x in enumerate(scenario.call)] + \
                    [(("fault", i), x) for i, x in enumerate(scenario.fault)]:
        if named.process in shared:
            problems.append((i + ("process",), f"{named.process!r} names {process_names.count(named.process)} "
                                               f"processes (each with its pid): name a process only one has"))
    for i, call in enumerate(scenario.call):
        where = ("call", i)
        if call.process is not None and call.process not in process_names:
            problems.append((where + ("process",), f"no process named {call.process!r}; the processes are "
                                                   f"{quoted(process_names)}"))
        elif call.context is not None and (call.process, call.context) not in contexts:
            problems.append((where + ("context",), f"no context {call.context!r} in process {call.process!r}"))
        for name in call.fences():
            if name not in fence_names:
                problems.append((where + ("fence",), f"no fence named {name!r}; declare it in a [[fence]] table"))
            elif name in native_names and call.api == "SignalSynchronizationObjectFromCpu" and call.rewind:
                problems.append((where + ("rewind",), f"fence {name!r} is native: AllowFenceRewind is not modelled "
                                                      f"on native fences (their CurrentValue only goes forward)"))
        for name in call.node or ():
            if name not in node_names:
                problems.append((where + ("node",), f"no node named {name!r}; the adapter's nodes are "
                                                    f"{quoted(node_names)}"))
        if call.api == "MoveWork" and call.context is not None and (call.process, call.context) in contexts:
            kind = next(c.workload.kind for pr in scenario.process if pr.name == call.process
                        for c in pr.context if c.name == call.context)
            if kind not in MOVABLE_WORKLOADS:
                problems.append((where + ("context",), f"a {kind} workload cannot be moved; MoveWork moves "
                                                       f"{', '.join(MOVABLE_WORKLOADS)} workloads"))
            if hardware:
                problems.append((where + ("api",), "MoveWork is modelled under the software scheduler only"))
        if call.api == "StepEngine" and adapter.engine_mode != "stepped":
            problems.append((where + ("api",), "StepEngine steps a GPU in stepped mode: set adapter.engine_mode = "
                                               "\"stepped\""))
        if call.api == "SetSchedulingHints" and hardware:
            # (The priority calls reach the driver through DxgkDdiSetContextSchedulingProperties.)
            problems.append((where + ("api",), "SetSchedulingHints informs the software scheduler's policy; under "
                                               "hardware scheduling the GPU decides: use the software scheduler"))
    for f, fault in enumerate(scenario.fault):
        if fault.node is not None and fault.node not in node_names:
            problems.append((("fault", f, "node"),
                             f"no node named {fault.node!r}; the adapter's nodes are {quoted(node_names)}"))
        if fault.process is not None and (fault.process, fault.context) not in contexts:
            problems.append((("fault", f, "context"),
                             f"no context {fault.context!r} in a process named {fault.process!r}"))
    problems += _presenting_problems(scenario, node_names)
    problems += _bound_problems(scenario)
    return problems


def _storm_interrupts(scenario: Scenario, fault: Fault) -> int:
    """How many interrupts an interrupt storm raises within the run (the scenario's duration)."""
    end = min(fault.at + fault.duration, scenario.duration)
    return max(0, -(-(end - fault.at) // fault.interval))


def _submission_cost(scenario: Scenario) -> tuple[int, str]:
    """The CPU time the application's thread spends on each submission, and the setting it comes
    from: DxgkDdiRender (``cpu_cost.render``) under physical addressing, nothing under GPU virtual
    addressing with the software scheduler (DxgkDdiSubmitCommandVirtual costs the application
    nothing), DxgkDdiSubmitCommandToHwQueue (``cpu_cost.submit``) under hardware scheduling."""
    adapter = scenario.adapter
    if adapter.scheduling == "hardware":
        return adapter.cpu_cost.submit, "adapter.cpu_cost.submit"
    if adapter.gpu_va:
        return 0, "GPU virtual addressing under the software scheduler"
    return adapter.cpu_cost.render, "adapter.cpu_cost.render"


def _repeat_fits(scenario: Scenario, start: int, packet: ScriptPacket) -> int | None:
    """How many of a script packet's repeats can matter to the run: the application's thread
    submits them one after the other, each costing it :func:`_submission_cost`, from the packet's
    time on, so submission k ends no earlier than k such costs later; those that end after the end
    of the run are never seen, and one more than the rest keeps the thread busy to the end. None
    when submissions cost nothing (every repeat is queued at once)."""
    cost, _ = _submission_cost(scenario)
    if cost == 0:
        return None
    return max(0, scenario.duration - start - packet.at) // cost + 1


def _bound_problems(scenario: Scenario) -> list[tuple[Location, str]]:
    """Ranges that depend on other fields and that no clamp can meet: a storm of more interrupts
    than one storm may raise, a repeat of more packets than one moment may submit."""
    problems: list[tuple[Location, str]] = []
    for f, fault in enumerate(scenario.fault):
        if fault.kind == "interrupt_storm" and fault.at < scenario.duration:
            n = _storm_interrupts(scenario, fault)
            if n > MAX_STORM_INTERRUPTS:
                problems.append((("fault", f, "interval"),
                                 f"the storm raises {show(n, '')} interrupts within the run (from "
                                 f"{format_duration(fault.at)} to {format_duration(min(fault.at + fault.duration, scenario.duration))}, "
                                 f"one every {format_duration(fault.interval)}); one storm raises at most "
                                 f"{show(MAX_STORM_INTERRUPTS, '')} (each costs the CPU an ISR and a DPC and the log "
                                 f"several lines, and a million takes the simulator tens of seconds): use a longer interval or a shorter duration"))
    for where, w, packet in _script_packets(scenario):
        if packet.repeat <= MAX_REPEAT:
            continue
        fits = _repeat_fits(scenario, w.start, packet)
        if fits is None or fits > MAX_REPEAT:
            cost, source = _submission_cost(scenario)
            room = (f"submissions cost the application no CPU time ({source}), so every repeat is queued "
                    f"at once" if fits is None else
                    f"{show(fits, '')} submissions of {format_duration(cost)} ({source}) fit in the run")
            problems.append((where, f"must be at most {show(MAX_REPEAT, '')}, got {show(packet.repeat, '')}: "
                                    f"{room}; one packets entry submits at most {show(MAX_REPEAT, '')}: split "
                                    f"them over several entries"))
    return problems


def _script_packets(scenario: Scenario):
    """Every ``packets`` entry of every script workload: (the location of its ``repeat``, the
    workload, the entry)."""
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind == "script":
                for k, packet in enumerate(w.packets):
                    yield ("process", p, "context", c, "workload", "packets", k, "repeat"), w, packet


def scenario_clamps(scenario: Scenario) -> list[tuple[Location, str]]:
    """Values the run takes otherwise than written, or that cannot have the effect they ask for,
    each with a warning saying so, with locations from the top of the scenario: a script packet's
    ``repeat`` above 1,000,000 that the run has no time to submit is cut to the submissions the
    run sees (the run is the same, event for event); a fault due at or after the end of the run
    never happens. Cuts are made on ``scenario``."""
    notes: list[tuple[Location, str]] = []
    end = scenario.duration
    for f, fault in enumerate(scenario.fault):
        if fault.at is not None and fault.at >= end:
            notes.append((("fault", f, "at"), f"{format_duration(fault.at)} is not before the end of the run "
                                              f"(duration {format_duration(end)}): the fault never happens"))
    for where, w, packet in _script_packets(scenario):
        fits = _repeat_fits(scenario, w.start, packet)
        if packet.repeat > MAX_REPEAT and fits is not None and fits <= MAX_REPEAT:
            cost, source = _submission_cost(scenario)
            notes.append((where, f"{show(packet.repeat, '')} submissions of {format_duration(cost)} each ({source}) "
                                 f"cannot be made in the {format_duration(max(0, end - w.start - packet.at))} left "
                                 f"of the run (duration {format_duration(end)}): taken as {show(fits, '')}, as many "
                                 f"as the run sees"))
            packet.repeat = fits
    return notes


def _presenting_problems(scenario: Scenario, node_names: list[str]) -> list[tuple[Location, str]]:
    """Process ids, compositors and swap chains: what one table cannot check alone."""
    problems: list[tuple[Location, str]] = []
    pids: dict[int, Location] = {}

    def claim(pid, where: Location) -> None:
        if pid is None:
            return
        if pid in pids:
            problems.append((where, f"process id {pid} is also given to {field_path(pids[pid])}"))
        else:
            pids[pid] = where

    names = {p.name for p in scenario.process}
    for p, process in enumerate(scenario.process):
        claim(process.pid, ("process", p, "pid"))
    sources: dict[int, int] = {}
    displays = len(scenario.adapter.displays)
    hardware = scenario.adapter.scheduling == "hardware"
    for c, comp in enumerate(scenario.compositor):
        where = ("compositor", c)
        if comp.process in names:
            problems.append((where + ("process",), f"{comp.process!r} is also a [[process]]: the compositor's "
                                                   f"process is its own"))
        first = next(i for i, other in enumerate(scenario.compositor) if other.process == comp.process)
        if first != c and comp.pid is not None and comp.pid != scenario.compositor[first].pid:
            problems.append((where + ("pid",), f"the compositor process {comp.process!r} has pid "
                                               f"{scenario.compositor[first].pid} (compositor[{first}])"))
        elif first == c:
            claim(comp.pid, where + ("pid",))
        if comp.vidpn_source >= displays:
            problems.append((where + ("vidpn_source",), f"VidPn source {comp.vidpn_source} does not exist; the "
                                                        f"adapter has {displays} display(s)"))
        elif comp.vidpn_source in sources:
            problems.append((where + ("vidpn_source",), f"VidPn source {comp.vidpn_source} already has a "
                                                        f"compositor (compositor[{sources[comp.vidpn_source]}])"))
        else:
            sources[comp.vidpn_source] = c
        if comp.node is not None and comp.node not in node_names:
            problems.append((where + ("node",), f"no node named {comp.node!r}; the adapter's nodes are "
                                                f"{quoted(node_names)}"))
        if hardware:
            problems.append((where, "the compositor is modelled under the software scheduler only "
                                    "(adapter.scheduling = \"software\")"))
    for p, process in enumerate(scenario.process):
        for c, context in enumerate(process.context):
            w = context.workload
            if w.kind == "swap_chain" and hardware:
                problems.append((("process", p, "context", c, "workload", "kind"),
                                 "swap chains are modelled under the software scheduler only (under hardware "
                                 "scheduling presents are blts: use frame_loop)"))
    return problems
