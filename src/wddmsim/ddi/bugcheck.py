"""Bug check codes of the video subsystem, and what each of their four parameters means.

A model that stops "the way Windows does" stops with one of these codes and four parameters; the
model also records the live dumps Windows writes for a recovered timeout (0x117, 0x141, 0x142).
:func:`describe_parameters` explains each parameter of a code in a sentence: what Microsoft's bug
check reference says it holds, and what the model puts there where that differs (the model has no
kernel addresses of its own, so an "internal pointer" is an address in the model's memory or 0).
Where Microsoft documents nothing for a parameter, the line says exactly that. :func:`describe` is
the same with the bug check's own line first; :func:`meaning` is the one-line meaning of a code.

Spec (Microsoft's bug check reference, https://learn.microsoft.com/windows-hardware/drivers/debugger/):

- "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR" (bug-check-0x119---video-scheduler-internal-error):
  the parameter-1 subcodes 0x1 .. 0x13, 0x400, 0xE00, 0x1000 and 0x10000; the page calls
  parameter 1 the only parameter of interest and documents parameters 2 to 4 for no subcode.
  Parameters 2 to 4 of four subcodes are documented on other pages: 0x2 on the
  DXGKDDI_SUBMITCOMMAND and DXGKDDI_PREEMPTCOMMAND pages, 0x3 on the DXGKDDI_PATCH page, 0x9 on
  the DXGKDDI_CANCELCOMMAND page (learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/), and
  0xA on "TDR in Windows 8 and later"
  (https://learn.microsoft.com/windows-hardware/drivers/display/tdr-changes-in-windows-8).
- "Bug Check 0x116: VIDEO_TDR_FAILURE" (bug-check-0x116---video-tdr-failure),
  "Bug Check 0x117: VIDEO_TDR_TIMEOUT_DETECTED" (bug-check-0x117---video-tdr-timeout-detected),
  "Bug Check 0x141: VIDEO_ENGINE_TIMEOUT_DETECTED" (bug-check-0x141---video-engine-timeout-detected),
  "Bug Check 0x142: VIDEO_TDR_APPLICATION_BLOCKED" (bug-check-0x142--video-tdr-application-blocked).
- "Bug Check 0x1A8: VIDEO_DXGKRNL_BLACK_SCREEN_LIVEDUMP"
  (bug-check-0x1a8--video-dxgkrnl-black-screen-livedump): parameter 1 is the source of the dump.
- "Bug Check 0x1E: KMODE_EXCEPTION_NOT_HANDLED", "Bug Check 0xC4: DRIVER_VERIFIER_DETECTED_VIOLATION",
  "Bug Check 0xF2: HARDWARE_INTERRUPT_STORM", "Bug Check 0x133: DPC_WATCHDOG_VIOLATION".
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class BugCheckCode(enum.IntEnum):
    """Stop codes of the graphics kernel (and Driver Verifier's, which the model's strict
    verifier uses for contract violations that have no stop code of their own), and the live-dump
    codes of the graphics kernel (never a real stop)."""

    KMODE_EXCEPTION_NOT_HANDLED = 0x1E
    DRIVER_VERIFIER_DETECTED_VIOLATION = 0xC4
    HARDWARE_INTERRUPT_STORM = 0xF2
    DPC_WATCHDOG_VIOLATION = 0x133
    VIDEO_TDR_FAILURE = 0x116
    VIDEO_TDR_TIMEOUT_DETECTED = 0x117
    VIDEO_SCHEDULER_INTERNAL_ERROR = 0x119
    VIDEO_ENGINE_TIMEOUT_DETECTED = 0x141
    VIDEO_TDR_APPLICATION_BLOCKED = 0x142
    VIDEO_DXGKRNL_BLACK_SCREEN_LIVEDUMP = 0x1A8


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
    VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID: "the driver reported a fence id the scheduler cannot accept.",
    VidSchError.DRIVER_FAILED_SUBMIT_COMMAND: "the driver failed a command submission (DxgkDdiSubmitCommand, or a "
                                              "preemption request through DxgkDdiPreemptCommand).",
    VidSchError.DRIVER_FAILED_PATCH_COMMAND: "the driver failed to patch a DMA buffer (DxgkDdiPatch returned an error).",
    VidSchError.DRIVER_INVALID_FLIPQUEUE_LENGTH: "the driver reported an invalid flip capability.",
    VidSchError.DRIVER_FAULTED_SYSTEM_COMMAND: "the driver failed a system command or a paging command.",
    VidSchError.DRIVER_INVALID_ADAPTER_MASK: "on a GPU made of several physical adapters, the driver reported an "
                                             "interrupt with a NULL PhysicalAdapterMask.",
    VidSchError.REPORT_VSYNC_ON_RENDER_ONLY_ADAPTER: "the driver reported a display vsync on an adapter that only "
                                                     "renders.",
    VidSchError.INVALID_NODE_MASK: "the node that caused the reset does not have its own bit set in the node mask "
                                   "the driver gave.",
    VidSchError.FAILED_CANCEL_COMMAND: "the driver failed a cancel command (DxgkDdiCancelCommand returned an error).",
    VidSchError.REPORTED_INVALID_ABORTED_FENCE: "the driver reported an aborted fence id outside the valid range "
                                                "(LastAbortedFenceId below the last completed or above the last "
                                                "submitted fence id).",
    VidSchError.FAILED_SETVIDPNSOURCEMPO_COMMAND: "the driver failed a SetVidPnSourceAddressWithMultiPlaneOverlay "
                                                  "command.",
    VidSchError.FATAL_PAGE_FAULT: "the driver's PageFaultFlags say the hardware failed fatally.",
    VidSchError.INVALID_DMA_FAULT_PARAMETERS: "the driver reported PageFaultFlags that do not fit together in a DMA "
                                              "page-fault interrupt.",
    VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE: "the driver reported a vsync for a plane index beyond the overlay "
                                                 "planes the GPU supports.",
    VidSchError.FAILED_POSTMPOPRESENT_COMMAND: "not used (Microsoft's page lists the code as unused).",
    VidSchError.UNEXPECTED_INTERRUPT_AFTER_RESET: "an engine raised an interrupt after it was reset and before the "
                                                  "OS resumed it.",
    VidSchError.INCORRECT_SUSPEND_FENCE: "the driver reported a suspend-completed fence the OS has not issued.",
    VidSchError.FAILED_UPDATE_MONITORED_VALUE: "updating a native fence's monitored value failed.",
    VidSchError.FAILED_UPDATE_CURRENT_VALUE: "updating a native fence's current value failed.",
}

#: The other parameter-1 values the 0x119 page documents: the OS's own errors, never the model's.
_P1_INTERNAL = {
    0x400: "an internal OS state error, usually memory corruption or failing hardware.",
    0xE00: "the OS ran out of the packets it keeps in reserve for passive flip requests.",
    0x1000: "an internal OS state error, usually memory corruption or failing hardware.",
    0x10000: "an internal OS state error, usually memory corruption or failing hardware.",
}


@dataclass(frozen=True)
class _Param:
    """One parameter: what Microsoft documents it holds (None: Microsoft documents nothing), what
    the model puts there where that says more or differs, and how to name its value
    (``status``: an NTSTATUS; ``operation``: a paging operation; ``interrupt``: an interrupt type)."""

    ms: str | None
    model: str = ""
    kind: str = ""


_NOTHING = _Param(None)
_RESERVED = _Param("reserved")

_TDR_CONTEXT = "a pointer to the graphics kernel's internal TDR recovery context (TDR_RECOVERY_CONTEXT), if there is one"
_OWNER_TAG = _Param("a pointer into the driver module held responsible (for example its owner tag)",
                    "0, as the model's driver is no loaded image")
_BUCKET_KEY = _Param("a secondary bucketing key specific to the driver", "0, as the model keeps none")

#: Parameters of the codes whose parameters do not depend on parameter 1.
_FIXED: dict[int, tuple[_Param, _Param, _Param, _Param]] = {
    BugCheckCode.VIDEO_TDR_FAILURE: (
        _Param(_TDR_CONTEXT, "the address of its recovery record when TdrLevel 1 stops at the first timeout; else 0"),
        _OWNER_TAG,
        _Param("the error code (NTSTATUS) of the last operation that failed, if there is one",
               "the status DxgkDdiResetFromTimeout or DxgkDdiRestartFromTimeout returned; 0 when no call failed",
               "status"),
        _Param("internal data that depends on the context, if there is any",
               "the node that timed out when TdrLevel 1 stops at once; how many timeouts fell within "
               "TdrLimitTime when there were too many; 0 when a recovery call failed"),
    ),
    BugCheckCode.VIDEO_TDR_TIMEOUT_DETECTED: (
        _Param(_TDR_CONTEXT, "0, as the model's live dumps keep no recovery context"),
        _OWNER_TAG,
        _BUCKET_KEY,
        _Param("internal data that depends on the context, if there is any",
               "9 when an engine timeout was promoted to an adapter reset, as the TdrReason "
               "TdrEngineTimeoutPromotedToAdapterReset; else 0"),
    ),
    BugCheckCode.VIDEO_ENGINE_TIMEOUT_DETECTED: (
        _Param(_TDR_CONTEXT, "0, as the model's live dumps keep no recovery context"),
        _OWNER_TAG,
        _BUCKET_KEY,
        _Param("internal data that depends on the context, if there is any", "the ordinal of the node that timed out"),
    ),
    BugCheckCode.VIDEO_TDR_APPLICATION_BLOCKED: (
        _Param(_TDR_CONTEXT, "0, as the model's live dumps keep no recovery context"),
        _OWNER_TAG,
        _BUCKET_KEY,
        _Param("the id of the process that is blocked from the GPU"),
    ),
    BugCheckCode.KMODE_EXCEPTION_NOT_HANDLED: (
        _Param("the exception code nobody handled",
               "the NTSTATUS standing for the Python exception the driver raised: STATUS_INTEGER_DIVIDE_BY_ZERO "
               "for ZeroDivisionError, STATUS_ACCESS_VIOLATION for an attribute, index, key or type error",
               "exception"),
        _Param("the address where the exception happened", "0; the crash record holds the driver's traceback instead"),
        _Param("an information parameter of the exception record", "0, as a Python exception has none"),
        _Param("a further information parameter of the exception record; for an access violation, the address "
               "the code tried to reach", "0, as a Python exception has none"),
    ),
    BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION: (
        _Param("which kind of violation Driver Verifier found, as the 0xC4 page lists them",
               "the number of the DDI contract rule the driver broke; `wddmsim rules N` says what the rule asks"),
        _Param("depends on parameter 1", "the address of the structure that broke the rule"),
        _Param("depends on parameter 1", "0"),
        _Param("depends on parameter 1", "0"),
    ),
    BugCheckCode.HARDWARE_INTERRUPT_STORM: (
        _Param("the address of the ISR (or of the first ISR in the chain) on the storming interrupt vector",
               "0, as the model's ISR has no address"),
        _Param("the ISR's context value", "the miniport's adapter handle"),
        _Param("the address of the interrupt object of the storming vector", "0, as the model has no interrupt object"),
        _Param("1 when the ISR is not chained, 2 when it is", "1, as the model's interrupt line has one ISR"),
    ),
    BugCheckCode.VIDEO_DXGKRNL_BLACK_SCREEN_LIVEDUMP: (
        _Param("what asked for the black-screen live dump", kind="blackscreen"),
        _RESERVED, _RESERVED, _RESERVED,
    ),
}

#: Parameter 1 of 0x1A8: where the black-screen live dump came from.
_BLACK_SCREEN_SOURCE = {
    0x1: "the black-screen hotkey",
    0x2: "the volume key combination",
    0x4: "the graphics kernel itself",
    0x8: "a long press of the power button",
    0x9: "reserved for Microsoft's internal testing",
    0xA: "a monitor that is connected while no mode set could enable a single path (triggered automatically)",
}

#: Parameters 2 to 4 of 0x119, per parameter 1, where a page documents them or the model writes them.
_VIDSCH: dict[int, tuple[_Param, _Param, _Param]] = {
    VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID: (
        _Param(None, "the fence id the driver reported"),
        _Param(None, "the last fence id the OS submitted on the node; for a DmaPageFaulted report, the address of "
                     "the interrupt data"),
        _Param(None, "the last fence id completed on the node; for a DmaPageFaulted report, the node's ordinal"),
    ),
    VidSchError.DRIVER_FAILED_SUBMIT_COMMAND: (
        _Param("the NTSTATUS the driver's call returned", kind="status"),
        _Param("the address of the call's argument structure: DXGKARG_SUBMITCOMMAND, or DXGKARG_PREEMPTCOMMAND for a "
               "preemption request", "also DXGKARG_SUBMITCOMMANDVIRTUAL or DXGKARG_SUBMITCOMMANDTOHWQUEUE"),
        _Param("the address of an internal scheduler structure",
               "the node's ordinal in the high 32 bits and the fence id in the low 32; for a hardware-queue "
               "submission, its progress fence id"),
    ),
    VidSchError.DRIVER_FAILED_PATCH_COMMAND: (
        _Param("the address of an internal scheduler structure", "the address of the DXGKARG_PATCH"),
        _Param("the address of an internal scheduler structure", "the fence id of the packet"),
        _Param("the address of an internal scheduler structure", "the node's ordinal"),
    ),
    VidSchError.DRIVER_FAULTED_SYSTEM_COMMAND: (
        _Param(None, "the NTSTATUS DxgkDdiBuildPagingBuffer returned", "status"),
        _Param(None, "the address of the DXGKARG_BUILDPAGINGBUFFER"),
        _Param(None, "the paging operation asked for", "operation"),
    ),
    VidSchError.INVALID_NODE_MASK: (
        _Param(None, "the ordinal of the node being reset"),
        _Param(None, "the DependentNodeOrdinalMask the driver answered"),
        _NOTHING,
    ),
    VidSchError.FAILED_CANCEL_COMMAND: (
        _Param("the NTSTATUS DxgkDdiCancelCommand returned", kind="status"),
        _Param("the address of the DXGKARG_CANCELCOMMAND"),
        _Param("the address of an internal scheduler structure", "the sequence number of the cancelled packet"),
    ),
    VidSchError.REPORTED_INVALID_ABORTED_FENCE: (
        _Param("the LastAbortedFenceId the driver returned"),
        _Param("the last completed fence id"),
        _Param("an internal OS value", "the node's ordinal in the high 32 bits and its last submitted fence id in "
                                       "the low 32"),
    ),
    VidSchError.FATAL_PAGE_FAULT: (
        _Param(None, "the fence id of the faulted packet"),
        _Param(None, "the address of the interrupt data"),
        _Param(None, "the node's ordinal"),
    ),
    VidSchError.INVALID_DMA_FAULT_PARAMETERS: (
        _Param(None, "the fence id of the faulted packet"),
        _Param(None, "the address of the interrupt data"),
        _Param(None, "the node's ordinal"),
    ),
    VidSchError.UNEXPECTED_INTERRUPT_AFTER_RESET: (
        _Param(None, "the interrupt type the driver reported", "interrupt"),
        _Param(None, "the ordinal of the node that was reset"),
        _NOTHING,
    ),
    VidSchError.INCORRECT_SUSPEND_FENCE: (
        _Param(None, "the ContextSuspendFence the driver reported"),
        _Param(None, "the handle of the context"),
        _Param(None, "the last suspend fence the OS issued for it"),
    ),
    VidSchError.FAILED_UPDATE_MONITORED_VALUE: (
        _Param(None, "the NTSTATUS DxgkDdiUpdateMonitoredValues returned", "status"), _NOTHING, _NOTHING,
    ),
    VidSchError.FAILED_UPDATE_CURRENT_VALUE: (
        _Param(None, "the NTSTATUS DxgkDdiUpdateCurrentValuesFromCpu returned", "status"), _NOTHING, _NOTHING,
    ),
}

_MEANING = {
    BugCheckCode.KMODE_EXCEPTION_NOT_HANDLED: "kernel-mode code raised an exception that no handler caught.",
    BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION: "Driver Verifier caught a driver breaking a rule.",
    BugCheckCode.HARDWARE_INTERRUPT_STORM: "an interrupt line stayed asserted: the kernel detected an interrupt storm.",
    BugCheckCode.DPC_WATCHDOG_VIOLATION: "the DPC watchdog fired: one DPC ran too long, or the processor stayed at "
                                         "DISPATCH_LEVEL or above too long in all.",
    BugCheckCode.VIDEO_TDR_FAILURE: "recovering from a GPU timeout failed, or timeouts came too often.",
    BugCheckCode.VIDEO_TDR_TIMEOUT_DETECTED: "the display driver did not answer in time and was reset; a live "
                                             "dump of a recovered timeout, never a real stop.",
    BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR: "the video scheduler found a fatal violation; parameter 1 says "
                                                 "which.",
    BugCheckCode.VIDEO_ENGINE_TIMEOUT_DETECTED: "one of the GPU's engines did not answer in time; the model writes "
                                                "it as the live dump of an engine reset.",
    BugCheckCode.VIDEO_TDR_APPLICATION_BLOCKED: "an application was blocked from the GPU after too many timeouts; "
                                                "a live dump, never a real stop.",
    BugCheckCode.VIDEO_DXGKRNL_BLACK_SCREEN_LIVEDUMP: "a live dump the graphics kernel writes for a black screen; "
                                                      "never a real stop (the model never writes it).",
}

#: Exception codes the model's driver faults carry that NTSTATUS does not list.
_EXCEPTION_NAMES = {
    0xC0000005: "STATUS_ACCESS_VIOLATION",
    0xC0000094: "STATUS_INTEGER_DIVIDE_BY_ZERO",
    0xC00000FD: "STATUS_STACK_OVERFLOW",
    0xC0000144: "STATUS_UNHANDLED_EXCEPTION",
    0xC0000420: "STATUS_ASSERTION_FAILURE",
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


def meaning(code: int) -> str:
    """What bug check ``code`` means, in one sentence that starts with its name."""
    try:
        c = BugCheckCode(code)
    except ValueError:
        return f"0x{code:X}: a code the model does not know; Microsoft's bug check code reference lists every code."
    return f"{c.name}: {_MEANING[c]}"


def _value_name(kind: str, value: int) -> str:
    """``": NAME"`` for a value whose kind names it, else ``""``."""
    if kind in ("status", "exception"):
        from .ntstatus import NTSTATUS

        v = value & 0xFFFFFFFF
        try:
            return f": {NTSTATUS(v).name}"
        except ValueError:
            return f": {_EXCEPTION_NAMES[v]}" if v in _EXCEPTION_NAMES else ""
    enum_type = None
    if kind == "operation":
        from .enums import DXGK_BUILDPAGINGBUFFER_OPERATION as enum_type
    elif kind == "interrupt":
        from .enums import DXGK_INTERRUPT_TYPE as enum_type
    if enum_type is not None:
        try:
            return f": {enum_type(value).name}"
        except ValueError:
            return ""
    return ""


def _line(i: int, value: int, p: _Param, subcode: int | None = None) -> str:
    head = f"Arg{i} 0x{value:X}: "
    named = _value_name(p.kind, value)
    if p.ms is None:
        where = f" of subcode 0x{subcode:X}" if subcode is not None else ""
        text = f"Microsoft documents nothing for this parameter{where}"
        return head + text + (f"; the model puts here {p.model}{named}" if p.model else "; the model leaves it 0")
    if p.kind == "blackscreen":
        source = _BLACK_SCREEN_SOURCE.get(value)
        return head + p.ms + (f": {source}" if source else ": a source Microsoft's page does not list")
    return head + p.ms + named + (f" (the model: {p.model})" if p.model else "")


def _vidsch_lines(values: tuple[int, int, int, int]) -> list[str]:
    p1 = values[0]
    try:
        sub = VidSchError(p1)
    except ValueError:
        sub = None
    if sub is not None:
        out = [f"Arg1 0x{p1:X} {sub.name}: {_P1_MEANING[sub]}"]
    elif p1 in _P1_INTERNAL:
        out = [f"Arg1 0x{p1:X}: {_P1_INTERNAL[p1]}"]
    else:
        out = [f"Arg1 0x{p1:X}: a subcode Microsoft's 0x119 page does not list"]
    rest = _VIDSCH.get(p1, (_NOTHING, _NOTHING, _NOTHING))
    for i, (value, p) in enumerate(zip(values[1:], rest), start=2):
        out.append(_line(i, value, p, p1))
    return out


def _dpc_watchdog_lines(values: tuple[int, int, int, int]) -> list[str]:
    p1, p2, p3, p4 = values
    if p1 == 0:
        return [f"Arg1 0x{p1:X}: one DPC or ISR ran past its time allotment",
                f"Arg2 0x{p2:X}: the DPC's time count, in clock ticks",
                f"Arg3 0x{p3:X}: the DPC time allotment, in clock ticks",
                f"Arg4 0x{p4:X}: reserved"]
    if p1 == 1:
        return [f"Arg1 0x{p1:X}: the processor spent too long in all at DISPATCH_LEVEL or above",
                f"Arg2 0x{p2:X}: the watchdog period (the model: its limit, DPCs at one instant of virtual time, "
                f"since it counts DPCs rather than clock ticks)",
                f"Arg3 0x{p3:X}: reserved",
                f"Arg4 0x{p4:X}: reserved"]
    return [f"Arg1 0x{p1:X}: a value Microsoft's 0x133 page does not list (it documents 0 and 1)"] + [
        f"Arg{i} 0x{v:X}: Microsoft documents nothing for this parameter when parameter 1 is 0x{p1:X}"
        for i, v in enumerate(values[1:], start=2)]


def describe_parameters(code: int, parameters: Sequence[int]) -> list[str]:
    """One line per parameter of bug check ``code`` (``parameters``: P1..P4; missing ones are 0):
    ``"Arg1 0x2 DRIVER_FAILED_SUBMIT_COMMAND: ..."``, ``"Arg2 0xC0000017 (STATUS_NO_MEMORY): ..."``.
    Each says what Microsoft documents for the parameter, and what the model puts there where that
    says more; where Microsoft documents nothing, the line says so. Report writers call this with the
    ``code`` and ``p1``..``p4`` of a ``BugCheck`` or ``LiveDump`` event."""
    values = tuple(int(v) for v in parameters[:4]) + (0,) * (4 - min(len(parameters), 4))
    if code == BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR:
        return _vidsch_lines(values)
    if code == BugCheckCode.DPC_WATCHDOG_VIOLATION:
        return _dpc_watchdog_lines(values)
    fixed = _FIXED.get(code)
    if fixed is None:
        return [f"Arg{i} 0x{v:X}: the model does not know bug check 0x{code:X}" for i, v in enumerate(values, start=1)]
    return [_line(i, v, p) for i, (v, p) in enumerate(zip(values, fixed), start=1)]


def describe(bc: BugCheck) -> list[str]:
    """The bug check's line, what its code means, then one line per parameter
    (:func:`describe_parameters`)."""
    return [str(bc), meaning(bc.code)] + describe_parameters(bc.code, (bc.p1, bc.p2, bc.p3, bc.p4))
