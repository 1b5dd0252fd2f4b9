"""What ``wddmsim verify`` prints: the table, the failures in detail, JSON, and JUnit XML for the
CI systems driver teams use (one ``testcase`` per case, ``failure`` or ``skipped`` as it went).

One word for a case that does not apply: ``n/a`` (not applicable), the table's verdict, JSON's
``verdict`` and ``counts`` key, the message of JUnit XML's ``skipped`` element (``skipped`` is the
format's own element, which CI systems read) and the docs'.

The failures are printed once per kind (:func:`failure_groups`): the cases that broke the same rule
in the same entry point with the same message (its numbers aside) and the same bug check make one
block, headed by how many cases and which, then the first case's detail. Each block names the
driver's entry point that broke the rule and the file and line of its code in the driver's class
(:mod:`.blame`). JSON and JUnit XML keep one entry per case; JSON adds ``failure_groups`` and each
failure's ``group``, ``entry_point`` and ``broke_at_crossing``.

The table and the failures are as wide as the console, or as ``COLUMNS`` says when it is set,
whether standard output is a terminal or a pipe (:func:`fitted`).

A suite a signal cut short (:attr:`~wddmsim.verify.runner.Report.interrupted`) says so: one line,
``INTERRUPTED by SIGINT during AREA/CASE: N of M cases ran; the verdict covers only those``, then
the verdict ``PARTIAL`` instead of PASS or FAIL; JSON's ``interrupted`` holds the signal, the case,
and the counts (null for a whole suite); JUnit XML lists the abandoned case with an ``error``."""

from __future__ import annotations

import json
import os
import re
import textwrap
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..ddi.rules.catalog import catalog
from .runner import NOT_APPLICABLE, CaseResult, Failure, Report

_VERDICT_STYLE = {"pass": "[green]pass[/green]", "fail": "[bold red]FAIL[/bold red]",
                  NOT_APPLICABLE: f"[dim]{NOT_APPLICABLE}[/dim]"}
#: The verdicts, in the order the counts list them.
VERDICTS = ("pass", "fail", NOT_APPLICABLE)


def ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 5, 9, 10]`` as ``"1-3, 5, 9-10"``."""
    out = []
    start = prev = None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return ", ".join(out)


def by_status(numbers: list[int]) -> dict[str, int]:
    """How many of ``numbers`` the catalogue files under each status. A ``construction`` rule's
    check re-reads what the OS built, so it counts as exercised without judging the driver."""
    status = {r.number: r.status for r in catalog()}
    out = {"runtime": 0, "ground_truth": 0, "construction": 0}
    for n in numbers:
        out[status[n]] = out.get(status[n], 0) + 1
    return out


def exercised_line(numbers: list[int]) -> str:
    """``51 rules exercised (24 judge the driver, 9 the GPU's ground truth, 18 re-check the OS)``."""
    c = by_status(numbers)
    return (f"{len(numbers)} rules exercised ({c['runtime']} judge the driver, "
            f"{c['ground_truth']} the GPU's ground truth, {c['construction']} re-check what the OS built)")


def declared_line(report: Report) -> str:
    d = report.declared
    caps = [name for name, on in (
        ("MultiEngineAware", d.multi_engine_aware), ("PreemptionAware", d.preemption_aware),
        ("SupportPerEngineTDR", d.per_engine_reset), ("CancelCommandAware", d.cancel_aware),
        ("GPU virtual addressing", d.virtual_addressing), ("hardware scheduling", d.hardware_scheduling),
        ("FlipInterval", d.flip_interval), ("FlipOnVSyncWithNoWait", d.flip_no_wait),
        ("FlipOnVSyncMmIo", d.mmio_flips), ("SupportMultiPlaneOverlay", d.overlays),
        ("MaxHwQueuedFlips (hardware flip queue)", d.hw_flip_queue)) if on]
    return f"DDI {d.version} (0x{d.version_value:X}), {d.nodes} node(s); declares: {', '.join(caps) or 'nothing optional'}"


def fitted(con: Console) -> Console:
    """``con`` at the width ``COLUMNS`` gives, when it gives one (a whole number above 0), whatever
    width it was made with: the command line makes a console for a pipe 200 columns wide, so without
    this a person who pipes the report with ``COLUMNS=100`` would get lines of 200."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        con.width = int(columns)
    return con


def say(con: Console, text: str, indent: str = "  ") -> None:
    """``text`` as plain text, ``indent`` in and wrapped at the console's width with each further
    line two columns deeper, so that a wrapped sentence reads as one (a JSON structure with no
    spaces is cut where the width ends). A console made with ``soft_wrap`` (the pytest plugin's
    failure text) gets the line whole, as it asked."""
    if con.soft_wrap:
        con.print(indent + text, markup=False, highlight=False)
        return
    for line in textwrap.wrap(text, max(20, con.width), initial_indent=indent, subsequent_indent=indent + "  ",
                              break_on_hyphens=False) or [""]:
        con.print(line, markup=False, highlight=False, soft_wrap=True)


def print_report(con: Console, report: Report) -> None:
    """The report as ``wddmsim verify`` prints it: what the driver declared, the table, each kind of
    failure once, the verdict."""
    con = fitted(con)
    con.print(f"[bold]wddmsim verify[/bold] {report.driver}")
    con.print(declared_line(report))
    groups = failure_groups(report.results)
    label = {id(r): group.label for group in groups for r in group.results}
    t = Table(box=None, pad_edge=False)
    t.add_column("area")
    t.add_column("scenario")
    t.add_column("rules exercised", overflow="fold")
    t.add_column("verdict")
    for r in report.results:
        note = label[id(r)] if r.verdict == "fail" else r.reason if r.verdict != "pass" else ""
        rules = ranges(r.rules) if r.verdict != NOT_APPLICABLE else ""
        t.add_row(r.area, r.name + (f"\n[dim]{escape(note)}[/dim]" if note else ""), rules, _VERDICT_STYLE[r.verdict])
    con.print(t)
    for group in groups:
        print_group(con, group)
    passed, failed, not_applicable = (report.count(v) for v in VERDICTS)
    if report.interrupted is not None:
        con.print(f"\n{interrupted_line(report)}", markup=False, highlight=False)
        word, style = "PARTIAL", "bold yellow"
    else:
        word, style = ("PASS", "bold green") if report.passed else ("FAIL", "bold red")
    text = (f"{word}: {passed} passed, {failed} failed, {not_applicable} not applicable; "
            f"{exercised_line(report.rules)}; {report.wall_s:.1f} s")
    lines = [text] if con.soft_wrap else textwrap.wrap(text, max(20, con.width), subsequent_indent="  ")
    con.print(f"[{style}]{word}[/{style}]{escape(lines[0][len(word):])}", soft_wrap=True)
    for line in lines[1:]:  # wrapped under itself, as the failures' sentences are
        con.print(line, markup=False, highlight=False, soft_wrap=True)


def interrupted_line(report: Report) -> str:
    """``INTERRUPTED by SIGINT during scheduling/basic: 3 of 40 cases ran; the verdict covers only
    those``: what a report cut short by a signal covers."""
    during = f" during {report.interrupted_case}" if report.interrupted_case else ""
    return (f"INTERRUPTED by {report.interrupted}{during}: {len(report.results)} of {report.planned} cases ran; "
            f"the verdict covers only those")


#: A case's own numbers in a failure's message (fences, times, counts, addresses): two messages
#: that differ only there say the same thing.
_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|\d+")


@dataclass
class FailureGroup:
    """Cases that failed the same way (:func:`failure_groups`), the first one's detail shown for all."""

    number: int
    results: list[CaseResult]
    #: more than one case failed: the blocks and the table say which kind each is (``failure N``)
    numbered: bool = False

    @property
    def first(self) -> CaseResult:
        return self.results[0]

    @property
    def title(self) -> str:
        """``rule 39 (DpcNotifiesDpc) in DxgkDdiDpcRoutine``; a failure without a rule, its bug
        check's name with the entry point, or its first message."""
        f = self.first.failure
        where = f" in {f.entry}" if f.entry else ""
        if f.rule is not None:
            return f"rule {f.rule} ({f.rule_name}){where}"
        if f.bugcheck is not None and f.entry:
            return f"{f.bugcheck['name']}{where}"
        return f.messages[0]

    @property
    def label(self) -> str:
        """What the table says under a case of the group: the title, then ``(failure N)`` when more
        than one case failed."""
        return f"{self.title} (failure {self.number})" if self.numbered else self.title

    @property
    def same_numbers(self) -> bool:
        """Whether every case's messages are the first one's, numbers included."""
        return all(r.failure.messages == self.first.failure.messages for r in self.results)

    def as_json(self) -> dict:
        f = self.first.failure
        return {"group": self.number, "title": self.title, "rule": f.rule, "rule_name": f.rule_name,
                "entry_point": f.entry, "where": f.definition.where if f.definition else None,
                "cases": [r.case.id for r in self.results], "shown": self.first.case.id}


def _kind(f: Failure) -> tuple:
    """What makes two failures the same kind: the rule, the entry point, the bug check (code and
    first parameter), the messages with their numbers aside, a ground truth, a traceback."""
    bc = f.bugcheck
    return (f.rule, f.rule_name, f.entry, bc["code"] if bc else None, bc["p1"] if bc else None, f.ground_truth,
            tuple(_NUMBER.sub("N", m) for m in f.messages), f.traceback is not None)


def failure_groups(results: list[CaseResult]) -> list[FailureGroup]:
    """The failed cases of ``results`` by kind of failure (:func:`_kind`), in the order each kind
    first failed, numbered from 1."""
    kinds: dict[tuple, FailureGroup] = {}
    for r in results:
        if r.verdict == "fail":
            key = _kind(r.failure)
            if key not in kinds:
                kinds[key] = FailureGroup(len(kinds) + 1, [])
            kinds[key].results.append(r)
    groups = list(kinds.values())
    numbered = sum(len(g.results) for g in groups) > 1
    for g in groups:
        g.numbered = numbered
    return groups


def cases_text(results: list[CaseResult]) -> str:
    """``submission (single, back_to_back), queues (deep)``: the cases by area, in order."""
    areas: dict[str, list[str]] = {}
    for r in results:
        areas.setdefault(r.area, []).append(r.name)
    return ", ".join(f"{area} ({', '.join(names)})" for area, names in areas.items())


def print_group(con: Console, group: FailureGroup) -> None:
    """A kind of failure once: a single case as :func:`print_failure` prints it; several headed by
    how many and which, then the first one's detail."""
    if len(group.results) == 1:
        print_failure(con, group.first, group.number if group.numbered else None)
        return
    r = group.first
    con.print(f"\n[bold red]FAIL[/bold red] [bold]{len(group.results)} cases[/bold] (failure {group.number}): "
              f"{escape(group.title)}")
    say(con, cases_text(group.results))
    differ = "" if group.same_numbers else "; the other cases' messages differ from it only in their numbers"
    say(con, f"Shown for {r.case.id} ({r.case.title}){differ}:")
    print_failure_detail(con, r.failure)


def print_failure(con: Console, r: CaseResult, number: int | None = None) -> None:
    """One case's failure in detail, headed by the case (and ``(failure N)``, given ``number``)."""
    which = f" (failure {number})" if number is not None else ""
    con.print(f"\n[bold red]FAIL[/bold red] [bold]{r.case.id}[/bold]{which}: {r.case.title}")
    print_failure_detail(con, r.failure)


def entry_line(f: Failure) -> str | None:
    """``The entry point that broke it: DxgkDdiDpcRoutine (MyDriver, mydriver.py:12)``, where
    known (``inherited from CLASS`` when the driver's class does not define it itself)."""
    if not f.entry:
        return None
    d = f.definition
    if d is None:
        return f"The entry point that broke it: {f.entry}"
    owner = d.owner if d.own else f"inherited from {d.owner}"
    return f"The entry point that broke it: {f.entry} ({owner}{', ' + d.where if d.where else ''})"


def print_failure_detail(con: Console, f: Failure) -> None:
    """What a failure says (docs/verify.md, "Reading a failure"), two spaces in."""
    if f.rule is not None:
        words = f": {f.rule_words}" if f.rule_words else ""
        say(con, f"Rule {f.rule} ({f.rule_name}){words}")
    for m in f.messages:
        say(con, m)
    entry = entry_line(f)
    if entry is not None:
        say(con, entry)
    if f.ground_truth:
        con.print("  [bold]A ground-truth check[/bold]: the GPU model knows what it really fetched and ran; "
                  "Windows cannot see this and would not stop. The model stops with:")
    elif f.bugcheck is not None:
        con.print("  Windows would stop with:")
    if f.bugcheck is not None:
        for line in f.bugcheck["explained"]:
            say(con, line, "    ")
    if f.event is not None:
        e = f.event
        stop = f.crash.get("time") if f.crash else None
        if f.at_crossing or stop is None:
            head = f"The crossing it broke at (t={e['t']} ns)"
        else:
            head = f"The last crossing logged before the stop (t={e['t']} ns; the stop: t={stop} ns)"
        say(con, f"{head}: {e['event']} {e.get('name', '')} {json.dumps(e.get('args', {}), separators=(',', ':'))[:400]}")
    if f.crash is not None and f.crash.get("decoded"):
        con.print(f"  Crash record: {f.crash['struct']} ({f.crash['arch']}, {f.crash['ddi_version']}):",
                  markup=False, highlight=False)
        for path, text in list(f.crash["decoded"].items())[:40]:
            say(con, f"{path} = {text}", "    ")
    if f.traceback:
        con.print("  The driver's traceback:")
        for line in f.traceback.rstrip().splitlines():
            con.print(f"    {line}", markup=False, highlight=False)


def report_json(report: Report) -> dict:
    """The report as ``wddmsim verify --json`` prints it: one entry per case, the kinds of failure
    in ``failure_groups`` (each failure's ``group`` is its number)."""
    d = report.declared
    groups = failure_groups(report.results)
    group = {id(r): g.number for g in groups for r in g.results}
    return {
        "driver": report.driver, "passed": report.passed, "wall_s": round(report.wall_s, 3),
        "interrupted": None if report.interrupted is None else {
            "signal": report.interrupted, "case": report.interrupted_case, "ran": len(report.results),
            "cases": report.planned},
        "declared": {k: getattr(d, k) for k in d.__dataclass_fields__},
        "counts": {v: report.count(v) for v in VERDICTS},
        "rules_exercised": report.rules,
        "rules_exercised_by_status": by_status(report.rules),
        "failure_groups": [g.as_json() for g in groups],
        "cases": [{
            "area": r.area, "scenario": r.name, "title": r.case.title, "verdict": r.verdict, "reason": r.reason,
            "rules": r.rules, "wall_s": round(r.wall_s, 3),
            "failure": None if r.failure is None else {
                "group": group[id(r)], "messages": r.failure.messages, "rule": r.failure.rule,
                "rule_name": r.failure.rule_name, "rule_words": r.failure.rule_words,
                "entry_point": _entry_json(r.failure), "ground_truth": r.failure.ground_truth,
                "bugcheck": r.failure.bugcheck, "event": r.failure.event, "broke_at_crossing": r.failure.at_crossing,
                "crash_record": r.failure.crash, "traceback": r.failure.traceback},
        } for r in report.results],
    }


def _entry_json(f: Failure) -> dict | None:
    """The entry point that broke it: its name, the class that defines it, whether the driver's class
    inherits it, the file and line of its code (None where not known)."""
    if not f.entry:
        return None
    if f.definition is not None:
        return f.definition.as_json()
    return {"name": f.entry, "class": None, "inherited": None, "file": None, "line": None}


def junit_xml(report: Report) -> bytes:
    """The report as JUnit XML: a test suite of one test case per scenario (a case that does not
    apply is ``skipped``, the format's element, with the message ``n/a: <why>``)."""
    abandoned = report.interrupted is not None and report.interrupted_case is not None
    suite = ET.Element("testsuite", name=f"wddmsim verify {report.driver}",
                       tests=str(len(report.results) + abandoned), failures=str(report.count("fail")),
                       skipped=str(report.count(NOT_APPLICABLE)), errors=str(int(abandoned)),
                       time=f"{report.wall_s:.3f}")
    for r in report.results:
        tc = ET.SubElement(suite, "testcase", classname=f"wddmsim.verify.{r.area}", name=r.name,
                           time=f"{r.wall_s:.3f}")
        if r.verdict == NOT_APPLICABLE:
            ET.SubElement(tc, "skipped", message=f"{NOT_APPLICABLE}: {r.reason}")
        elif r.verdict == "fail":
            f = r.failure
            head = f"rule {f.rule} ({f.rule_name}): " if f.rule is not None else ""
            node = ET.SubElement(tc, "failure", message=head + f.messages[0],
                                 type=f.bugcheck["name"] if f.bugcheck else "expectation")
            lines = list(f.messages)
            entry = entry_line(f)
            if entry is not None:
                lines.append(entry)
            if f.bugcheck:
                lines += f.bugcheck["explained"]
            if f.event:
                lines.append(f"at t={f.event['t']} ns: {f.event['event']} {f.event.get('name', '')}")
            if f.traceback:
                lines.append(f.traceback)
            node.text = "\n".join(lines)
        if r.rules:
            ET.SubElement(tc, "system-out").text = f"rules exercised: {ranges(r.rules)}"
    if abandoned:  # the case under way when the signal came: an error, neither passed nor failed
        area, _, case = report.interrupted_case.partition("/")
        tc = ET.SubElement(suite, "testcase", classname=f"wddmsim.verify.{area}", name=case, time="0.000")
        ET.SubElement(tc, "error", message=interrupted_line(report), type=report.interrupted)
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
