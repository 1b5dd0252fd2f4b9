"""``wddmsim check LOG``: replay a saved event log through the packet ledger.

The same ledger every run keeps (:mod:`wddmsim.trace.ledger`, docs/ledger.md) reads the log's
events; its totals are compared with the ``ledger`` totals the log's ``LogEnd`` summary carries
(what the run counted as it went), and, for a run that reached its end time, the summary's own
counts (end time, each context's packets, packets submitted and completed, presents) with what the
events show (:func:`summary_disagreements`), so an edited summary does not pass. A partial log (stopped early, or with no ``LogEnd``: see
:mod:`wddmsim.trace.ending`) is checked up to where it ends: what is still open there is in
flight, never a violation. Exit status 0 when everything is accounted for, 1 when a violation is
found (each printed with its item's history), 2 for bad input (not an event log).
"""

from __future__ import annotations

import json
import textwrap

import click

from .util import read_log

__all__ = ["check_cmd", "check_log", "ledger_rows", "summary_disagreements"]

#: The most open items the text output names (``--json`` names them all).
SHOWN_OPEN = 10
#: The columns the verdict is wrapped at (those of the run's summary).
WIDTH = 100


def ledger_rows(totals: dict) -> list[tuple[str, int, int, int, str]]:
    """The verdict table's rows for the ledger ``totals``: item kind, created, ended, in flight,
    and how they ended."""
    p, g, d, pr, f = (totals[k] for k in ("packets", "paging", "dma_submissions", "presents", "progress_fences"))

    def ended(t, *keys):
        return sum(t[k] for k in keys)

    return [
        ("packets", p["created"], ended(p, "completed", "cancelled", "aborted"), p["in_flight"],
         f"{p['completed']} completed, {p['cancelled']} cancelled, {p['aborted']} aborted; "
         f"{p['resubmitted']} resubmitted"),
        ("paging packets", g["created"], ended(g, "completed", "cancelled", "aborted"), g["in_flight"],
         f"{g['completed']} completed, {g['cancelled']} cancelled, {g['aborted']} aborted; "
         f"{g['resubmitted']} resubmitted; {g['evictions']} evictions"),
        ("DMA submissions", d["created"], ended(d, "completed", "preempted", "reset", "aborted"), d["in_flight"],
         f"{d['completed']} completed, {d['preempted']} preempted, {d['reset']} reset, {d['aborted']} aborted"),
        ("presents", pr["created"], ended(pr, "displayed", "dropped"), pr["pending"],
         f"{pr['displayed']} displayed, {pr['dropped']} dropped"),
        ("progress fences", f["created"], ended(f, "completed", "cancelled", "aborted"), f["in_flight"],
         f"{f['completed']} completed, {f['cancelled']} cancelled, {f['aborted']} aborted"),
    ]


def check_log(events: list[dict]) -> dict:
    """The ledger's verdict on a log read back as dicts: ``ending`` (how the log ends),
    ``totals`` (the replay's), ``logged`` (the LogEnd summary's ledger totals, None when the log
    has none), ``violations`` (:class:`~wddmsim.trace.ledger.Violation`), ``in_flight`` (the open
    items' names)."""
    from ..trace.ending import log_ending
    from ..trace.ledger import KEEP_CLOSED, Ledger, Violation

    ending = log_ending(events)
    ledger = Ledger(keep_closed=KEEP_CLOSED)
    ledger.feed(events)
    end_t = ending.t if ending.t is not None else 0
    found = ledger.check_now(end_t)
    totals = ledger.summary()
    logged = None
    if ending.reason is not None:
        summary = events[-1].get("summary")
        if isinstance(summary, dict) and isinstance(summary.get("ledger"), dict):
            logged = summary["ledger"]
    if logged is not None:
        for kind, counts in totals.items():
            theirs = logged.get(kind, {})
            for key, n in counts.items():
                if theirs.get(key) != n:
                    found.append(Violation(end_t, f"the {kind.replace('_', ' ')} total {key!r}",
                                           f"the log's LogEnd summary says {theirs.get(key)}, the replay counts {n}",
                                           []))
    if logged is not None and ending.reason == "time":
        found += summary_disagreements(events, events[-1]["summary"], ledger, end_t)
    return {"ending": ending, "totals": totals, "logged": logged, "violations": found,
            "in_flight": ledger.open_items()}


