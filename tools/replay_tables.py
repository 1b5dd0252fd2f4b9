"""Print the Markdown tables of docs/replay.md: ``wddmsim replay`` on each shipped capture
(tests/data/presentmon), one row per swap chain, real against model. tests/test_replay_doc.py
checks that the document holds exactly these tables.

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
METRICS = (("MsBetweenPresents median", "frame time"), ("MsGPUBusy median", "GPU busy"),
           ("MsInPresentAPI median", "in Present"), ("MsUntilDisplayed median", "to screen"))


def _ms(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def table(capture: str) -> str:
    r = CliRunner().invoke(main, ["replay", str(DATA / capture), "--json"])
    if r.exit_code != 0:
        raise SystemExit(f"replay {capture} failed: {r.output}")
    result = json.loads(r.output)
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


if __name__ == "__main__":
    for capture, text in tables().items():
        sys.stdout.write(f"{capture}\n\n{text}\n\n")
