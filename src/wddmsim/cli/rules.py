"""``wddmsim rules``: the catalogue of the 127 DDI rules (:mod:`wddmsim.ddi.rules.catalog`) as a
table, JSON or the Markdown table of docs/rules.md.

The table fits the console (``COLUMNS``, else the terminal, else 100 columns when piped:
:func:`wddmsim.ddi.explain_text.fit_width`). Rule names are never cut: the words of each rule
wrap in their column or, when fewer than :data:`MIN_WORDS` columns would be left for them, go
under the rule's line, wrapped to the width."""

from __future__ import annotations

import json

import click
from rich.console import Console

from ..ddi.explain_text import Col, fit_width, plain_table
from ..ddi.rules.catalog import RULE_COUNT, STATUSES, catalog, counts, markdown_table

#: The narrowest column the rules' words keep beside the other columns; narrower, they go under.
MIN_WORDS = 40


def select(numbers: tuple[str, ...], status: str | None):
    """The catalogue rules named by ``numbers`` (all when empty) with ``status`` (any when None);
    raises :class:`click.UsageError` (exit 2) for a number or status that does not exist."""
    if status is not None and status not in STATUSES:
        raise click.UsageError(f"unknown status {status!r}; the statuses are {', '.join(STATUSES)}")
    wanted: list[int] = []
    for text in numbers:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if not 1 <= n <= RULE_COUNT:
            raise click.UsageError(f"no rule {text!r}: rules are numbered 1 to {RULE_COUNT}")
        wanted.append(n)
    rules = catalog()
    if wanted:
        rules = tuple(rules[n - 1] for n in dict.fromkeys(wanted))
    if status is not None:
        rules = tuple(r for r in rules if r.status == status)
    return rules


def summary_line(rules) -> str:
    c = counts(rules)
    return f"{len(rules)} rule{'' if len(rules) == 1 else 's'}: " + ", ".join(f"{c[s]} {s}" for s in STATUSES)


def table_lines(rules, columns: int) -> list[str]:
    """The rules as text lines at most ``columns`` wide (no rule name is ever cut)."""
    cols = [Col("#", right=True), Col("name"), Col("status"), Col("tests", right=True), Col("what it says", wraps=True)]
    rows = [[str(r.number), r.name, r.status, str(len(r.tests)), r.words] for r in rules]
    return ["DDI contract rules", *plain_table(cols, rows, columns, under_below=MIN_WORDS)]


@click.command("rules")
@click.argument("numbers", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option("--markdown", is_flag=True, help="Print the Markdown table docs/rules.md carries.")
@click.option("--status", default=None, metavar="STATUS",
              help=f"Only rules with this status ({', '.join(STATUSES)}).")
def rules_cmd(numbers, as_json, markdown, status) -> None:
    """How the model accounts for each checkable DDI rule: its status, what it says, where it is
    checked and which tests break it. NUMBERS limits the list to those rules."""
    rules = select(numbers, status)
    if as_json:
        click.echo(json.dumps([r.as_json() for r in rules], indent=1))
        return
    if markdown:
        click.echo(markdown_table(rules), nl=False)
        return
    con = Console(highlight=False)
    for line in table_lines(rules, fit_width(con.width if con.is_terminal else None)):
        con.print(line, markup=False, highlight=False, soft_wrap=True)
    con.print(summary_line(rules), markup=False, highlight=False, soft_wrap=True)
