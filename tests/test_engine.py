"""The GPU's engines: ring, doorbell, timing model, stepped mode, waits and the interrupt line."""

from wddmsim.gpu import commands as C
from wddmsim.gpu.device import GPU, EngineSpec
from wddmsim.sim import Simulator


def make(mode="timed"):
    sim = Simulator()
    gpu = GPU(sim, [EngineSpec("3D", "3d", command_cost=100, bandwidth=4.0)], [("VRAM", "memory", 1 << 20, False), ("Ap", "aperture", 1 << 20, False)])
    e = gpu.engines[0]
    e.program_ring(0x10000, 4096)
    e.set_mode(mode)
    irqs = []
    gpu.irq.connect(lambda msg: (irqs.append((sim.now, gpu.irq.status)), gpu.irq.ack(gpu.irq.status), True)[-1])
    return sim, gpu, e, irqs


def submit(gpu, e, data: bytes):
    gpu.memory.write(0x10000 + e.wptr, data)
    e.doorbell((e.wptr + len(data)) % e.ring_size)


def test_timed_packet_costs_commands_plus_work_and_interrupts_once():
    sim, gpu, e, irqs = make()
    gpu.memory.write(0x20000, C.work(1000) + C.fill(0x30000, 8, 0xAABBCCDD))
    submit(gpu, e, C.indirect(0x20000, 12 + 24) + C.fence(0x40000, 7, interrupt=True))
    sim.run()
    # INDIRECT 100 + WORK 100+1000 + FILL 100 + 8/4 + FENCE 100
    assert gpu.memory.read_u64(0x40000) == 7
    assert irqs == [(1402, 1)]
    assert gpu.memory.read(0x30000, 8) == bytes.fromhex("ddccbbaa") * 2
    assert e.busy_ns == 1402 and e.idle and e.rptr == e.wptr


def test_stepped_mode_holds_until_step():
    sim, gpu, e, irqs = make("stepped")
    submit(gpu, e, C.fence(0x40000, 1, interrupt=True) + C.fence(0x40000, 2, interrupt=True))
    sim.run(until=1000)
    assert e.state == "held" and gpu.memory.read_u64(0x40000) == 0
    e.step()
    sim.run(until=2000)
    assert gpu.memory.read_u64(0x40000) == 1 and e.state == "held" and irqs == [(1000, 1)]
    e.step()
    sim.run(until=3000)
    assert gpu.memory.read_u64(0x40000) == 2 and e.idle


def test_wait_blocks_until_memory_changes():
    sim, gpu, e, irqs = make()
    submit(gpu, e, C.wait(0x50000, 3) + C.fence(0x40000, 1, interrupt=True))
    sim.run(until=10_000)
    assert e.state == "waiting"
    sim.at(20_000, lambda: gpu.memory.write_u64(0x50000, 2))
    sim.at(30_000, lambda: gpu.memory.write_u64(0x50000, 3))
    sim.run()
    assert irqs == [(30_100, 1)]


def test_unmapped_aperture_faults_the_engine():
    sim, gpu, e, irqs = make()
    ap = gpu.segments[1].base
    submit(gpu, e, C.fence(ap, 1))
    sim.run()
    assert e.state == "faulted" and "not mapped" in e.fault
    gpu.map_aperture(ap, 0x60000, 4096)
    assert gpu.translate(ap + 8) == 0x60008


def test_every_opcode_has_a_handler_and_every_one_that_lands_is_performed():
    """The command processor is a dispatch table: an issue handler for every opcode of the command
    set (in both modes), and a perform handler for each command that lands at its instant."""
    from wddmsim.gpu import engine as E

    assert set(E._ISSUE) == set(E._ISSUE_STEPPED) == set(C.OPCODE_NAMES)
    lands = {op for op, handler in E._ISSUE.items() if handler in (E.Engine._land, E.Engine._transfer)}
    assert set(C.OPCODE_NAMES) - lands == {C.NOP, C.WORK, C.INDIRECT}
    assert set(E._PERFORM) == lands | {E._OWED, E._LATCH}
    assert {op for op, handler in E._ISSUE_STEPPED.items() if handler is E.Engine._land} == lands
