"""The OS's one door into the driver: every ``DxgkDdi*`` call goes through :class:`DdiGateway`.

One call, in order:

1. the IRQL of the entry point's contract (:data:`wddmsim.ddi.interface.CONTRACTS`) is raised for
   the call and restored after it (the model runs one entry point at a time, so the scheduler's
   level-1 class, at most one thread inside SubmitCommand, Patch, BuildPagingBuffer,
   PreemptCommand, QueryDependentEngineGroup and ResetEngine, holds by construction);
2. the verifier judges the argument structure the OS built, when the caller gives the facts and
   asks for it ``before`` the call;
3. the driver's method runs. An exception it raises is a driver fault: the model stops as Windows
   stops on an unhandled kernel-mode exception, bug check 0x1E KMODE_EXCEPTION_NOT_HANDLED, and the
   crash record names the entry point and carries the driver's own traceback (a bug check raised by
   the OS inside the call, from a callback the driver made, passes through unchanged). Any
   exception counts, ``SystemExit`` (``sys.exit()`` in the driver's code) included: code of the
   driver's that ended abnormally, never the end of the process; only ``KeyboardInterrupt`` (a
   person's Ctrl-C) and the end of a command a signal interrupted before its run
   (:class:`.watchdog.NothingRan`) pass through. A call that never returns (an endless loop) is
   stopped by the DDI watchdog (:mod:`.watchdog`) after 10 s of host time, since the driver's code
   takes no virtual time: bug check 0x133 DPC_WATCHDOG_VIOLATION at DISPATCH_LEVEL or DIRQL, 0x116
   VIDEO_TDR_FAILURE at PASSIVE_LEVEL (rule 111, ThreadsLeaveDriverInTime), the message
   ``<entry point> ran past the DDI watchdog's N s of host time at <IRQL> without returning
   (stopped at FILE, line N, in FUNCTION)`` and the traceback of where it was stopped; the call
   the watchdog times is the outermost one (a nested call, the OS's from a callback of the
   driver's, lets it through to it). What the method returns is then held to the entry point's
   return type, as a C compiler holds the driver's code to it (:meth:`DdiGateway.returned_value`):
   an NTSTATUS or a BOOLEAN is an integer (an ``int``, a ``bool``, an ``IntEnum`` member such as
   ``NTSTATUS.STATUS_SUCCESS``, anything with ``__index__``), taken as that integer. Anything else
   (a ``str``, a ``float``, ``None`` from a method that forgot its ``return``...) cannot come out
   of a C driver: it is a driver fault, bug check 0x1E with parameter 1 STATUS_ACCESS_VIOLATION
   (0xC0000005, the code a Python ``TypeError`` gets) and the message ``driver fault:
   <entry point> returned <value> (a <type>), not an NTSTATUS (an integer)`` (``not a BOOLEAN`` for
   the ISR). The value of a VOID entry point (the DPC, DxgkDdiSetRootPageTable) is dropped, as C
   drops it: the caller gets None whatever the method returned;
4. the ``DdiCall`` event goes to the log (name, IRQL, every member of the structure, status; to a
   sink that asks for them (``raw_args``, the JSON Lines file), the structure's raw bytes, which
   the sink reads into the same members);
5. with the caller's facts and ``judge="after"``, the verifier judges the structure as the driver
   left it, with the status it returned (``Facts.status``): the registered rules about an entry
   point's status (rules 1, 23, 25, 58, 67, 68, 115, 117, 76 ... of the rule catalogue:
   ``wddmsim rules N`` prints rule N, docs/rules.md lists them all) are the ones that stop the
   model, with the bug check the caller names for a status outside the contract (its parameters 3
   and 4 are the caller's: the structure's address, scheduler data); an entry point without an
   argument structure whose answer a rule judges is judged here on every call, from its parameters
   and status (rule 49, ControlInterruptOnlyVsync, on DxgkDdiControlInterrupt: :mod:`.controlinterrupt`);
6. the status is held to the contract: a status the contract allows is returned to the caller,
   which acts on it (STATUS_INVALID_PARAMETER from DxgkDdiSubmitCommandVirtual puts the device in
   error, STATUS_PENDING from DxgkDdiSuspendContext waits for the interrupt...). Any other status
   becomes what Windows makes of it: the bug check the caller names (0x119 with its parameter 1,
   0x116 ...), or the failure of the application's call (:class:`~wddmsim.dxgkrnl.errors.ApiError`),
   or, for the recovery entry points, a status the caller acts on (an engine reset promoted to an
   adapter reset). Windows stops whatever the verifier's mode, so in modes ``report`` and ``off``
   this step stops where step 5 only recorded; the crash record names the entry point's status rule
   (:data:`STATUS_RULES`).

The gateway also counts calls per entry point and knows which one is running (``active``), which
the callbacks use to judge where they are called from.

Microsoft's pages: dispmprt/nc-dispmprt-dxgkddi_interrupt_routine and the other entry points'
reference pages (see each contract); "Threading and synchronization model of display miniport
driver" (windows-hardware/drivers/display/threading-and-synchronization-model-of-display-miniport-driver).
"""

