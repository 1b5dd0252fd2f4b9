"""Making the scheduler's policy from a scenario's ``[scheduler]`` table: a shipped policy by name
(:data:`wddmsim.policies.names.SHIPPED`) or a researcher's :class:`~.protocol.Policy` subclass named
``"package.module:Class"`` or ``"path/to/file.py:Class"`` (a relative path in a scenario file is
found next to the file when it is there, else from the current folder), with its settings checked by the class's ``Settings`` model.

A name that does not load, a class that is no policy, or a setting the policy refuses is a
:class:`PolicyLoadError` whose ``problems`` are ``(field, reason)`` pairs, one line each on the
command line (exit status 2).
"""

from __future__ import annotations

import importlib

from pydantic import BaseModel, ValidationError

from ..dxgkrnl.policy import PriorityQuantum, StrictPriority
from ..loader import LoadError, load_class
from .host import PolicyHost
from .names import SHIPPED, check_policy_name, is_class_spec
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
        module, cls_name, _ = SHIPPED[name]
        if module == "builtin":
            raise PolicyLoadError([("scheduler.policy", f"{name!r} is the OS's own policy, not a research class")])
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls_name)
    try:
        cls = load_class(name, "scheduling policy")
    except LoadError as e:
        raise PolicyLoadError([("scheduler.policy", str(e))]) from None
    if not issubclass(cls, Policy):
        raise PolicyLoadError([("scheduler.policy", f"scheduling policy {name!r}: {cls.__name__} is not a subclass "
                                                    "of wddmsim.policies.Policy")])
    if cls.pick is Policy.pick:
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
    problem = check_policy_name(name)
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
    model = getattr(cls, "Settings", None)
    if "quantum" not in getattr(model, "model_fields", {}):
        # ``quantum`` is the [scheduler] table's own field (the OS's policies' time slice): a research
        # policy gets it only when its Settings declare it, so one sweep may vary it over both kinds.
        table.pop("quantum", None)
    label = name if is_class_spec(name) else f"{name} ({cls.__name__})"
    return PolicyHost(cls, _settings(model, table, name), label)


def unknown_settings(name: str, settings: dict) -> list[tuple[str, str]]:
    """The keys of ``settings`` that the shipped policy ``name`` does not take, each with the reason
    to give (``unknown field``, and for a research policy what it does take). Empty for a
    researcher's class, which is loaded only when the run is built."""
    if check_policy_name(name) or is_class_spec(name):
        return []
    module, cls_name, _ = SHIPPED[name]
    if module == "builtin":
        known = ["quantum"] + (["starvation"] if cls_name == "PriorityQuantum" else [])
        return [(k, "unknown field") for k in settings if k not in known]
    model = getattr(policy_class(name), "Settings", None)
    known = list(getattr(model, "model_fields", {}))
    takes = f"its settings are {', '.join(known)}" if known else "it takes no settings"
    return [(k, f"unknown field (policy {name}: {takes})") for k in settings if k not in known and k != "quantum"]


def settings_problems(name: str, settings: dict) -> list[tuple[str, str]]:
    """What is wrong with ``settings`` for the shipped policy ``name``, as ``(field, reason)``
    pairs (a scenario is checked with this before any run), the keys it does not take aside
    (:func:`unknown_settings`). A researcher's class is loaded only when the run is built, so its
    settings are checked then: here it gives no problem."""
    if check_policy_name(name) or is_class_spec(name):
        return []
    unknown = {k for k, _ in unknown_settings(name, settings)}
    try:
        make_policy(name, {k: v for k, v in settings.items() if k not in unknown})
    except PolicyLoadError as e:
        return e.problems
    return []


def policy_label(name: str) -> str:
    """A short name for ``name`` in tables and plots: a shipped policy's own name, a class's name
    for ``path/file.py:Class``."""
    return name.rpartition(":")[2] if is_class_spec(name) else name


__all__ = ["PolicyLoadError", "make_policy", "policy_class", "policy_label", "settings_problems", "unknown_settings"]
