"""``wddmsim rules``: the catalogue of the 127 DDI rules (:mod:`wddmsim.ddi.rules.catalog`) as a
table, JSON or the Markdown table of docs/rules.md."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from ..ddi.rules.catalog import RULE_COUNT, STATUSES, catalog, counts, markdown_table


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


def table(rules) -> Table:
    t = Table(title="DDI contract rules")
    t.add_column("#", justify="right")
    t.add_column("name")
    t.add_column("status")
    t.add_column("what it says")
    t.add_column("tests", justify="right")
    for r in rules:
        t.add_row(str(r.number), r.name, r.status, r.words, str(len(r.tests)))
    return t


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
    if not con.is_terminal:
        con = Console(highlight=False, width=200)
    con.print(table(rules))
    con.print(summary_line(rules))
