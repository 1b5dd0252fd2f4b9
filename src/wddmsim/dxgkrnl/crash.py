"""Bug checks and crash records.

When the model stops the way Windows stops, the OS raises :class:`BugCheckStop` (a
:class:`~wddmsim.sim.StopSimulation`), carrying the bug check (code and four parameters), the rule
that was broken, and a :class:`CrashRecord`: the bytes of the offending structure with its name,
architecture and DDI version, so ``wddmsim decode @record`` can show it member by member, as a
debugger shows a structure from a crash dump.

Crash record file format (JSON, ``"format": "wddmsim-crash-record"``, ``"version": 1``): ``time``
(ns), ``bugcheck`` (``code``, ``name``, ``p1``..``p4``), ``rule`` (number and name, or null),
``message``, ``struct`` (structure name), ``arch``, ``ddi_version``, ``address`` (the address the
structure had in the model, the bug check's parameter 3 where it is one), ``bytes`` (hex), and where
they apply ``ddi`` (the entry point that was called when it happened) and ``traceback`` (a driver
fault: the driver's own traceback).

Spec: Microsoft's "Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR" page; docs/verify.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..ddi.bugcheck import BugCheck
from ..sim import StopSimulation

RECORD_FORMAT = "wddmsim-crash-record"
RECORD_VERSION = 1


@dataclass
class CrashRecord:
    time: int
    bugcheck: BugCheck
    message: str
    struct: str | None = None
    arch: str = "x64"
    ddi_version: str = ""
    address: int = 0
    data: bytes = b""
    rule: int | None = None
    rule_name: str | None = None
    #: the DxgkDdi* entry point the stop is about, where there is one
    ddi: str | None = None
    #: a driver fault (bug check 0x1E): the traceback of the exception the driver raised
    traceback: str | None = None

    def to_json(self) -> dict:
        bc = self.bugcheck
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "time": self.time,
            "bugcheck": {
                "code": int(bc.code),
                "name": bc.name,
                "p1": bc.p1,
                "p2": bc.p2,
                "p3": bc.p3,
                "p4": bc.p4,
            },
            "rule": None if self.rule is None else {"number": self.rule, "name": self.rule_name},
            "message": self.message,
            "struct": self.struct,
            "arch": self.arch,
            "ddi_version": self.ddi_version,
            "address": self.address,
            "bytes": self.data.hex(),
            **({"ddi": self.ddi} if self.ddi else {}),
            **({"traceback": self.traceback} if self.traceback else {}),
        }

    def write(self, path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2)
            f.write("\n")


class BugCheckStop(StopSimulation):
    """The model stopped with a bug check."""

    def __init__(self, record: CrashRecord):
        super().__init__(str(record.bugcheck))
        self.record = record

    @property
    def bugcheck(self) -> BugCheck:
        return self.record.bugcheck
