"""The commands the documentation shows write their files under ``out/``, which ``.gitignore``
ignores, so a reader who runs them leaves the clone's ``git status`` clean; and the commands are
shown as a user of a clone types them (``uv run wddmsim ...``). The README's own commands are also
run as written by tests/test_cli.py::test_readme_examples_run; this test reads every command of
README.md, docs/, examples/README.md and benchmarks/README.md without running it."""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOCS = [ROOT / "README.md", ROOT / "examples" / "README.md", ROOT / "benchmarks" / "README.md",
        *sorted((ROOT / "docs").glob("*.md"))]

#: The options that name a file or folder the command writes (wddmsim's, and benchmarks/all.py's
#: --json FILE); ">" is the shell's redirection.
WRITES = {"--events", "--trace", "--presentmon", "--report", "--emit", "-o", "--output", "--crash-record",
          "--plot-file", "--junit", ">"}


def commands(text: str) -> list[str]:
    """Every command line a document shows: the lines of its code blocks (fenced or indented) that
    start with ``uv run`` or ``wddmsim``, continuation lines joined, and every inline code span that
    starts with ``uv run``."""
    found, lines, fenced = [], text.splitlines(), False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            cmd = line.strip()
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            if cmd.startswith(("uv run ", "wddmsim ")):
                found.append(re.sub(r"\s+#.*$", "", cmd))
        i += 1
    found += re.findall(r"`(uv run [^`]+)`", text)
    return found


def written(cmd: str) -> list[str]:
    """The paths a command line writes, as it spells them."""
    args = [a.strip("[]") for a in shlex.split(cmd)]
    out = [args[i + 1] for i, a in enumerate(args[:-1]) if a in WRITES]
    if args[:4] == ["uv", "run", "python", "benchmarks/all.py"]:
        out += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--json"]
    return out


def ignored(paths: list[str], tmp_path: Path) -> set[str]:
    """The paths the checkout's .gitignore ignores, as ``git check-ignore`` judges them in a
    repository that holds only that file."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=repo, input="\n".join(paths),
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return set(done.stdout.splitlines())


def test_the_commands_parsed_include_the_ones_that_write():
    # The parser finds the commands that write, continuation lines and inline spans included.
    found = {(doc.relative_to(ROOT).as_posix(), path) for doc in DOCS
             for cmd in commands(doc.read_text()) for path in written(cmd)}
    assert {("README.md", "out/log.jsonl"), ("README.md", "out/r"), ("README.md", "out/tc0.toml"),
            ("docs/sweeps.md", "out/results.csv"), ("docs/sweeps.md", "out/rows.csv"),
            ("docs/guide.md", "out/report/"), ("docs/verify.md", "out/verdict.json"),
            ("examples/README.md", "out/log.jsonl"), ("benchmarks/README.md", "out/figures.jsonl")} <= found


def test_every_documented_output_is_under_out_and_ignored(tmp_path):
    outputs = sorted({(doc.relative_to(ROOT).as_posix(), cmd, path) for doc in DOCS
                      for cmd in commands(doc.read_text()) for path in written(cmd)})
    assert len(outputs) >= 20
    assert [o for o in outputs if not o[2].startswith("out/")] == []
    paths = sorted({path.rstrip("/") for _, _, path in outputs})
    assert sorted(ignored(paths, tmp_path)) == paths
    # The folder itself ships, with the one file git keeps there.
    assert (ROOT / "out" / "README.md").is_file()
    assert ignored(["out/README.md", "out/x.csv", "out/r/summary.json", "wddmsim-crash.json", "x.csv"],
                   tmp_path / "again") == {"out/x.csv", "out/r/summary.json", "wddmsim-crash.json"}


def test_commands_are_shown_as_a_clone_runs_them():
    bare = [(doc.relative_to(ROOT).as_posix(), cmd) for doc in DOCS for cmd in commands(doc.read_text())
            if cmd.startswith("wddmsim ")]
    assert bare == []


def test_the_readme_decodes_a_shipped_file():
    # The README's @FILE example reads a file the clone ships: a DMA_COMPLETED interrupt's data as
    # a 32-bit driver passes it (fence 42 on node 1).
    import json

    from click.testing import CliRunner

    from wddmsim.cli import main

    assert "@tests/data/notify_interrupt_x86.bin --arch x86" in (ROOT / "README.md").read_text()
    r = CliRunner().invoke(main, ["decode", "DXGKARGCB_NOTIFY_INTERRUPT_DATA",
                                  f"@{ROOT / 'tests' / 'data' / 'notify_interrupt_x86.bin'}", "--arch", "x86", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert (d["size"], d["violations"]) == (80, [])
    assert {k: d["fields"][k]["value"] for k in ("InterruptType", "DmaCompleted.SubmissionFenceId",
                                                  "DmaCompleted.NodeOrdinal", "DmaCompleted.EngineOrdinal")} \
        == {"InterruptType": 1, "DmaCompleted.SubmissionFenceId": 42, "DmaCompleted.NodeOrdinal": 1,
            "DmaCompleted.EngineOrdinal": 0}
