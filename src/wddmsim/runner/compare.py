"""The same scenario under the software scheduler and under hardware scheduling, side by side
(``wddmsim compare``): the two runs share processes, contexts, workloads, fences, faults and
seed; only what one scheduler cannot express is translated, and every translation is reported.

- The software run keeps GPU virtual addressing when the scenario uses monitored fences or
  hardware scheduling (so chains and fences work alike); a chain's GPU-side waits become OS-held
  waits (a WAIT command would stall the engine and livelock the quantum scheduler); the contexts'
  hardware-scheduling settings (band, quantum, grace periods, suspends, extra queues,
  DisableGpuTimeout) do not exist there and are dropped.
- The hardware run keeps the reference driver's DDI version if it is WDDM 2.5 or later, else it
  sets wddm2_7 (another driver is run as the scenario names it, and must support hardware
  scheduling itself); a workload hardware scheduling cannot run (memory_pressure, non-blt
  presents) is an error.

Like :mod:`wddmsim.runner.system`, this is assembly code: it knows every part.
"""

from __future__ import annotations

from ..ddi.versions import ddi_version
from ..scenario import scenario_from_dict

#: Context settings that exist only under hardware scheduling, with their software-run values.
_HARDWARE_ONLY = {"band": None, "quantum": None, "suspend_at": None, "hw_queues": 1, "disable_gpu_timeout": False,
                  "realtime_level": 0, "grace_same": 0, "grace_lower": 0}


def variants(scenario) -> tuple[object, object, list[str]]:
    """``(software, hardware, notes)``: the two scenarios to run and what was translated."""
    adapter = scenario.adapter
    notes: list[str] = []
    # The software run.
    gpu_va = bool(adapter.gpu_va) or adapter.scheduling == "hardware" or bool(scenario.fence)
    sw_adapter = adapter.model_copy(update={"scheduling": "software", "gpu_va": gpu_va or None})
    processes = []
    for p in scenario.process:
        contexts = []
        for c in p.context:
            changes = {k: v for k, v in _HARDWARE_ONLY.items() if getattr(c, k) != v}
            if changes:
                notes.append(f"software run: {p.name}/{c.name}: {', '.join(sorted(changes))} dropped "
                             f"(hardware scheduling only)")
            w = c.workload
            if w.kind == "chain" and w.wait == "gpu":
                changes["workload"] = w.model_copy(update={"wait": "os"})
                notes.append(f"software run: {p.name}/{c.name}: the chain's GPU waits are held by the OS instead")
            contexts.append(c.model_copy(update=changes) if changes else c)
        processes.append(p.model_copy(update={"context": contexts}))
    software = scenario.model_copy(update={"adapter": sw_adapter, "process": processes})
    # The hardware run.
    hw_adapter = adapter.model_copy(update={"scheduling": "hardware", "gpu_va": None})
    driver = scenario.driver
    if driver.class_ is None:  # the reference driver: a version with hardware scheduling
        current = driver.settings.get("ddi_version", "wddm2_0")
        version = current if ddi_version(current).value >= ddi_version("wddm2_5").value else "wddm2_7"
        if version != current:
            notes.append(f"hardware run: driver.ddi_version {version} (hardware scheduling needs wddm2_5 or later)")
        driver = driver.model_copy(update={"ddi_version": version})
    hardware = scenario.model_copy(update={"adapter": hw_adapter, "driver": driver})
    return software, hardware, notes


def checked(scenario, where: str):
    """``scenario`` validated again as a scenario file would be (ScenarioError names ``where``,
    the field and the reason when the translation cannot run)."""
    return scenario_from_dict(scenario.model_dump(), where)
