"""The package's layers: imports only go down. ``sim`` and ``ddi`` import nothing of the project;
``gpu`` imports ``sim``; ``kmd`` imports ``ddi``, ``gpu``, ``sim``; ``umd`` (the user-mode half of
a driver) imports ``gpu`` (the command set); ``dxgkrnl`` imports ``ddi``, ``sim``, never a driver
half or the GPU; ``workloads`` (the applications and their runtime) import the OS's API and
``umd``; ``sweep`` (many runs of a scenario) imports the scenario files, the assembled system, how
a run stops early (``runstop``) and the OS's errors, never the CLI; ``policies`` (research
scheduling policies and their hosts inside the OS scheduler and the GPU's) import the OS, the GPU's
scheduler interface (``gpu.policy``), the kernel and the class loader, and neither imports them back; ``replay`` (real captures against the model) reads the event
log's PresentMon rows and nothing else of the model. Only the assembly code (the CLI, the demo, scenario wiring) knows all parts."""

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "wddmsim"
ALLOWED = {
    "sim": set(),
    "ddi": set(),
    "gpu": {"sim"},
    "kmd": {"ddi", "gpu", "sim", "units"},
    "umd": {"gpu"},
    "dxgkrnl": {"ddi", "sim"},
    "workloads": {"ddi", "dxgkrnl", "umd", "sim"},
    "sweep": {"scenario", "system", "dxgkrnl", "runstop"},
    "policies": {"dxgkrnl", "gpu", "sim", "units", "loader"},
    "replay": {"trace"},
}


def project_imports(path: Path, package: str) -> set[str]:
    """The top-level wddmsim packages a module imports, absolute or relative."""
    here = ["wddmsim", *path.relative_to(SRC).parts[:-1]]  # the module's package
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".") if node.level == 0 else here[: len(here) - node.level + 1] + (node.module or "").split(".")
            base = [p for p in base if p]
            targets = [base] if len(base) > 1 else [base + [a.name] for a in node.names]
        else:
            continue
        found |= {t[1] for t in targets if len(t) > 1 and t[0] == "wddmsim"}
    return found - {package}


def violations(src: Path = SRC) -> list[str]:
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).parts
        if len(rel) < 2 or rel[0] not in ALLOWED:
            continue
        bad = project_imports(path, rel[0]) - ALLOWED[rel[0]]
        if bad:
            out.append(f"{'/'.join(rel)} imports {sorted(bad)}")
    return out


def test_imports_only_go_down():
    assert violations() == []


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    pkg = tmp_path / "wddmsim"
    (pkg / "ddi").mkdir(parents=True)
    (pkg / "ddi" / "bad.py").write_text("from ..cli import main\nimport wddmsim.gpu.engine\n")
    monkeypatch.setattr(__import__(__name__), "SRC", pkg)
    assert violations(pkg) == ["ddi/bad.py imports ['cli', 'gpu']"]
