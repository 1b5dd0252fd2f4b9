"""Module docstrings that cite a DDI contract rule by number cite one a reader of this repository
can look up: the number exists in the rule catalogue, the docstring says where to look it up
(``wddmsim rules N`` and docs/rules.md), and a rule cited on its own or in a short list is named
(its CamelCase name from the catalogue) so the number cannot silently point at another rule."""

import ast
import re
from pathlib import Path

from wddmsim.ddi.rules.catalog import RULE_COUNT, catalog

SRC = Path(__file__).parents[1] / "src"

#: "rule 5", "rules 32/33/36", "rules 1, 4-6 and 9": the numbers are group 1. A module's own
#: numbered steps ("scheduling rule 2" in gpu/scheduler.py) are not catalogue rules.
MENTION = re.compile(r"(?<!scheduling )\b[Rr]ules? (\d+(?:(?:, | and | or |/|-|–|, and )\d+(?![\dx]))*)")


def numbers(text: str) -> list[int]:
    """The rule numbers a mention's number list names, ranges expanded."""
    out = []
    for part in re.split(r", and |, | and | or |/", text):
        ends = [int(x) for x in re.split(r"-|–", part)]
        out += list(range(ends[0], ends[-1] + 1))
    return out


def module_docstrings():
    for path in sorted(SRC.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False)
        if doc:
            yield path.relative_to(SRC).as_posix(), doc


def test_the_mention_parser_reads_every_form():
    assert [numbers(m) for m in MENTION.findall(
        "rule 5, rules 32/33/36, rules 1, 4-6 and 9, rules 56, 92-95, 100, 103-105 and 122-126; "
        "scheduling rule 2")] == [[5], [32, 33, 36], [1, 4, 5, 6, 9],
                                  [56, 92, 93, 94, 95, 100, 103, 104, 105, 122, 123, 124, 125, 126]]


def test_rule_numbers_in_module_docstrings_can_be_looked_up():
    names = {r.number: r.name for r in catalog()}
    cited, problems = 0, []
    for module, doc in module_docstrings():
        flat = " ".join(doc.split())
        mentions = [numbers(m) for m in MENTION.findall(flat)]
        if not mentions:
            continue
        cited += 1
        for needed in ("wddmsim rules", "docs/rules.md"):
            if needed not in flat:
                problems.append(f"{module}: cites rules {mentions[0]} without {needed!r}")
        for nums in mentions:
            for n in nums:
                if not 1 <= n <= RULE_COUNT:
                    problems.append(f"{module}: rule {n} is not in the catalogue (1..{RULE_COUNT})")
                elif len(nums) <= 4 and names[n] not in flat:
                    problems.append(f"{module}: rule {n} cited without its name {names[n]}")
    assert problems == []
    assert cited >= 25