def summary_disagreements(events: list[dict], summary: dict, ledger, end_t: int) -> list:
    """Where the LogEnd ``summary`` of a run that reached its end time disagrees with what the
    replay of its events counts: the run's end time, each context's packets (submitted, completed,
    cancelled, aborted; contexts matched by name to their ContextCreate events, in order), the
    packets submitted and completed (DMA submissions and retired packets under the software
    scheduler, progress fences completed under hardware scheduling) and the presents presented,
    displayed and dropped. These are the identities a live run checks between the model's counts
    and its ledger (:meth:`wddmsim.runner.system.System`'s ledger check), held here against the numbers
    the log itself reports, so an edited summary does not pass."""
    from ..trace.ledger import Violation

    found: list = []

    def differ(what: str, theirs, ours) -> None:
        if theirs != ours:
            found.append(Violation(end_t, f"the LogEnd summary's {what}",
                                   f"the log's LogEnd summary says {json.dumps(theirs)}, the replay counts "
                                   f"{json.dumps(ours)}", []))

    differ("virtual_time_ns (the run's end time)", summary.get("virtual_time_ns"), end_t)
    handles: dict[str, list] = {}
    for e in events:
        if e.get("event") == "ContextCreate":
            handles.setdefault(e.get("name"), []).append(e.get("context"))
    rows = summary.get("contexts")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        differ("contexts (a list of tables)", rows, "a list of tables")
        rows = []
    for row in rows:
        name = row.get("context")
        mine = handles.get(name) or [None]
        handle = mine.pop(0) if len(mine) > 1 else mine[0]
        differ(f"packets of context {name} (submitted, completed, cancelled, aborted)",
               [row.get(k) for k in ("submitted", "completed", "cancelled", "aborted")],
               list(ledger.per_context.get(handle, [0, 0, 0, 0])))
    totals = ledger.summary()
    dma, pf = totals["dma_submissions"], totals["progress_fences"]
    if summary.get("scheduling") == "hardware":
        differ("packets_completed (progress fences completed)", summary.get("packets_completed"), pf["completed"])
    else:
        differ("packets_submitted (DMA submissions)", summary.get("packets_submitted"), dma["created"])
        differ("packets_completed (packets retired)", summary.get("packets_completed"),
               totals["packets"]["completed"] + totals["paging"]["completed"] - pf["completed"])
    shown = summary.get("displays")
    if isinstance(shown, list) and all(isinstance(d, dict) for d in shown):
        try:
            said = [sum(d.get(k, 0) for d in shown) for k in ("presents", "displayed", "dropped")]
        except TypeError:
            said = [[d.get(k) for d in shown] for k in ("presents", "displayed", "dropped")]
    else:
        said = shown
    pr = totals["presents"]
    differ("presents (presented, displayed, dropped)", said, [pr["created"], pr["displayed"], pr["dropped"]])
    return found


@click.command("check")
@click.argument("events_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def check_cmd(events_file: str, as_json: bool) -> None:
    """Check an event log (written with --events) with the packet ledger: every packet, flip,
    paging operation and progress fence created is accounted for exactly once, and the totals
    agree with the log's LogEnd summary. A partial log is checked up to where it ends. Exit
    status 0 when clean, 1 when a violation is found (printed with the item's history), 2 for bad
    input."""
    events = read_log(events_file)
    verdict = check_log(events)
    ending, found = verdict["ending"], verdict["violations"]
    if as_json:
        click.echo(json.dumps({
            "log": events_file,
            "ending": {"reason": ending.reason, "t": ending.t, "partial": ending.partial, "text": ending.describe()},
            "totals": verdict["totals"], "logged_totals": verdict["logged"],
            "in_flight": verdict["in_flight"], "violations": [v.as_dict() for v in found],
            "verdict": "violations" if found else "clean",
        }, indent=2))
        raise SystemExit(1 if found else 0)
    click.echo(f"{events_file}: {len(events)} events; {ending.describe()}")
    rows = ledger_rows(verdict["totals"])
    head = ("item kind", "created", "ended", "in flight", "how they ended")
    width = [max(len(str(r[i])) for r in [head, *rows]) for i in range(4)]
    indent = " " * (sum(width) + 8)  # "how they ended" wraps under itself, within WIDTH columns
    for r in [head, *rows]:
        first = f"{r[0]:<{width[0]}}  {r[1]:>{width[1]}}  {r[2]:>{width[2]}}  {r[3]:>{width[3]}}  "
        click.echo("\n".join(textwrap.wrap(first + r[4], WIDTH, subsequent_indent=indent, break_long_words=False)))
    if verdict["logged"] is None:
        click.echo("totals: the log carries no LogEnd summary to compare with")
    elif not any(v.item.startswith("the ") and (" total " in v.item or "LogEnd summary's" in v.item) for v in found):
        click.echo("totals: the same as the log's LogEnd summary")
    open_items = verdict["in_flight"]
    if open_items:
        names = ", ".join(open_items[:SHOWN_OPEN]) + (f" and {len(open_items) - SHOWN_OPEN} more"
                                                      if len(open_items) > SHOWN_OPEN else "")
        click.echo("\n".join(textwrap.wrap(f"in flight at the end: {names}", WIDTH, subsequent_indent="  ",
                                            break_long_words=False)))
    if not found:
        click.echo("verdict: clean: every packet, flip, paging operation and progress fence is accounted for")
        raise SystemExit(0)
    click.echo(f"verdict: {len(found)} violation{'s' if len(found) != 1 else ''}: the model lost track of work")
    for v in found:
        click.echo(v.describe(WIDTH))
    raise SystemExit(1)
