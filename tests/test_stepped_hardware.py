"""A GPU in stepped mode under hardware scheduling (``engine_mode = "stepped"``, ``scheduling =
"hardware"``). A ``StepEngine`` that reaches an engine with no context loaded (the GPU's scheduler
saved the last one, whose ring registers the engine still holds) must not run that stale ring: the
steps wait for the scheduler's next load. Two scenarios the fuzz campaign found crashing with
EngineFault ("context loaded while held", "context loaded while waiting") now run to their end
with every packet accounted for."""

from pathlib import Path

import pytest

from wddmsim.scenario import load_scenario
from wddmsim.runner.system import System
from wddmsim.trace import ListSink

DATA = Path(__file__).resolve().parent / "data" / "stepped"

# (virtual time, packets submitted, completed, kernel events, packets in flight at the end)
RUNS = {
    "hardware-977": (11_000_000, 237, 14, 580, 216),  # tools/fuzz.py --seed 0, scenario 977
    "hardware-1774": (27_000_000, 44, 26, 238, 18),  # tools/fuzz.py --seed 1919, scenario 1774
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_step_waits_for_the_schedulers_next_load(name):
    sink = ListSink()
    s = System(load_scenario(str(DATA / f"{name}.toml")), trace=sink).run().summary
    assert (s["virtual_time_ns"], s["packets_submitted"], s["packets_completed"], s["events"],
            s["ledger"]["packets"]["in_flight"]) == RUNS[name]
    assert "bugcheck" not in s
    assert sink.events[-1]["event"] == "LogEnd" and sink.events[-1]["reason"] == "time"
    assert len(sink.of("ScenarioCall")) >= 1 and {e["api"] for e in sink.of("ScenarioCall")} >= {"StepEngine"}


def test_an_idle_engine_of_a_hardware_scheduler_banks_its_steps():
    sc = load_scenario(str(DATA / "hardware-1774.toml"))
    system = System(sc)
    engine = system.gpu.engines[2]
    assert engine.listener is not None and engine.idle
    engine.rptr, engine.wptr = 0, 32  # a saved context's ring left in the registers
    engine.step(2)
    assert engine.idle and engine._steps == 2
