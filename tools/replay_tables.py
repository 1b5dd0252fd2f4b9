"""Print the Markdown tables of docs/replay.md: ``wddmsim replay`` on each shipped capture
(tests/data/presentmon), one row per swap chain, real against model; and the compositor's cadence
(dwm.exe's presents per second and median interval) on each capture in each of its three column
sets, with how many of the capture's dwm.exe presents no window's frame explains (the desktop
updates the rebuilt scenario keeps). tests/test_replay_doc.py checks that the document holds
exactly these tables.

    uv run python tools/replay_tables.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from wddmsim.cli import main

DATA = Path(__file__).parents[1] / "tests" / "data" / "presentmon"
CAPTURES = ("test_case_4.csv", "test_case_0.csv")
COLUMN_SETS = (("current", ""), ("v1", "_v1"), ("v2", "_v2"))
METRICS = (("MsBetweenPresents median", "frame time"), ("MsGPUBusy median", "GPU busy"),
           ("MsInPresentAPI median", "in Present"), ("MsUntilDisplayed median", "to screen"))


def _ms(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def _replay(capture: str) -> dict:
    r = CliRunner().invoke(main, ["replay", str(DATA / capture), "--json"])
    if r.exit_code != 0:
        raise SystemExit(f"replay {capture} failed: {r.output}")
    return json.loads(r.output)


def table(capture: str) -> str:
    result = _replay(capture)
    head = ["swap chain", "presents", "present mode (model match)"] + [f"{label} ms" for _, label in METRICS] + ["targets"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in result["chains"]:
        t = {x["name"]: x for x in c["targets"]}
        mode = t["present mode"]
        missed = [name for name, x in t.items() if not x["passed"]]
        cells = [f"{c['application']} {c['pid']}", f"{t['presents']['real']} / {t['presents']['model']}",
                 f"{mode['real']} ({mode['detail'] or mode['model']})"]
        cells += [f"{_ms(t[name]['real'])} / {_ms(t[name]['model'])}" for name, _ in METRICS]
        cells.append("all met" if not missed else "missed: " + ", ".join(missed))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tables() -> dict[str, str]:
    return {capture: table(capture) for capture in CAPTURES}


def cadence_table() -> str:
    """dwm.exe's cadence, capture / model, on every shipped capture in every column set."""
    from wddmsim.replay.capture import read_capture
    from wddmsim.replay.scenario import build_scenario

    head = ["capture", "column set", "dwm.exe presents", "presents per second", "median interval ms",
            "desktop updates", "targets"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for capture in CAPTURES:
        for column_set, suffix in COLUMN_SETS:
            name = capture.replace(".csv", f"{suffix}.csv")
            scenario = build_scenario(read_capture(DATA / name))
            updates = sum(len(c.get("update", [])) for c in scenario["compositor"])
            for c in _replay(name)["chains"]:
                if c["application"].lower() != "dwm.exe":
                    continue
                t = {x["name"]: x for x in c["targets"]}
                cadence = [t["presents per second"], t["MsBetweenPresents median"]]
                missed = [x["name"] for x in cadence + [t["presents"]] if not x["passed"]]
                lines.append("| " + " | ".join([
                    capture.replace(".csv", ""), column_set, f"{t['presents']['real']} / {t['presents']['model']}",
                    f"{cadence[0]['real']:.2f} / {cadence[0]['model']:.2f}", f"{_ms(cadence[1]['real'])} / "
                    f"{_ms(cadence[1]['model'])}", f"{updates} of {t['presents']['real']}",
                    "met" if not missed else "missed: " + ", ".join(missed)]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    for capture, text in tables().items():
        sys.stdout.write(f"{capture}\n\n{text}\n\n")
    sys.stdout.write(f"The compositor's cadence\n\n{cadence_table()}\n")
