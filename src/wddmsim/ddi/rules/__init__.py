"""The DDI contract rules that can be judged from one DDI structure.

``check(struct_name, obj, facts)`` runs every rule registered for a structure on a ctypes instance
built by :mod:`wddmsim.ddi.codec` and returns the :class:`Violation` objects found; :class:`Facts`
carries what the caller knows around the structure (unknown facts leave their rules unjudged).
``RULES`` maps each rule number to its :class:`Rule`; ``rules_for`` lists a structure's rules.

Modules: :mod:`.core` (machinery), :mod:`.submit`, :mod:`.patch`, :mod:`.preempt`,
:mod:`.interrupt`, :mod:`.hwqueue`, :mod:`.hwsched`, :mod:`.caps`, :mod:`.paging`, :mod:`.answers` (one per area;
each names the Microsoft pages its rules follow).

Spec: the rule catalogue (``wddmsim rules``, docs/rules.md), which gives each rule's Microsoft sources.
"""

from __future__ import annotations

from . import answers, caps, hwqueue, hwsched, interrupt, paging, patch, preempt, submit  # noqa: F401  (registers the rules)
from .core import RULES, Facts, Rule, Violation, check, rule, rules_for

__all__ = ["RULES", "Facts", "Rule", "Violation", "check", "rule", "rules_for"]
