"""The package's architecture (docs/architecture.md): imports only go down.

Each top-level package (and each module at the root) may import only the packages its row of the
page's table names; the table is read from the page, so the page and the code cannot drift apart.
The rows form no circle, the command line's lazily imported commands never import it back, the
root holds only the API, the entry point and packages, and a module over 700 lines says at its top
why it stays one module (circles among modules: tests/test_no_import_cycles.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "wddmsim"
DOC = ROOT / "docs" / "architecture.md"

#: What the root may hold besides packages: the API, the entry point and the package's own start.
ROOT_MODULES = {"__init__", "__main__", "_native", "api", "entry", "publicnames"}
#: The root package's own names a subpackage may import (``from .. import __version__``).
ROOT_NAMES = {"__version__"}
#: A module longer than this says why at its top (a sentence starting with LONG_REASON).
LONG = 700
LONG_REASON = "Why one module:"


def allowed(doc: Path = DOC) -> dict[str, set[str]]:
    """The table of docs/architecture.md: package -> the packages it may import."""
    rows = {}
    for line in doc.read_text().splitlines():
        m = re.fullmatch(r"\| `(\w+)` \| [^|]+ \| (.+) \|", line)
        if m:
            rows[m[1]] = set() if m[2] == "nothing" else set(re.findall(r"`(\w+)`", m[2]))
    return rows


def top_imports(path: Path, src: Path = SRC) -> set[str]:
    """The top-level wddmsim packages and root modules ``path`` imports, absolute or relative."""
    here = ["wddmsim", *path.relative_to(src).parts[:-1]]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.level == 0 else \
                here[: len(here) - node.level + 1] + (node.module or "").split(".")
            base = [p for p in base if p]
            targets = [base] if len(base) > 1 else [base + [a.name] for a in node.names]
        else:
            continue
        found |= {t[1] for t in targets if len(t) > 1 and t[0] == "wddmsim"}
    return found


def owner(path: Path, src: Path = SRC) -> str:
    """The top-level package (or root module) a file belongs to."""
    rel = path.relative_to(src).parts
    return rel[0] if len(rel) > 1 else rel[0].removesuffix(".py")


def violations(src: Path = SRC, rows: dict[str, set[str]] | None = None) -> list[str]:
    rows = allowed() if rows is None else rows
    out = []
    for path in sorted(src.rglob("*.py")):
        pkg = owner(path, src)
        if pkg in ROOT_MODULES - set(rows):
            continue  # the root's own modules are checked below
        if pkg not in rows:
            out.append(f"{path.relative_to(src)}: {pkg} has no row in docs/architecture.md")
            continue
        bad = top_imports(path, src) - rows[pkg] - {pkg} - ROOT_NAMES
        if bad:
            out.append(f"{path.relative_to(src)} imports {sorted(bad)}")
    return out


def test_imports_only_go_down():
    assert violations() == []


def test_the_rows_form_no_circle_and_name_only_packages_that_exist():
    rows = allowed()
    existing = {owner(p) for p in SRC.rglob("*.py")}
    assert set(rows) <= existing
    for deps in rows.values():
        assert deps <= existing
    done: list[str] = []
    left = dict(rows)
    while left:
        ready = sorted(p for p, deps in left.items() if deps <= set(done) | (deps - set(rows)))
        assert ready, f"the rows of {sorted(left)} import each other in a circle"
        done += ready
        for p in ready:
            del left[p]


def test_every_package_has_a_row():
    rows = allowed()
    packages = {p.parent.name for p in SRC.glob("*/__init__.py")}
    assert packages - set(rows) == set()


def test_the_root_holds_only_the_api_the_entry_point_and_packages():
    loose = {p.stem for p in SRC.glob("*.py")}
    assert loose == ROOT_MODULES


def test_the_checker_sees_a_violation_and_a_package_without_a_row(tmp_path):
    pkg = tmp_path / "wddmsim"
    (pkg / "ddi").mkdir(parents=True)
    (pkg / "ddi" / "bad.py").write_text("from ..cli import main\nimport wddmsim.gpu.engine\n")
    (pkg / "newpkg").mkdir()
    (pkg / "newpkg" / "x.py").write_text("def f():\n    from ..ddi import codec\n")
    assert violations(pkg, {"ddi": set()}) == ["ddi/bad.py imports ['cli', 'gpu']",
                                                 "newpkg/x.py: newpkg has no row in docs/architecture.md"]


def _module_imports(path: Path, modules: set[str]) -> set[str]:
    """The wddmsim modules ``path`` imports (``from .x import y`` names ``x.y`` when that is a module)."""
    here = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    package = here.removesuffix(".__init__") if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in modules}


def test_the_lazily_imported_commands_never_import_the_command_line_back():
    """``wddmsim.cli.app`` imports each command of its lazy table when the command runs; none of
    them imports the app (or the ``cli`` package, which imports it) back. Circles among all the
    modules are tests/test_no_import_cycles.py's."""
    from wddmsim.cli import LAZY_COMMANDS

    modules = {".".join(p.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
               for p in SRC.rglob("*.py")}
    lazy = sorted({spec.partition(":")[0] for spec, _ in LAZY_COMMANDS.values()})
    assert lazy == ["wddmsim.cli.check", "wddmsim.cli.replay", "wddmsim.cli.rules", "wddmsim.cli.structures",
                    "wddmsim.cli.sweep"]
    for name in lazy:
        path = SRC.parent / (name.replace(".", "/") + ".py")
        assert not _module_imports(path, modules) & {"wddmsim.cli", "wddmsim.cli.app"}, name


def test_the_command_modules_are_imported_by_the_command_line_alone():
    """Nothing in the model imports the command line: only the entry point and the pytest
    plugin's option parsing (``testing``) start from it."""
    importers = sorted({owner(p) for p in SRC.rglob("*.py") if "cli" in top_imports(p) and owner(p) != "cli"})
    assert importers == ["entry", "testing"]


def long_modules_without_a_reason(src: Path = SRC) -> list[str]:
    """The modules over :data:`LONG` lines whose top docstring does not say why they stay one."""
    out = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > LONG and LONG_REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            out.append(f"{path.relative_to(src)}: {lines} lines")
    return out


def test_a_long_module_says_why_it_is_one_module():
    assert long_modules_without_a_reason() == []


def test_the_checker_sees_a_long_module_without_its_reason(tmp_path):
    body = "\n".join(f"x{i} = {i}" for i in range(LONG))
    (tmp_path / "long.py").write_text(f'"""A module."""\n{body}\n')
    (tmp_path / "said.py").write_text(f'"""A module.\n\n{LONG_REASON} one table read whole."""\n{body}\n')
    (tmp_path / "short.py").write_text('"""A module."""\nx = 1\n')
    assert long_modules_without_a_reason(tmp_path) == [f"long.py: {LONG + 1} lines"]