from __future__ import annotations

import ctypes
import operator
import os
import sys
import traceback

from ..sim.tracing import wants
from ..ddi import codec, layout, readers
from ..ddi.bugcheck import BugCheck, BugCheckCode
from ..ddi.interface import CONTRACTS
from ..ddi.ntstatus import NTSTATUS, status_name
from ..ddi.registry import RECORDS
from ..ddi.rules import RULES
from ..sim import DEVICE, DISPATCH, PASSIVE
from . import controlinterrupt, watchdog
from .crash import BugCheckStop, CrashRecord
from .errors import ApiError
from .watchdog import DdiOverran, NothingRan

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_IRQL = {"PASSIVE_LEVEL": PASSIVE, "DISPATCH_LEVEL": DISPATCH, "DIRQL": DEVICE}
_IRQL_NAME = {v: k for k, v in _IRQL.items()}
#: The files whose frames a stopped call's traceback leaves out: the gateway's, the watchdog's
#: (and a signal handler's: :mod:`wddmsim.runner.stop`).
_OWN = (__file__, watchdog.__file__, os.path.join(os.path.dirname(os.path.dirname(__file__)), "runner", "stop.py"))
_OWN_FILES = frozenset(p for f in _OWN for p in (f, os.path.abspath(f)))

#: The rule each entry point's status belongs to, where a status outside the contract stops the
#: model (the crash record names it). Where the rule is registered (:data:`wddmsim.ddi.rules.RULES`)
#: its name comes from there; the two recovery entry points have no argument structure to judge.
_STATUS_RULE_NUMBERS = {
    "DxgkDdiSubmitCommand": 1,
    "DxgkDdiSubmitCommandVirtual": 23,
    "DxgkDdiPatch": 25,
    "DxgkDdiPreemptCommand": 58,
    "DxgkDdiCancelCommand": 67,
    "DxgkDdiBuildPagingBuffer": 68,
    "DxgkDdiCreateContext": 76,
    "DxgkDdiResetFromTimeout": 108,
    "DxgkDdiRestartFromTimeout": 108,
}
_UNREGISTERED = {108: "ResetFromTimeoutSucceeds"}
STATUS_RULES = {name: (n, RULES[n].name if n in RULES else _UNREGISTERED[n])
                for name, n in _STATUS_RULE_NUMBERS.items()}

#: NTSTATUS values that stand for a Python exception in a driver fault's parameter 1.
_EXCEPTION_CODES = (
    (ZeroDivisionError, 0xC0000094),  # STATUS_INTEGER_DIVIDE_BY_ZERO
    (RecursionError, 0xC00000FD),  # STATUS_STACK_OVERFLOW
    (AssertionError, 0xC0000420),  # STATUS_ASSERTION_FAILURE
    ((AttributeError, IndexError, KeyError, TypeError, ctypes.ArgumentError), 0xC0000005),  # ACCESS_VIOLATION
)
STATUS_UNHANDLED_EXCEPTION = 0xC0000144

#: The logged names of the statuses seen so far (``status_name`` looks the enumeration up).
_STATUS_TEXT: dict[int, str] = {}


def exception_code(exc: BaseException) -> int:
    """The NTSTATUS a driver fault's bug check carries for ``exc``."""
    for kinds, code in _EXCEPTION_CODES:
        if isinstance(exc, kinds):
            return code
    return STATUS_UNHANDLED_EXCEPTION


