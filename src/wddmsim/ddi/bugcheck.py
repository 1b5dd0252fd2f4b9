"""Bug check codes of the video subsystem and the parameter-1 codes of 0x119.

A model that stops "the way Windows does" stops with one of these codes and four parameters.
:func:`describe` explains each parameter the way the bug check reference does, so a crash record
can be read without the documentation at hand.

Spec: Microsoft's bug check reference pages: "Bug Check 0x116: VIDEO_TDR_FAILURE", 0x117
VIDEO_TDR_TIMEOUT_DETECTED, 0x141 VIDEO_ENGINE_TIMEOUT_DETECTED, 0x142 VIDEO_TDR_APPLICATION_BLOCKED
and "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class BugCheckCode(enum.IntEnum):
    """Stop codes of the graphics kernel (and Driver Verifier's, which the model's strict
    verifier uses for contract violations that have no stop code of their own)."""

    KMODE_EXCEPTION_NOT_HANDLED = 0x1E
    DRIVER_VERIFIER_DETECTED_VIOLATION = 0xC4
    HARDWARE_INTERRUPT_STORM = 0xF2
    DPC_WATCHDOG_VIOLATION = 0x133
    VIDEO_TDR_FAILURE = 0x116
    VIDEO_TDR_TIMEOUT_DETECTED = 0x117
    VIDEO_SCHEDULER_INTERNAL_ERROR = 0x119
    VIDEO_ENGINE_TIMEOUT_DETECTED = 0x141
    VIDEO_TDR_APPLICATION_BLOCKED = 0x142


class VidSchError(enum.IntEnum):
    """Parameter 1 of bug check 0x119 VIDEO_SCHEDULER_INTERNAL_ERROR: which rule was broken."""

    DRIVER_REPORTED_INVALID_FENCE_ID = 0x1
    DRIVER_FAILED_SUBMIT_COMMAND = 0x2
    DRIVER_FAILED_PATCH_COMMAND = 0x3
    DRIVER_INVALID_FLIPQUEUE_LENGTH = 0x4
    DRIVER_FAULTED_SYSTEM_COMMAND = 0x5
    DRIVER_INVALID_ADAPTER_MASK = 0x6
    REPORT_VSYNC_ON_RENDER_ONLY_ADAPTER = 0x7
    INVALID_NODE_MASK = 0x8
    FAILED_CANCEL_COMMAND = 0x9
    REPORTED_INVALID_ABORTED_FENCE = 0xA
    FAILED_SETVIDPNSOURCEMPO_COMMAND = 0xB
    FATAL_PAGE_FAULT = 0xC
    INVALID_DMA_FAULT_PARAMETERS = 0xD
    REPORT_VSYNC_PLANE_OUT_OF_RANGE = 0xE
    FAILED_POSTMPOPRESENT_COMMAND = 0xF
    UNEXPECTED_INTERRUPT_AFTER_RESET = 0x10
    INCORRECT_SUSPEND_FENCE = 0x11
    FAILED_UPDATE_MONITORED_VALUE = 0x12
    FAILED_UPDATE_CURRENT_VALUE = 0x13


_P1_MEANING = {
    VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID: "The driver reported an invalid fence id.",
    VidSchError.DRIVER_FAILED_SUBMIT_COMMAND: "The driver failed a command submission (DxgkDdiSubmitCommand or DxgkDdiPreemptCommand).",
    VidSchError.DRIVER_FAILED_PATCH_COMMAND: "The driver failed to patch a DMA buffer (DxgkDdiPatch).",
    VidSchError.DRIVER_INVALID_FLIPQUEUE_LENGTH: "The driver reported an invalid flip capability.",
    VidSchError.DRIVER_FAULTED_SYSTEM_COMMAND: "The driver failed a system or paging command.",
    VidSchError.DRIVER_INVALID_ADAPTER_MASK: "NULL PhysicalAdapterMask for an interrupt on a multi-adapter GPU.",
    VidSchError.REPORT_VSYNC_ON_RENDER_ONLY_ADAPTER: "A display vsync was reported on a render-only adapter.",
    VidSchError.INVALID_NODE_MASK: "The node causing the reset did not have its bit set.",
    VidSchError.FAILED_CANCEL_COMMAND: "DxgkDdiCancelCommand failed.",
    VidSchError.REPORTED_INVALID_ABORTED_FENCE: "LastAbortedFenceId is outside [last completed, last submitted].",
    VidSchError.FAILED_SETVIDPNSOURCEMPO_COMMAND: "SetVidPnSourceAddressWithMultiPlaneOverlay failed.",
    VidSchError.FATAL_PAGE_FAULT: "The page-fault flags report a fatal hardware error.",
    VidSchError.INVALID_DMA_FAULT_PARAMETERS: "Inconsistent PageFaultFlags in a DMA page-fault interrupt.",
    VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE: "VSync for a plane index beyond the GPU's overlay planes.",
    VidSchError.FAILED_POSTMPOPRESENT_COMMAND: "Not used.",
    VidSchError.UNEXPECTED_INTERRUPT_AFTER_RESET: "An engine interrupted after its reset, before the OS resumed it.",
    VidSchError.INCORRECT_SUSPEND_FENCE: "A suspend-completed fence the OS has not issued yet.",
    VidSchError.FAILED_UPDATE_MONITORED_VALUE: "A native fence monitored-value update failed.",
    VidSchError.FAILED_UPDATE_CURRENT_VALUE: "A native fence current-value update failed.",
}

# What parameters 2..4 hold, per parameter-1 code, where the bug check 0x119 page says.
_P234 = {
    VidSchError.DRIVER_FAILED_SUBMIT_COMMAND: ("NTSTATUS returned by the driver", "address of the DDI's argument structure", "internal scheduler data"),
    VidSchError.DRIVER_FAILED_PATCH_COMMAND: ("internal scheduler data", "internal scheduler data", "internal scheduler data"),
    VidSchError.FAILED_CANCEL_COMMAND: ("NTSTATUS returned by the driver", "address of the DXGKARG_CANCELCOMMAND", "internal scheduler data"),
    VidSchError.REPORTED_INVALID_ABORTED_FENCE: ("LastAbortedFenceId reported", "last completed fence id", "internal scheduler data"),
}


@dataclass(frozen=True)
class BugCheck:
    """A stop: the code and its four parameters."""

    code: int
    p1: int = 0
    p2: int = 0
    p3: int = 0
    p4: int = 0

    @property
    def name(self) -> str:
        try:
            return BugCheckCode(self.code).name
        except ValueError:
            return f"0x{self.code:X}"

    def __str__(self) -> str:
        return f"BugCheck 0x{self.code:X} ({self.name}) {{0x{self.p1:X}, 0x{self.p2:X}, 0x{self.p3:X}, 0x{self.p4:X}}}"


def describe(bc: BugCheck) -> list[str]:
    """One line per parameter explaining it, as the bug check reference would."""
    lines = [str(bc)]
    if bc.code == BugCheckCode.KMODE_EXCEPTION_NOT_HANDLED:
        lines.append(f"Arg1 0x{bc.p1:X}: the exception code (the model's: the NTSTATUS that stands for the Python "
                     f"exception the driver raised)")
        lines.append("Arg2 0x0: the address where the exception occurred (the crash record holds the traceback)")
        return lines
    if bc.code == BugCheckCode.HARDWARE_INTERRUPT_STORM:
        lines.append(f"Arg1 0x{bc.p1:X}: the address of the ISR connected to the storming line (the model has none)")
        lines.append(f"Arg2 0x{bc.p2:X}: the ISR's context value (the miniport's adapter handle)")
        lines.append(f"Arg3 0x{bc.p3:X}: the address of the interrupt object (the model has none)")
        lines.append(f"Arg4 0x{bc.p4:X}: 1 when the ISR is not chained (the model's line has one ISR)")
        return lines
    if bc.code == BugCheckCode.DPC_WATCHDOG_VIOLATION:
        lines.append(f"Arg1 0x{bc.p1:X}: 1, the processor spent too long at DISPATCH_LEVEL or above in a row")
        lines.append(f"Arg2 0x{bc.p2:X}: the model's limit: DPCs at one instant of virtual time")
        return lines
    if bc.code == BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR:
        try:
            p1 = VidSchError(bc.p1)
        except ValueError:
            lines.append(f"Arg1 0x{bc.p1:X}: internal OS state error (memory corruption or bad hardware).")
            return lines
        lines.append(f"Arg1 0x{bc.p1:X} {p1.name}: {_P1_MEANING[p1]}")
        meanings = _P234.get(p1, ("not documented", "not documented", "not documented"))
        for i, (value, meaning) in enumerate(zip((bc.p2, bc.p3, bc.p4), meanings), start=2):
            lines.append(f"Arg{i} 0x{value:X}: {meaning}")
    return lines
