"""The verifier: the contract rules of ``wddmsim.ddi.rules`` judged at every DDI and callback
crossing, in both directions.

Modes:

- ``strict`` (default): a broken rule stops the model. A rule that names a bug check (0x119 with its
  parameter 1, for example) stops with it; any other broken rule stops with bug check 0xC4
  DRIVER_VERIFIER_DETECTED_VIOLATION, parameter 1 = the rule number, parameter 2 = the address of
  the structure (the model's convention; Windows' Driver Verifier uses 0xC4 for what it catches).
- ``report``: broken rules are collected in :attr:`Verifier.violations` and the run goes on.
- ``off``: nothing is checked (for measuring the rest of the model).

Each violation is also emitted to the event log as ``VerifierViolation`` when tracing is on.

Before the full check, a structure goes through its screen (:mod:`wddmsim.ddi.rules.screens`)
where it has one: a quick test that no rule can find anything. ``screened`` counts the crossings
the screen cleared, ``checked`` those that got the full check.

Spec: the rules ``wddmsim rules`` lists (docs/rules.md); docs/verify.md.
"""

from __future__ import annotations

from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode
from ..ddi.rules.screens import screen_for
from .crash import BugCheckStop, CrashRecord

MODES = ("strict", "report", "off")


class Verifier:
    """Runs the rules on a structure and acts on what they find."""

    __slots__ = ("mode", "violations", "sim", "trace", "arch", "version", "screened", "checked", "_screens",
                 "judged_structs", "judged_rules")

    def __init__(self, sim, mode: str = "strict", arch: str = "x64", version=None, trace=None):
        if mode not in MODES:
            raise ValueError(f"verifier mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.sim = sim
        self.arch = arch
        self.version = version
        self.trace = trace
        self.violations: list[tuple[int, R.Violation]] = []
        self.screened = 0
        self.checked = 0
        self._screens: dict = {}
        #: structures the rules were run on at least once, and rules judged outside a structure's
        #: rules (callbacks, statuses, ground truth): what a run exercised (``wddmsim verify``)
        self.judged_structs: set[str] = set()
        self.judged_rules: set[int] = set()

    def find(self, struct_name: str, obj, facts: R.Facts) -> list[R.Violation]:
        """What the rules find in ``obj`` (nothing in mode ``off``), without acting on it."""
        if self.mode == "off":
            return []
        key = (struct_name, type(obj))
        screen = self._screens.get(key, False)
        if screen is False:
            screen = self._screens[key] = screen_for(struct_name, type(obj))
            self.judged_structs.add(struct_name)
        if screen is not None and screen(obj, facts):
            self.screened += 1
            return []
        self.checked += 1
        return R.check(struct_name, obj, facts)

    def exercised(self) -> set[int]:
        """Every rule this run judged at least once."""
        out = set(self.judged_rules)
        for name in self.judged_structs:
            out.update(r.number for r in R.rules_for(name))
        return out

    def check(self, struct_name: str, obj, facts: R.Facts, address: int = 0) -> list[R.Violation]:
        """Judge ``obj``; in strict mode raise :class:`BugCheckStop` on the first broken rule."""
        found = self.find(struct_name, obj, facts)
        if found:
            self.handle(found, struct_name, obj, address)
        return found

    def handle(self, found, struct_name: str, obj, address: int = 0, bugcheck: BugCheck | None = None) -> None:
        """Record or stop on violations ``found`` about ``obj``."""
        now = self.sim.now
        for v in found:
            self.violations.append((now, v))
            if self.trace is not None:
                self.trace.emit(now, "VerifierViolation", {"rule": v.rule, "name": v.name, "message": v.message})
        if self.mode != "strict":
            return
        v = found[0]
        bc = bugcheck or v.bugcheck or BugCheck(BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, v.rule, address, 0, 0)
        raise BugCheckStop(
            CrashRecord(
                time=now,
                bugcheck=bc,
                message=str(v),
                struct=struct_name,
                arch=self.arch,
                ddi_version=self.version.name if self.version is not None else "",
                address=address,
                data=bytes(obj) if obj is not None else b"",
                rule=v.rule,
                rule_name=v.name,
            )
        )
