"""DxgkDdiControlInterrupt for the interrupt types other than CRTC_VSYNC: rule 49,
ControlInterruptOnlyVsync (``wddmsim rules 49``, docs/rules.md).

Microsoft's DxgkDdiControlInterrupt page says two things this module acts on: the DirectX graphics
kernel passes only ``DXGK_INTERRUPT_CRTC_VSYNC`` in ``InterruptType`` today, and a driver given any
other type returns ``STATUS_NOT_IMPLEMENTED`` (the page's other return value, STATUS_SUCCESS, is for
a type it did turn on or off). The DXGK_INTERRUPT_TYPE page lists the types.

- :func:`judge` runs on every DxgkDdiControlInterrupt crossing (the gateway calls it once the driver
  returned, after the ``DdiCall`` event): a type other than CRTC_VSYNC answered with anything but
  STATUS_NOT_IMPLEMENTED breaks rule 49. CRTC_VSYNC itself is not this rule's business (rule 48,
  VsyncReportedWhileEnabled, and the vsync model in :mod:`.vsync` are). Windows names no stop code
  for it, so the verifier reports it: bug check 0xC4 with parameter 1 = 49 in strict mode, a
  recorded violation in mode ``report``.
- :func:`ask_other_types` is the question a run of the OS model never asks, as Windows never does:
  ``wddmsim verify``'s ``interrupts/control_interrupt`` case puts it. Each type other than
  CRTC_VSYNC that the driver's DDI version defines (:data:`wddmsim.ddi.enums.INTERRUPT_TYPE_SINCE`:
  a value the driver's header has) is asked TRUE, then FALSE, from a thread at PASSIVE_LEVEL, the
  entry point's level. Asking FALSE after TRUE leaves the driver as it was for a driver that wrongly
  enabled something.

Decision: a status the entry point's contract does not allow at all (STATUS_INVALID_PARAMETER, ...)
for another type breaks rule 49 the same way; the gateway hands it back to the OS, which carries on.
"""

from __future__ import annotations

from ..ddi.enums import DXGK_INTERRUPT_TYPE, INTERRUPT_TYPE_SINCE
from ..ddi.ntstatus import NTSTATUS, status_name
from ..ddi.rules import Violation
from ..ddi.versions import ddi_version

__all__ = ["RULE", "NAME", "ENTRY", "judge", "other_types", "ask_other_types"]

#: The rule's number and name in the catalogue.
RULE = 49
NAME = "ControlInterruptOnlyVsync"
#: The entry point the rule is judged on.
ENTRY = "DxgkDdiControlInterrupt"

_CRTC_VSYNC = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC)
_NOT_IMPLEMENTED = int(NTSTATUS.STATUS_NOT_IMPLEMENTED)


def _type_name(value) -> str:
    try:
        return DXGK_INTERRUPT_TYPE(value).name
    except ValueError:
        return f"interrupt type {value}"


def _status_text(status) -> str:
    if type(status) is not int:
        return repr(status)
    return f"0x{status & 0xFFFFFFFF:08X} ({status_name(status)})"


def judge(verifier, params: tuple, status) -> None:
    """Rule 49 on one DxgkDdiControlInterrupt crossing: ``params`` are the call's ``(hAdapter,
    InterruptType, EnableInterrupt)``, ``status`` what the driver returned."""
    interrupt_type = params[1] if len(params) > 1 else None
    if interrupt_type == _CRTC_VSYNC:
        return
    verifier.judged_rules.add(RULE)
    if status == _NOT_IMPLEMENTED:
        return
    enable = "TRUE" if len(params) > 2 and params[2] else "FALSE"
    verifier.handle([Violation(RULE, NAME, (
        f"DxgkDdiControlInterrupt({_type_name(interrupt_type)}, {enable}) returned {_status_text(status)} but "
        f"must return STATUS_NOT_IMPLEMENTED: only DXGK_INTERRUPT_CRTC_VSYNC is controlled"))], None, None, 0)


def other_types(version) -> list[int]:
    """The interrupt types other than CRTC_VSYNC that DDI ``version`` defines, by value."""
    v = ddi_version(version).value
    return [int(t) for t in DXGK_INTERRUPT_TYPE
            if t != _CRTC_VSYNC and ddi_version(INTERRUPT_TYPE_SINCE[t]).value <= v]


def ask_other_types(adapter) -> list[tuple[int, bool, object]]:
    """Ask the driver to turn each type of :func:`other_types` on, then off, through the gateway
    (called from a thread at PASSIVE_LEVEL; see the module doc). Returns ``(type, enable, status)`` per call. The OS's vsync
    state is not touched: these calls are not about CRTC_VSYNC."""
    out = []
    for t in other_types(adapter.version):
        for enable in (True, False):
            status = adapter.ddi.call(ENTRY, adapter.hAdapter, t, enable,
                                      log_args={"InterruptType": _type_name(t), "EnableInterrupt": int(enable)})
            out.append((t, enable, status))
    return out
