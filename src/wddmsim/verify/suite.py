"""The conformance suite of ``wddmsim verify``: scenarios by area, each with what a driver that
keeps the contract must show.

Every case is a small scenario on the suite's GPU (:data:`~.kit.NODES`: a 3D engine, a compute engine and
a copy engine, one 60 Hz display) and a list of expectations about the run. A case runs only when
the driver declares what it needs (:class:`Declared`, read from the driver's
``DXGK_DRIVERCAPS``, node metadata and interface version at adapter start): a preemption case needs
``PreemptionAware``, an engine-reset case ``SupportPerEngineTDR``, the hardware-queue cases
hardware scheduling, and so on. The rest are listed as not applicable ("n/a"), with the reason.

Every case, whatever it tests, fails on a bug check, a driver fault or a broken rule (the verifier
runs in strict mode, with the ground-truth checks); its own expectations then say what the run must
have done: every packet retired, a preemption answered with the work resubmitted and finished, a
hung packet's device in error and everyone else's work done, a flip shown no earlier than its
interval allows... Expectations hold for any legal driver: they speak of what the OS saw and what
the GPU did, never of how a particular driver goes about it.

The suite is built in four modules along its seams: :mod:`.kit` (what a driver declares, a case,
a finished run, the scenario helpers and the shared expectations) and the cases by subject,
:mod:`.cases_work` (submission, queues, processes, priorities, fences, paging, NullRendering),
:mod:`.cases_display` (flips, interrupts) and :mod:`.cases_recovery` (preemption, TDR, faults, GPU
virtual addressing, hardware queues). This module gathers the cases in the order the table lists
them; every name the suite ever had is importable from here.
"""

from __future__ import annotations

from .cases_display import flip_cases, interrupt_cases
from .cases_recovery import fault_cases, gpu_va_cases, hardware_cases, preemption_cases, tdr_cases
from .cases_work import (fence_cases, null_rendering_cases, paging_cases, priority_cases, process_cases, queue_cases,
                         submission_cases)
from .kit import (MS, NODES, US, Case, Declared, Outcome, all_of, batches, context, everything_retired,
                  fences_in_order, healthy, memory_is, no_recovery, process, scenario, script)

__all__ = ["AREAS", "CASES", "MS", "NODES", "US", "Case", "Declared", "Outcome", "all_of", "batches", "context",
           "everything_retired", "fences_in_order", "healthy", "memory_is", "no_recovery", "process", "scenario",
           "script"]

#: Every case, in the order the table lists them.
CASES: list[Case] = (submission_cases() + queue_cases() + process_cases() + priority_cases() + fence_cases()
                     + paging_cases() + flip_cases() + interrupt_cases() + null_rendering_cases() + preemption_cases()
                     + tdr_cases() + fault_cases() + gpu_va_cases() + hardware_cases())

#: The areas, in order.
AREAS: tuple[str, ...] = tuple(dict.fromkeys(c.area for c in CASES))

_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), "case ids are unique"
del _ids
