"""What ``wddmsim verify`` prints: the table, the failures in detail, JSON, and JUnit XML for the
CI systems driver teams use (one ``testcase`` per case, ``failure`` or ``skipped`` as it went).

A suite a signal cut short (:attr:`~wddmsim.verify.runner.Report.interrupted`) says so: one line,
``INTERRUPTED by SIGINT during AREA/CASE: N of M cases ran; the verdict covers only those``, then
the verdict ``PARTIAL`` instead of PASS or FAIL; JSON's ``interrupted`` holds the signal, the case,
and the counts (null for a whole suite); JUnit XML lists the abandoned case with an ``error``."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.table import Table

from ..ddi.rules.catalog import catalog
from .runner import CaseResult, Report

_VERDICT_STYLE = {"pass": "[green]pass[/green]", "fail": "[bold red]FAIL[/bold red]", "skip": "[dim]n/a[/dim]"}


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


def print_report(con: Console, report: Report) -> None:
    con.print(f"[bold]wddmsim verify[/bold] {report.driver}")
    con.print(declared_line(report))
    t = Table(box=None, pad_edge=False)
    t.add_column("area")
    t.add_column("scenario")
    t.add_column("rules exercised", overflow="fold")
    t.add_column("verdict")
    for r in report.results:
        note = r.reason if r.verdict != "pass" else ""
        rules = ranges(r.rules) if r.verdict != "skip" else ""
        t.add_row(r.area, r.name + (f"\n[dim]{note}[/dim]" if note else ""), rules, _VERDICT_STYLE[r.verdict])
    con.print(t)
    for r in report.results:
        if r.verdict == "fail":
            print_failure(con, r)
    passed, failed, skipped = report.count("pass"), report.count("fail"), report.count("skip")
    if report.interrupted is not None:
        con.print(f"\n{interrupted_line(report)}", markup=False, highlight=False)
        verdict = "[bold yellow]PARTIAL[/bold yellow]"
    else:
        verdict = "[bold green]PASS[/bold green]" if report.passed else "[bold red]FAIL[/bold red]"
    con.print(f"{verdict}: {passed} passed, {failed} failed, {skipped} not applicable; "
              f"{exercised_line(report.rules)}; {report.wall_s:.1f} s")


def interrupted_line(report: Report) -> str:
    """``INTERRUPTED by SIGINT during scheduling/basic: 3 of 40 cases ran; the verdict covers only
    those``: what a report cut short by a signal covers."""
    during = f" during {report.interrupted_case}" if report.interrupted_case else ""
    return (f"INTERRUPTED by {report.interrupted}{during}: {len(report.results)} of {report.planned} cases ran; "
            f"the verdict covers only those")


def print_failure(con: Console, r: CaseResult) -> None:
    f = r.failure
    con.print(f"\n[bold red]FAIL[/bold red] [bold]{r.case.id}[/bold]: {r.case.title}")
    if f.rule is not None:
        words = f": {f.rule_words}" if f.rule_words else ""
        con.print(f"  Rule {f.rule} ({f.rule_name}){words}")
    for m in f.messages:
        con.print(f"  {m}", markup=False, highlight=False)
    if f.ground_truth:
        con.print("  [bold]A ground-truth check[/bold]: the GPU model knows what it really fetched and ran; "
                  "Windows cannot see this and would not stop. The model stops with:")
    elif f.bugcheck is not None:
        con.print("  Windows would stop with:")
    if f.bugcheck is not None:
        for line in f.bugcheck["explained"]:
            con.print(f"    {line}", markup=False, highlight=False)
    if f.event is not None:
        e = f.event
        con.print(f"  The crossing it broke at (t={e['t']} ns): {e['event']} {e.get('name', '')} "
                  f"{json.dumps(e.get('args', {}), separators=(',', ':'))[:400]}")
    if f.crash is not None and f.crash.get("decoded"):
        con.print(f"  Crash record: {f.crash['struct']} ({f.crash['arch']}, {f.crash['ddi_version']}):")
        for path, text in list(f.crash["decoded"].items())[:40]:
            con.print(f"    {path} = {text}", markup=False, highlight=False)
    if f.traceback:
        con.print("  The driver's traceback:")
        for line in f.traceback.rstrip().splitlines():
            con.print(f"    {line}", markup=False, highlight=False)


def report_json(report: Report) -> dict:
    d = report.declared
    return {
        "driver": report.driver, "passed": report.passed, "wall_s": round(report.wall_s, 3),
        "interrupted": None if report.interrupted is None else {
            "signal": report.interrupted, "case": report.interrupted_case, "ran": len(report.results),
            "cases": report.planned},
        "declared": {k: getattr(d, k) for k in d.__dataclass_fields__},
        "counts": {v: report.count(v) for v in ("pass", "fail", "skip")},
        "rules_exercised": report.rules,
        "rules_exercised_by_status": by_status(report.rules),
        "cases": [{
            "area": r.area, "scenario": r.name, "title": r.case.title, "verdict": r.verdict, "reason": r.reason,
            "rules": r.rules, "wall_s": round(r.wall_s, 3),
            "failure": None if r.failure is None else {
                "messages": r.failure.messages, "rule": r.failure.rule, "rule_name": r.failure.rule_name,
                "rule_words": r.failure.rule_words, "ground_truth": r.failure.ground_truth,
                "bugcheck": r.failure.bugcheck, "event": r.failure.event,
                "crash_record": r.failure.crash, "traceback": r.failure.traceback},
        } for r in report.results],
    }


def junit_xml(report: Report) -> bytes:
    """The report as JUnit XML: a test suite of one test case per scenario."""
    abandoned = report.interrupted is not None and report.interrupted_case is not None
    suite = ET.Element("testsuite", name=f"wddmsim verify {report.driver}",
                       tests=str(len(report.results) + abandoned), failures=str(report.count("fail")),
                       skipped=str(report.count("skip")), errors=str(int(abandoned)), time=f"{report.wall_s:.3f}")
    for r in report.results:
        tc = ET.SubElement(suite, "testcase", classname=f"wddmsim.verify.{r.area}", name=r.name,
                           time=f"{r.wall_s:.3f}")
        if r.verdict == "skip":
            ET.SubElement(tc, "skipped", message=r.reason)
        elif r.verdict == "fail":
            f = r.failure
            head = f"rule {f.rule} ({f.rule_name}): " if f.rule is not None else ""
            node = ET.SubElement(tc, "failure", message=head + f.messages[0],
                                 type=f.bugcheck["name"] if f.bugcheck else "expectation")
            lines = list(f.messages)
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
