"""The rule catalogue: how the model accounts for every one of the 127 checkable rules of the
WDDM DDI contract, gathered from Microsoft's documentation (``wddmsim rules``, docs/rules.md).

Each rule has one status:

- ``runtime``: a check fires at run time when a driver breaks the rule;
- ``ground_truth``: the check judges what the GPU model really did, which Windows cannot see;
- ``construction``: the OS model guarantees it; what the rule constrains is built by the OS (or
  the GPU model), never by the driver;
- ``not_modelled``: the feature the rule is about is absent from the model, or nothing can judge
  it yet; ``reason`` says which, and what would bring it.

A rule registered in :data:`wddmsim.ddi.rules.RULES` takes its name and words from the
registry, and its registered function joins ``check``; the other facts come from
:mod:`.catalog_data`. ``tests`` are the pytest node ids marked ``@pytest.mark.rule(n)``, read from
``tests.json`` beside this module, which ``tools/rule_tests.py`` writes by collecting the suite.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import import_module
from pathlib import Path

from .catalog_data import ENTRIES, STATUSES
from .core import RULES

__all__ = ["CatalogRule", "STATUSES", "TESTS_JSON", "catalog", "counts", "markdown_table", "resolve", "tests_map"]

#: The rule -> test node ids map ``tools/rule_tests.py`` writes.
TESTS_JSON = Path(__file__).with_name("tests.json")
#: How many rules the catalogue has.
RULE_COUNT = 127


@dataclass(frozen=True)
class CatalogRule:
    """One rule as the catalogue shows it (``wddmsim rules --json`` prints these fields)."""

    number: int
    name: str
    words: str
    source: tuple[str, ...]
    status: str
    check: tuple[str, ...]
    reason: str
    tests: tuple[str, ...]

    def as_json(self) -> dict:
        out = asdict(self)
        for key in ("source", "check", "tests"):
            out[key] = list(out[key])
        return out


def tests_map() -> dict[int, list[str]]:
    """Rule number -> sorted test node ids, from ``tests.json`` (empty where none is marked)."""
    try:
        raw = json.loads(TESTS_JSON.read_text())
    except FileNotFoundError:
        return {}
    return {int(k): list(v) for k, v in raw.items()}


def registered_check(number: int) -> str:
    """The dotted reference of registered rule ``number``'s function."""
    fn = RULES[number].check
    return f"{fn.__module__}.{fn.__qualname__}"


@lru_cache(maxsize=1)
def catalog() -> tuple[CatalogRule, ...]:
    """Every rule, 1..127, in order."""
    tests = tests_map()
    out = []
    for number in sorted(ENTRIES):
        e = ENTRIES[number]
        reg = RULES.get(number)
        check = e.check
        if reg is not None:
            name, words = reg.name, reg.summary
            if e.status != "not_modelled":
                check = (registered_check(number), *check)
        else:
            name, words = e.name or "", e.words or ""
        out.append(CatalogRule(number, name, words, e.sources, e.status, check, e.reason,
                               tuple(tests.get(number, ()))))
    return tuple(out)


def counts(rules=None) -> dict[str, int]:
    """Rules per status, in :data:`STATUSES` order."""
    rules = catalog() if rules is None else rules
    return {s: sum(1 for r in rules if r.status == s) for s in STATUSES}


def resolve(ref: str):
    """The object a dotted ``check`` reference names (its longest importable module prefix, then
    attributes); raises ImportError or AttributeError when it names nothing."""
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module in {ref!r}")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(rules=None) -> str:
    """The catalogue as the Markdown table docs/rules.md carries (generated; one row per rule)."""
    rules = catalog() if rules is None else rules
    lines = ["| # | name | status | what it says | tests |", "|---:|---|---|---|---:|"]
    for r in rules:
        what = r.words
        if r.reason and r.status in ("not_modelled", "construction"):
            what += f" *{r.status.replace('_', ' ')}: {r.reason}*"
        lines.append(f"| {r.number} | {r.name} | {r.status} | {_cell(what)} | {len(r.tests)} |")
    summary = ", ".join(f"{n} {s}" for s, n in counts(rules).items())
    lines.append("")
    lines.append(f"{len(rules)} rules: {summary}.")
    return "\n".join(lines) + "\n"
