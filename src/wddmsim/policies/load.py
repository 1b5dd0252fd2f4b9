"""Making the scheduler's policy from a scenario's ``[scheduler]`` table: a shipped policy by name
(:data:`wddmsim.policies.names.SHIPPED`) or a researcher's :class:`~.protocol.Policy` subclass named
``"package.module:Class"`` or ``"path/to/file.py:Class"`` (a relative path in a scenario file is
found next to the file when it is there, else from the current folder), with its settings checked by the class's ``Settings`` model.
Under hardware scheduling the name is the GPU's scheduler's (:data:`~.names.SHIPPED_GPU`, or a
:class:`~.hwprotocol.HwPolicy` subclass; :func:`make_policies` makes both sides).

A name that does not load, a class that is no policy, or a setting the policy refuses is a
:class:`PolicyLoadError` whose ``problems`` are ``(field, reason)`` pairs, one line each on the
command line (exit status 2).
"""

from __future__ import annotations

import importlib

from pydantic import BaseModel, ValidationError

from ..dxgkrnl.policy import PriorityQuantum, StrictPriority
from ..dxgkrnl.loader import LoadError, load_class
from .host import PolicyHost
from .hwhost import HwPolicyHost
from .hwprotocol import HwPolicy
from .names import SHIPPED, SHIPPED_GPU, check_policy_name, is_class_spec, mode_problem
from .protocol import Policy


