"""The GPU's interrupt line: a status register of pending causes and one line to the CPU.

A cause (an engine's fence interrupt, a fault, a vsync) sets its bit in ``status``. When the line
goes from idle to asserted, the CPU takes the interrupt at device IRQL at this instant: the
connected handler (the OS's interrupt dispatch, which calls the driver's
``DxgkDdiInterruptRoutine``) runs from the timer heap at DIRQL. The handler acknowledges causes
by writing their bits back (:meth:`InterruptController.ack`, write-one-to-clear); causes still
pending when it returns re-assert the line, as a level-triggered line would.

The line is message number 0 (line-based, not MSI).

Spec: Microsoft's DxgkDdiInterruptRoutine page (the ISR dismisses the interrupt and returns TRUE only
if the adapter interrupted).
"""

from __future__ import annotations

from typing import Callable

from ..sim import DEVICE, Simulator

# Interrupt status bits above the engines' fence bits (the whole layout: docs/gpu.md; gpu/mmio.py
# gathers it for drivers, docs/gpu-programming.md).
#: An engine stopped on a fault.
FAULT_BIT = 1 << 62
#: A cause no engine owns (a misbehaving device; interrupt storms in tests).
SPURIOUS_BIT = 1 << 63


class InterruptController:
    """Pending interrupt causes and the line that tells the CPU about them."""

    __slots__ = ("sim", "status", "handler", "_scheduled", "raised", "spurious")

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.status = 0
        self.handler: Callable[[int], bool] | None = None
        self._scheduled = False
        self.raised = 0  # interrupts delivered to the CPU
        self.spurious = 0  # deliveries the handler did not claim

    def connect(self, handler: Callable[[int], bool]) -> None:
        """Connect the CPU side: ``handler(message_number)`` returns True when it claimed it."""
        self.handler = handler

    def assert_cause(self, bits: int) -> None:
        """Set cause ``bits`` and assert the line (delivery at DIRQL, this instant)."""
        self.status |= bits
        if not self._scheduled:
            self._scheduled = True
            self.sim.soon(self._deliver, irql=DEVICE)

    def ack(self, bits: int) -> None:
        """Clear cause ``bits`` (the driver dismissing the interrupt on the adapter)."""
        self.status &= ~bits

    def _deliver(self) -> None:
        self._scheduled = False
        if not self.status or self.handler is None:
            return
        self.raised += 1
        if not self.handler(0):
            self.spurious += 1
        if self.status and not self._scheduled:
            # Level-triggered: whatever is still pending interrupts again.
            self._scheduled = True
            self.sim.soon(self._deliver, irql=DEVICE)