def _allowed(names: tuple[str, ...]) -> frozenset[int] | None:
    """The NTSTATUS values a contract's ``returns`` allow; None when it allows any error."""
    if "error statuses" in names:
        return None
    return frozenset(int(NTSTATUS[n]) for n in names if n.startswith("STATUS_"))


#: Entry points whose every crossing the verifier judges from the call's parameters and status
#: (they have no argument structure): ``judge(verifier, params, status)``, after the DdiCall event.
_CROSSING_RULES = {controlinterrupt.ENTRY: controlinterrupt.judge}  # rule 49

#: Per entry point, what a call needs of its contract, read once: (IRQL class, argument structure,
#: whether it returns a BOOLEAN or nothing, whether it returns nothing, the statuses it may return
#: or None for any error, its crossing rule or None).
_PLANS = {name: (_IRQL[c.irql], c.struct, c.returns[0] in ("BOOLEAN", "VOID"), c.returns == ("VOID",),
                 _allowed(c.returns), _CROSSING_RULES.get(name))
          for name, c in CONTRACTS.items()}
#: The code a driver fault's parameter 1 carries for a return value that is not an integer (a
#: Python TypeError's: :data:`_EXCEPTION_CODES`).
STATUS_ACCESS_VIOLATION = 0xC0000005
_STRUCTS = (ctypes.Structure, ctypes.Union)
#: type -> whether it is a DDI structure (a ctypes Structure or Union): an isinstance test against
#: ctypes' metaclasses costs more than the rest of a call
_IS_STRUCT: dict[type, bool] = {}


