"""No import circles among the package's modules: no module imports, directly or through others, a
module that imports it back. Every import statement counts, wherever it stands: at the top of the
module, inside a function (an import put there to dodge a circle is still one), under
``TYPE_CHECKING``. A circle is cut by moving the piece both sides need into a module both can
import (``dxgkrnl/errors.py``, ``sim/irql.py``), never by hiding an import in a function.

``from pkg import name`` counts as an import of the module ``pkg.name`` when there is one, else of
``pkg`` itself (its ``__init__``); the package ``__init__`` that Python runs on the way to a
submodule is not counted as an import of the module that asked for the submodule.
"""

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "wddmsim"

#: Circles allowed, each the set of modules in it: a circle of modules all in one of these sets
#: passes. None: the CLI's commands share their helpers through ``wddmsim.cli.util``.
KNOWN: list[set[str]] = []


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of the package under ``src``, by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = (src.name, *path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _known(name: str, mods: dict) -> str | None:
    """``name`` or its longest prefix that is a module of the package; None outside it."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str, path: Path, mods: dict) -> dict[str, int]:
    """The package's modules that module ``name`` (at ``path``) imports anywhere in its text, each
    with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [_known(a.name, mods) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else _known(base, mods) for a in node.names]
        else:
            continue
        for target in targets:
            if target is not None and target != name:
                found[target] = min(found.get(target, node.lineno), node.lineno)
    return found


def graph(src: Path = SRC) -> dict[str, dict[str, int]]:
    """Module -> {imported module: line}, for every module of the package under ``src``."""
    mods = modules(src)
    return {name: imports(name, path, mods) for name, path in mods.items()}


def circles(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, without recursion),
    each sorted, in order of their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        out.append(sorted(group))
    return sorted(out)


def loop_through(group: list[str], g: dict[str, dict[str, int]]) -> str:
    """One way round ``group`` from its first module back to it, each step with its import's line:
    ``a (line 3) -> b (line 40) -> a``."""
    members = set(group)
    start = group[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in came_from:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w in members and w not in came_from:
                    came_from[w] = v
                    nxt.append(w)
        frontier = nxt
    path = [start]
    while len(path) == 1 or path[-1] != start:
        path.append(came_from[path[-1]])
    path.reverse()
    return " -> ".join(f"{a} (line {g[a][b]})" for a, b in zip(path, path[1:])) + f" -> {start}"


def unexpected(src: Path = SRC, known=KNOWN) -> list[str]:
    """The circles among the package's modules that are not (part of) a known one, one line each."""
    g = graph(src)
    return [loop_through(group, g) for group in circles(g) if not any(set(group) <= k for k in known)]


def test_no_import_circles():
    assert unexpected() == []


def test_the_known_circle_is_named_by_its_modules():
    # Each known circle names modules that exist, so a rename does not leave it silently void.
    mods = modules()
    assert [sorted(k - set(mods)) for k in KNOWN] == [[] for _ in KNOWN]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "wddmsim"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_the_checker_sees_a_circle_closed_inside_a_function(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "sim/__init__.py": "from .kernel import Simulator\n",
        "sim/kernel.py": "import json\n\n\nclass Simulator:\n    def process(self):\n"
                         "        from .process import Process\n        return Process()\n",
        "sim/process.py": '"""doc"""\nfrom .kernel import Simulator\n\n\nclass Process:\n    pass\n',
        "gpu/engine.py": "from ..sim import Simulator\nfrom wddmsim.sim import kernel\n",
    })
    assert graph(pkg)["wddmsim.gpu.engine"] == {"wddmsim.sim": 1, "wddmsim.sim.kernel": 2}
    assert unexpected(pkg, known=[]) == [
        "wddmsim.sim.kernel (line 6) -> wddmsim.sim.process (line 2) -> wddmsim.sim.kernel"]


def test_the_checker_sees_a_circle_through_a_package_and_three_modules(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "trace/__init__.py": "from .sinks import ListSink\n",
        "trace/sinks.py": "from . import writer\n\n\nclass ListSink:\n    pass\n",
        "trace/writer.py": "import wddmsim.trace.records\n",
        "trace/records.py": "def read():\n    from wddmsim.trace import ListSink\n    return ListSink\n",
    })
    assert unexpected(pkg, known=[]) == [
        "wddmsim.trace (line 1) -> wddmsim.trace.sinks (line 1) -> wddmsim.trace.writer (line 1) -> "
        "wddmsim.trace.records (line 2) -> wddmsim.trace"]
    # A known circle passes, and so does what is left of it once part of it is cut.
    group = {"wddmsim.trace", "wddmsim.trace.sinks", "wddmsim.trace.writer", "wddmsim.trace.records"}
    assert unexpected(pkg, known=[group]) == []
    assert unexpected(pkg, known=[group - {"wddmsim.trace.writer"}]) != []


def test_the_checker_passes_imports_that_only_go_one_way(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "sim/__init__.py": "from .irql import PASSIVE\nfrom .kernel import Simulator\n",
        "sim/irql.py": "PASSIVE = 2\n",
        "sim/kernel.py": "from .irql import PASSIVE\nfrom .process import Process\n",
        "sim/process.py": "from .irql import PASSIVE\n",
    })
    assert circles(graph(pkg)) == []