class PolicyLoadError(Exception):
    """The policy cannot be made; ``problems`` are ``(field path, reason)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{p}: {r}" for p, r in problems))
        self.problems = problems


class _BuiltinSettings(BaseModel, extra="forbid"):
    """The OS's own policies: ``quantum`` (ns) and, for the Windows-like one, ``starvation`` (ns a
    ready context waits before it is boosted; default 10 quanta)."""

    quantum: int = 2_000_000
    starvation: int | None = None


def policy_class(name: str) -> type:
    """The research :class:`Policy` class ``name`` names (a shipped name or a class name); a
    :class:`PolicyLoadError` when it cannot be loaded or is no policy. The OS's own policies
    (``windows``, ``strict_priority``) have no such class."""
    problem = check_policy_name(name)
    if problem:
        raise PolicyLoadError([("scheduler.policy", problem)])
    if not is_class_spec(name):
        if name not in SHIPPED:
            raise PolicyLoadError([("scheduler.policy", mode_problem(name, False))])
        module, cls_name, _ = SHIPPED[name]
        if module == "builtin":
            raise PolicyLoadError([("scheduler.policy", f"{name!r} is the OS's own policy, not a research class")])
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls_name)
    return _research_class(name, Policy, hardware=False)


def hw_policy_class(name: str) -> type:
    """The :class:`~.hwprotocol.HwPolicy` class ``name`` names for the GPU's scheduler (a shipped
    GPU policy or a class name); a :class:`PolicyLoadError` when it cannot be loaded or is no GPU
    policy. The band rules (``windows``) have no such class."""
    problem = check_policy_name(name)
    if problem:
        raise PolicyLoadError([("scheduler.policy", problem)])
    if not is_class_spec(name):
        if name not in SHIPPED_GPU:
            raise PolicyLoadError([("scheduler.policy", mode_problem(name, True))])
        module, cls_name, _ = SHIPPED_GPU[name]
        if module == "builtin":
            raise PolicyLoadError([("scheduler.policy", f"{name!r} is the GPU's own band policy, not a research class")])
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls_name)
    return _research_class(name, HwPolicy, hardware=True)


def _research_class(name: str, base: type, hardware: bool) -> type:
    try:
        cls = load_class(name, "scheduling policy")
    except LoadError as e:
        raise PolicyLoadError([("scheduler.policy", str(e))]) from None
    other = HwPolicy if base is Policy else Policy
    if isinstance(cls, type) and issubclass(cls, other) and not issubclass(cls, base):
        raise PolicyLoadError([("scheduler.policy", mode_problem(name, hardware, cls.__name__))])
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise PolicyLoadError([("scheduler.policy", f"scheduling policy {name!r}: {getattr(cls, '__name__', cls)} is "
                                                    f"not a subclass of wddmsim.policies.{base.__name__}")])
    if cls.pick is base.pick:
        raise PolicyLoadError([("scheduler.policy", f"scheduling policy {name!r}: {cls.__name__} does not define "
                                                    "pick(node, now)")])
    return cls


def _settings(model, table: dict, name: str):
    if model is None:
        if table:
            keys = ", ".join(sorted(table))
            raise PolicyLoadError([(f"scheduler.{k}", f"policy {name} takes no settings (it has no Settings model); "
                                                      f"got {keys}") for k in sorted(table)])
        return None
    try:
        return model.model_validate(table)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                known = ", ".join(model.model_fields)
                msg = f"policy {name} has no setting {loc}" + (f"; its settings are {known}" if known else "")
            problems.append((f"scheduler.{loc}" if loc else "scheduler", msg))
        raise PolicyLoadError(problems) from None


def make_policy(name: str, settings: dict | None = None):
    """The scheduler's policy object for ``[scheduler] policy = name`` with ``settings`` (every other
    key of the table): the OS's own :class:`~wddmsim.dxgkrnl.policy.PriorityQuantum` or
    :class:`~wddmsim.dxgkrnl.policy.StrictPriority`, or a :class:`PolicyHost` running the research
    class. Raises :class:`PolicyLoadError`."""
    table = dict(settings or {})
    problem = check_policy_name(name) or mode_problem(name, False)
    if problem:
        raise PolicyLoadError([("scheduler.policy", problem)])
    if not is_class_spec(name) and SHIPPED[name][0] == "builtin":
        s = _settings(_BuiltinSettings, table, name)
        if SHIPPED[name][1] == "StrictPriority":
            if "starvation" in table:
                raise PolicyLoadError([("scheduler.starvation", f"policy {name} has no starvation boost")])
            return StrictPriority()
        try:
            return PriorityQuantum(s.quantum, s.starvation)
        except ValueError as e:
            raise PolicyLoadError([("scheduler.quantum", str(e))]) from None
    cls = policy_class(name)
    return PolicyHost(cls, _research_settings(cls, table, name), _label(name, cls))


def _research_settings(cls: type, table: dict, name: str):
    model = getattr(cls, "Settings", None)
    if "quantum" not in getattr(model, "model_fields", {}):
        # ``quantum`` is the [scheduler] table's own field (the OS's policies' time slice): a research
        # policy gets it only when its Settings declare it, so one sweep may vary it over both kinds.
        table.pop("quantum", None)
    return _settings(model, table, name)


def _label(name: str, cls: type) -> str:
    return name if is_class_spec(name) else f"{name} ({cls.__name__})"


def _gpu_builtin(name: str) -> bool:
    return not is_class_spec(name) and SHIPPED_GPU.get(name, ("",))[0] == "builtin"


def make_gpu_policy(name: str, settings: dict | None = None) -> HwPolicyHost | None:
    """The GPU's scheduler's policy for ``[scheduler] policy = name`` under hardware scheduling: None
    for the band rules (``windows``, the default; the GPU keeps its ``BandPolicy``), else an
    :class:`HwPolicyHost` running the research class, to :meth:`~HwPolicyHost.bind` to the GPU.
    Raises :class:`PolicyLoadError`."""
    table = dict(settings or {})
    problem = check_policy_name(name) or mode_problem(name, True)
    if problem:
        raise PolicyLoadError([("scheduler.policy", problem)])
    if _gpu_builtin(name):
        return None
    cls = hw_policy_class(name)
    return HwPolicyHost(cls, _research_settings(cls, table, name), _label(name, cls))


def make_policies(name: str, settings: dict | None, hardware: bool):
    """``(the OS scheduler's policy, the GPU's scheduler's policy or None)`` for ``[scheduler]
    policy = name`` in this scheduling mode. Under software scheduling the name is the OS's; under
    hardware scheduling it is the GPU's, and the OS's scheduler (which still runs VidMm's paging)
    keeps Windows' policy, with the table's settings when the name is ``windows`` itself."""
    if not hardware:
        return make_policy(name, settings), None
    if _gpu_builtin(name):
        return make_policy(name, settings), None
    return make_policy("windows"), make_gpu_policy(name, settings)


def _modes(name: str, hardware: bool | None) -> list[bool]:
    """The scheduling modes to check ``name``'s settings in: the one given, else every mode the
    shipped name has a policy in (hardware ``False`` first)."""
    if hardware is not None:
        return [] if mode_problem(name, hardware) else [hardware]
    return [m for m in (False, True) if not mode_problem(name, m)]


def unknown_settings(name: str, settings: dict, hardware: bool | None = None) -> list[tuple[str, str]]:
    """The keys of ``settings`` that the shipped policy ``name`` does not take in the scheduling
    mode ``hardware`` (None: not known yet: the keys no policy of that name takes in any mode),
    each with the reason to give (``unknown field``, and for a research policy what it does take).
    Empty for a researcher's class, which is loaded only when the run is built."""
    if check_policy_name(name) or is_class_spec(name):
        return []
    per_mode = [_unknown_in(name, settings, m) for m in _modes(name, hardware)]
    if not per_mode:
        return []
    everywhere = set.intersection(*({k for k, _ in u} for u in per_mode))
    return [(k, why) for k, why in per_mode[0] if k in everywhere]


def _unknown_in(name: str, settings: dict, hardware: bool) -> list[tuple[str, str]]:
    module, cls_name, _ = (SHIPPED_GPU if hardware else SHIPPED)[name]
    if module == "builtin":
        # Windows' own policies; under hardware scheduling the OS's scheduler keeps the settings.
        known = ["quantum"] + (["starvation"] if cls_name in ("PriorityQuantum", "BandPolicy") else [])
        return [(k, "unknown field") for k in settings if k not in known]
    model = getattr(hw_policy_class(name) if hardware else policy_class(name), "Settings", None)
    known = list(getattr(model, "model_fields", {}))
    takes = f"its settings are {', '.join(known)}" if known else "it takes no settings"
    return [(k, f"unknown field (policy {name}: {takes})") for k in settings if k not in known and k != "quantum"]


def settings_problems(name: str, settings: dict, hardware: bool | None = None) -> list[tuple[str, str]]:
    """What is wrong with ``settings`` for the shipped policy ``name``, as ``(field, reason)``
    pairs (a scenario is checked with this before any run), the keys it does not take aside
    (:func:`unknown_settings`), in the scheduling mode ``hardware`` (None: not known yet: a problem
    only when the name's policy has it in every mode). A researcher's class is loaded only when the
    run is built, so its settings are checked then: here it gives no problem; nor does a name with
    no policy in the mode (:func:`~.names.mode_problem` says so)."""
    if check_policy_name(name) or is_class_spec(name):
        return []
    first = None
    for mode in _modes(name, hardware):
        unknown = {k for k, _ in _unknown_in(name, settings, mode)}
        try:
            make_policies(name, {k: v for k, v in settings.items() if k not in unknown}, mode)
        except PolicyLoadError as e:
            first = first or e.problems
            continue
        return []
    return first or []


def mode_problems(name: str, extra: dict, settings: dict, hardware: bool) -> list[tuple[tuple, str]]:
    """The scenario's cross-field check of ``[scheduler]`` once the scheduling mode is known:
    the named policy has none in this mode, or the table's keys (``extra``: every key but
    ``policy`` and ``quantum``; ``settings``: the policy's settings) do not suit the mode's policy.
    As ``(location, reason)`` pairs."""
    problem = mode_problem(name, hardware)
    if problem:
        return [(("scheduler", "policy"), problem)]
    unknown = unknown_settings(name, extra, hardware)
    if unknown:
        return [(("scheduler", k), why) for k, why in unknown]
    return [(("scheduler",), why if field.removeprefix("scheduler.") in why else f"{field.removeprefix('scheduler.')}: {why}")
            for field, why in settings_problems(name, settings, hardware)]


def policy_label(name: str) -> str:
    """A short name for ``name`` in tables and plots: a shipped policy's own name, a class's name
    for ``path/file.py:Class``."""
    return name.rpartition(":")[2] if is_class_spec(name) else name


__all__ = ["PolicyLoadError", "hw_policy_class", "make_gpu_policy", "make_policies", "make_policy", "mode_problems",
           "policy_class", "policy_label", "settings_problems", "unknown_settings"]