class DdiGateway:
    """The OS's calls into one driver (see the module doc).

    ``version`` and ``verifier`` are set once the driver's interface version is known
    (:meth:`start`); before that the structures are laid out at the adapter's default and nothing
    is judged."""

    def __init__(self, sim, driver, *, arch: str = "x64", trace=None):
        self.sim = sim
        self.driver = driver
        self.arch = arch
        #: the sink of DdiCall events: None when no sink wants them (the packet ledger alone does not)
        self.trace = trace if wants(trace, "DdiCall") else None
        self.version = None
        self.verifier = None
        self.hAdapter = 0
        #: the entry point running now (None between calls)
        self.active: str | None = None
        #: calls made, per entry point (a plain dict: a Counter's item access costs twice as much)
        self.calls: dict[str, int] = {}
        self._classes: dict[str, type] = {}
        self._readers: dict[type, object] = {}
        self._raw_keys: dict[type, tuple] = {}
        #: entry point -> its caller (:meth:`caller`)
        self._callers: dict[str, object] = {}
        self._failing: dict[str, list] = {}
        #: called with the entry point's name after each call returns (the callbacks' checks)
        self.returned = None
        watchdog.watch(self)  # a call that never returns ends in a verdict (.watchdog)

    def rules_exercised(self) -> set[int]:
        """The status rules of the entry points called at least once."""
        return {STATUS_RULES[name][0] for name in self.calls if name in STATUS_RULES}

    def start(self, version, verifier) -> None:
        """The driver's interface version is known: lay structures out for it, judge them."""
        self.version = version
        self.verifier = verifier
        self._classes.clear()
        self._readers.clear()
        self._raw_keys.clear()

    # -- structures ------------------------------------------------------------------------------
    def cls(self, struct: str) -> type:
        """The ctypes class of ``struct`` for this driver's architecture and interface version."""
        c = self._classes.get(struct)
        if c is None:
            c = self._classes[struct] = layout.ctype(RECORDS[struct], self.arch, self.version)
        return c

    def new(self, struct: str):
        """A zeroed ``struct`` for a call."""
        return self.cls(struct)()

    def args_of(self, obj) -> dict:
        """Every member of a DDI structure by its DDI name (flags as {"Value": n, "<Bit>": 0|1}),
        read by the structure's precompiled reader (:func:`wddmsim.ddi.readers.args_reader`)."""
        read = self._readers.get(type(obj))
        if read is None:
            read = readers.args_reader(obj.record, self.arch, self.version)
            if ctypes.sizeof(obj) != read.size:
                raise codec.WrongSize(obj.record.name, read.size, ctypes.sizeof(obj))
            self._readers[type(obj)] = read
        return read(obj)

    def _raw_key(self, obj) -> tuple | None:
        """``(structure, arch, DDI version)``: how a sink that takes a DdiCall's structure as raw
        bytes finds its reader (:data:`wddmsim.trace.lines.RAW`). The reader is made here once per
        class, so that a structure of the wrong size fails at the call, as :meth:`args_of` fails."""
        cls = type(obj)
        if cls in self._raw_keys:
            return self._raw_keys[cls]
        self.args_of(obj)
        rec = obj.record
        key = self._raw_keys[cls] = ((rec.name, self.arch, getattr(self.version, "name", self.version))
                                     if RECORDS.get(rec.name) is rec else None)  # else: read here, by args_of
        return key

    # -- fault injection -----------------------------------------------------------------------------
    def fail_call(self, name: str, call: int, status: int) -> None:
        """Make the ``call``-th call of entry point ``name`` answer ``status`` without running the
        driver (the scenario's ``ddi_error`` fault)."""
        self._failing.setdefault(name, []).append([call, status])

    def _injected(self, name: str):
        plan = self._failing.get(name)
        if plan:
            n = self.calls[name]
            for item in plan:
                if item[0] == n:
                    return item[1]
        return None

    # -- the call ------------------------------------------------------------------------------------
    def call(self, name: str, *params, **options):
        """Call entry point ``name`` with ``params`` and return its status (or its BOOLEAN, or None
        for a VOID entry point): :meth:`caller` of ``name``, called with the same ``options``."""
        fast = self._callers.get(name)
        if fast is None:
            fast = self.caller(name)
        return fast(*params, **options)

    def caller(self, name: str):
        """Entry point ``name``'s own caller, made once per gateway with what the call needs of the
        contract read in (the IRQL, the argument structure, whether a status is returned, the statuses
        allowed, the crossing rule): the OS's hot crossings (DxgkDdiRender, DxgkDdiSubmitCommand,
        the ISR, the DPC) hold theirs and call it directly. ``caller(name)(*params, **options)`` is
        ``call(name, *params, **options)``.

        Its options: ``args``, the argument structure to judge and log (default: the last parameter,
        when it is a structure). ``facts``: the verifier's facts; with them the structure is judged
        ``judge`` = "before" the call (an input the OS built) or "after" it (with the status in
        ``facts.status``). ``address``: where the structure lives (a bug check's parameter).
        ``log_args``: what to log instead of the decoded structure; ``log`` False: no event. A status
        the contract does not allow becomes the bug check ``bugcheck(status)`` returns (or, for a
        tuple ``(code, p1, p3, p4)``, that bug check with the status as parameter 2; the crash record
        is built here), else an :class:`ApiError` with ``fail`` as its message when ``fail`` is given,
        else it is returned."""
        fast = self._callers.get(name)
        if fast is not None:
            return fast
        irql, struct, plain, void, allowed, crossing = _PLANS[name]
        contract = CONTRACTS[name]
        gateway = self
        sim = self.sim
        calls = self.calls

        def fast(*params, args=None, facts=None, address: int = 0, log_args: dict | None = None, bugcheck=None,
                 fail: str | None = None, judge: str = "before", log: bool = True):
            if args is None and params:
                last = type(params[-1])
                is_struct = _IS_STRUCT.get(last)
                if is_struct is None:
                    is_struct = _IS_STRUCT[last] = issubclass(last, _STRUCTS)
                if is_struct:
                    args = params[-1]
            calls[name] = calls.get(name, 0) + 1
            verifier = gateway.verifier
            judged = facts is not None and verifier is not None and verifier.mode != "off"
            if judged and judge == "before":
                verifier.check(struct, args, facts, address)
            saved_irql = sim.irql
            saved_active = gateway.active
            sim.irql = irql
            gateway.active = name
            try:
                injected = gateway._injected(name) if gateway._failing else None
                if injected is not None:
                    status = injected
                else:
                    status = getattr(gateway.driver, name)(*params)
            except (BugCheckStop, KeyboardInterrupt, NothingRan):
                raise
            except BaseException as exc:  # noqa: BLE001 - every exception of the driver's is a driver fault,
                if type(exc) is DdiOverran and exc.frame is not sys._getframe():
                    raise  # the watchdog stops an outer call: this one is nested in it
                gateway._driver_fault(name, args, address, exc)  # SystemExit included (the module doc, step 3)
            finally:
                sim.irql = saved_irql
                gateway.active = saved_active
            if type(status) is not int:
                if void:
                    status = None
                elif type(status) is not bool:
                    status = gateway.returned_value(name, status, args, address)
            if gateway.returned is not None:
                gateway.returned(name)
            if log and gateway.trace is not None:
                gateway.log(name, args, status, log_args)
            if crossing is not None and verifier is not None and verifier.mode != "off":
                crossing(verifier, params, status)
            if judged and judge == "after":
                gateway._judge_after(name, contract, args, facts, address, status, bugcheck)
            if status == SUCCESS or plain:
                return status
            if allowed is not None and status in allowed:
                return status
            if bugcheck is not None:
                gateway.stop(name, args, address, gateway._bugcheck(bugcheck, status), status)
            if fail is not None:
                raise ApiError(status, fail)
            return status

        fast.__name__ = fast.__qualname__ = name
        self._callers[name] = fast
        return fast

    @staticmethod
    def _bugcheck(bugcheck, status: int) -> BugCheck:
        """The caller's bug check for ``status``: a tuple ``(code, p1, p3, p4)`` (the status is
        parameter 2) or a function of the status."""
        if type(bugcheck) is tuple:
            return BugCheck(bugcheck[0], bugcheck[1], status & 0xFFFFFFFF, bugcheck[2], bugcheck[3])
        return bugcheck(status)

    def _judge_after(self, name: str, contract, args, facts, address: int, status, bugcheck) -> None:
        """Step 5 of the module doc: the structure as the driver left it, with its status. The
        status the facts carried before is put back (the caller's facts outlive the call)."""
        verifier = self.verifier
        before = facts.status
        facts.status = status
        try:
            found = verifier.find(contract.struct, args, facts)
        finally:
            facts.status = before
        if not found:
            return
        bc = None
        rule = STATUS_RULES.get(name)
        if bugcheck is not None and rule is not None and found[0].rule == rule[0] and type(status) is int:
            bc = self._bugcheck(bugcheck, status)
        verifier.handle(found, contract.struct, args, address, bugcheck=bc)

    def log(self, name: str, args, status, log_args: dict | None = None) -> None:
        """The ``DdiCall`` event of a call that returned ``status``."""
        contract = CONTRACTS[name]
        if log_args is None:
            if args is None:
                log_args = {}
            elif getattr(self.trace, "raw_args", False) and (key := self._raw_key(args)) is not None:
                log_args = (key, bytes(args))
            else:
                log_args = self.args_of(args)
        if contract.returns == ("VOID",):
            status = SUCCESS
        text = _STATUS_TEXT.get(status)
        if text is None:
            text = status_name(status)
            if len(_STATUS_TEXT) < 4096:
                _STATUS_TEXT[status] = text
        self.trace.emit(self.sim.now, "DdiCall", {"name": name, "irql": contract.irql, "args": log_args,
                                                  "status": text})

    # -- stops -------------------------------------------------------------------------------------------
    def stop(self, name: str, args, address: int, bc: BugCheck, status: int, *, rule: int | None = None,
             rule_name: str | None = None, message: str | None = None) -> None:
        """Stop with ``bc`` because entry point ``name`` answered ``status``."""
        contract = CONTRACTS[name]
        if rule is None and name in STATUS_RULES:
            rule, rule_name = STATUS_RULES[name]
        if message is None:
            allowed = " or ".join(contract.returns)
            message = f"{name} returned {status_name(status)}; it must return {allowed}" + \
                (f" (rule {rule})" if rule is not None else "")
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=message, struct=contract.struct or "", arch=self.arch,
            ddi_version=self.version.name if self.version is not None else "", address=address,
            data=bytes(args) if args is not None else b"", rule=rule, rule_name=rule_name, ddi=name))

    def returned_value(self, name: str, value, args=None, address: int = 0) -> int:
        """What entry point ``name`` (an NTSTATUS or BOOLEAN one) returned, ``value``, that is not
        a plain ``int`` or ``bool``, as the integer it stands for (an ``IntEnum`` member, anything
        with ``__index__``); anything else is a driver fault (the module doc, step 3)."""
        if isinstance(value, int):
            return int(value)
        if hasattr(type(value), "__index__"):
            try:
                return operator.index(value)
            except Exception:  # noqa: BLE001 - an __index__ that fails: not an integer after all
                pass
        kind = "a BOOLEAN" if CONTRACTS[name].returns == ("BOOLEAN",) else "an NTSTATUS"
        try:
            shown = repr(value)
        except Exception:  # noqa: BLE001 - the driver's own __repr__ failed
            shown = f"<{type(value).__name__} object>"
        if len(shown) > 80:
            shown = shown[:77] + "..."
        self._fault(name, args, address, STATUS_ACCESS_VIOLATION,
                    f"driver fault: {name} returned {shown} (a {type(value).__name__}), not {kind} (an integer)")

    def _driver_fault(self, name: str, args, address: int, exc: BaseException) -> None:
        """An exception escaped the driver's entry point: bug check 0x1E with the driver's traceback."""
        if type(exc) is DdiOverran:
            self._overran(name, args, address, exc)
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None  # skip this frame
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        said = str(exc)
        self._fault(name, args, address, exception_code(exc),
                    f"driver fault: {name} raised {type(exc).__name__}" + (f": {said}" if said else ""), text)

    def _overran(self, name: str, args, address: int, exc: DdiOverran) -> None:
        """The watchdog stopped the call (:mod:`.watchdog`): bug check 0x133 at DISPATCH_LEVEL or
        DIRQL, 0x116 (rule 111) at PASSIVE_LEVEL, with where the driver's code was."""
        exc.frame = None  # the crash record outlives the call: keep none of its frames
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if f.filename not in _OWN_FILES]
        where = (f" (stopped at {os.path.basename(frames[-1].filename)}, line {frames[-1].lineno}, "
                 f"in {frames[-1].name})" if frames else "")
        level = _IRQL_NAME.get(exc.irql, str(exc.irql))
        inner = f", inside a nested call of {exc.inner}" if exc.inner != name else ""
        if exc.signal is None:
            message = (f"{name} ran past the DDI watchdog's {exc.limit:g} s of host time at {level} without "
                       f"returning{inner}{where}")
        else:
            message = (f"interrupted by {exc.signal} inside {name}, which had run {exc.ran:.1f} s of host time at "
                       f"{level} without returning{inner}{where}")
        text = ("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
                + (f"stopped here by the DDI watchdog after {exc.ran:.1f} s of host time\n" if exc.signal is None
                   else f"stopped here by {exc.signal} after {exc.ran:.1f} s of host time\n"))
        rule = rule_name = None
        if exc.irql <= DISPATCH:  # the model's IRQL classes count down: DEVICE 0, DISPATCH 1, PASSIVE 2
            limit = exc.limit if exc.limit is not None else watchdog.DEFAULT_LIMIT_S
            bc = BugCheck(BugCheckCode.DPC_WATCHDOG_VIOLATION, 0, watchdog.ticks(exc.ran), watchdog.ticks(limit), 0)
        else:
            bc = BugCheck(BugCheckCode.VIDEO_TDR_FAILURE, 0, 0, 0, 0)
            rule, rule_name = 111, "ThreadsLeaveDriverInTime"
        contract = CONTRACTS[name]
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=message, struct=contract.struct or "", arch=self.arch,
            ddi_version=self.version.name if self.version is not None else "", address=address,
            data=bytes(args) if isinstance(args, (ctypes.Structure, ctypes.Union)) else b"",
            rule=rule, rule_name=rule_name, ddi=name, traceback=text)) from None

    def _fault(self, name: str, args, address: int, code: int, message: str, text: str | None = None) -> None:
        """Stop with bug check 0x1E (parameter 1 ``code``) for a driver fault in entry point ``name``."""
        bc = BugCheck(BugCheckCode.KMODE_EXCEPTION_NOT_HANDLED, code, 0, 0, 0)
        contract = CONTRACTS[name]
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=message,
            struct=contract.struct or "", arch=self.arch,
            ddi_version=self.version.name if self.version is not None else "", address=address,
            data=bytes(args) if isinstance(args, (ctypes.Structure, ctypes.Union)) else b"",
            ddi=name, traceback=text)) from None


#: the code of every entry point's caller (:meth:`DdiGateway.caller`): the watchdog finds driver calls by it
watchdog.crossing(next(c for c in DdiGateway.caller.__code__.co_consts
                       if isinstance(c, type(DdiGateway.caller.__code__)) and c.co_name == "fast"))
