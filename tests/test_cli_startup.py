"""Start-up: ``wddmsim --version`` and ``wddmsim --help`` import click and the command line's own two
modules, nothing of the model; a command's module is imported when the command runs. Each check
runs in a fresh interpreter and reads ``sys.modules``, so an import added at the top of a module
the command line imports fails here rather than slowly making every command slower
(benchmarks/startup.py measures the time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from wddmsim.cli import LAZY_COMMANDS, main

#: What the command line must not import before a command asks for it: plotting, the scenario's
#: pydantic models, dask, the DDI layout tables and rule catalogue, the model, rich, and the modules
#: of the commands that live in modules of their own.
HEAVY = ("matplotlib", "pydantic", "pydantic_core", "dask", "distributed", "pandas", "numpy", "rich",
         "wddmsim.scenario", "wddmsim.ddi", "wddmsim.runner.system", "wddmsim.dxgkrnl", "wddmsim.gpu", "wddmsim.kmd",
         "wddmsim.trace", "wddmsim.output.report", "wddmsim.sweep", "wddmsim.replay",
         *sorted({spec.partition(":")[0] for spec, _ in LAZY_COMMANDS.values()}))

_MODULES_AFTER = """
import json, sys
sys.argv = ["wddmsim", *json.loads(sys.argv[1])]
try:
    {start}
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(start: str, args=()) -> list[str]:
    code = _MODULES_AFTER.format(start=start)
    r = subprocess.run([sys.executable, "-c", code, json.dumps(list(args))], capture_output=True, text=True,
                       timeout=120, check=True)
    return json.loads(r.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_importing_the_command_line_imports_nothing_heavy():
    modules = _modules_after("import wddmsim.cli")
    assert "click" in modules and "wddmsim.cli" in modules
    assert _heavy(modules) == []


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]])
def test_the_version_and_the_help_import_nothing_heavy(args):
    modules = _modules_after("from wddmsim.entry import main; main()", args)
    assert _heavy(modules) == []


def test_a_command_imports_its_module_when_it_runs():
    modules = _modules_after("from wddmsim.entry import main; main()", ["rules", "1", "--json"])
    assert "wddmsim.cli.rules" in modules and "wddmsim.ddi.rules.catalog" in modules
    assert "wddmsim.cli.structures" not in modules and "wddmsim.cli.sweep" not in modules


def test_every_command_is_listed_and_each_lazy_one_is_the_command_its_module_defines():
    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert names == sorted(["check", "compare", "decode", "demo", "layout", "policies", "replay", "report", "rules",
                            "run", "sweep", "trace", "verify"])
    for name, (spec, _) in LAZY_COMMANDS.items():
        module, _, attribute = spec.partition(":")
        cmd = main.get_command(ctx, name)
        assert cmd is getattr(sys.modules[module], attribute) and cmd.name == name


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_a_lazy_commands_short_help_is_what_click_makes_of_its_whole_help(name):
    """The table holds the first sentence of the command's help: click shortens it to the same text
    as the whole help at every width ``wddmsim --help`` can have."""
    short = LAZY_COMMANDS[name][1]
    cmd = main.get_command(click.Context(main), name)
    stand_in = click.Command(name, help=short)
    for limit in range(10, 200):
        assert stand_in.get_short_help_str(limit) == cmd.get_short_help_str(limit), (name, limit)


def _script(*args: str, first: str = "") -> subprocess.CompletedProcess:
    """``wddmsim ARGS`` in a fresh interpreter, 80 columns wide, after running ``first`` there."""
    code = f"import sys\n{first}\nfrom wddmsim.entry import main\nsys.argv = ['wddmsim', *sys.argv[1:]]\nmain()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})


_IMPORT_EVERY_COMMAND = """
import click
from wddmsim.cli import LAZY_COMMANDS, main
for name in LAZY_COMMANDS:
    main.get_command(click.Context(main), name)
"""


def test_the_help_lists_every_command_as_it_does_once_they_are_imported():
    lazy = _script("--help")
    loaded = _script("--help", first=_IMPORT_EVERY_COMMAND)
    assert lazy.returncode == loaded.returncode == 0 and lazy.stdout == loaded.stdout
    listed = lazy.stdout.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == main.list_commands(click.Context(main))


@pytest.mark.parametrize("width", [50, 60, 80, 120])
def test_the_help_is_the_same_with_stand_ins_at_every_width(width):
    ctx = click.Context(main)
    for name in LAZY_COMMANDS:
        main.get_command(ctx, name)  # now every command is a click.Command in main.commands
    loaded = CliRunner().invoke(main, ["--help"], terminal_width=width, prog_name="wddmsim")
    commands = main.commands
    try:
        main.commands = {n: c for n, c in commands.items() if n not in LAZY_COMMANDS}
        lazy = CliRunner().invoke(main, ["--help"], terminal_width=width, prog_name="wddmsim")
    finally:
        main.commands = commands
    assert lazy.exit_code == loaded.exit_code == 0 and lazy.output == loaded.output


def test_a_mistyped_command_is_matched_against_every_command():
    r = _script("rule")
    assert r.returncode == 2 and r.stderr.endswith("Error: No such command 'rule'. Did you mean 'rules'?\n")
    r = _script("decod")
    assert r.returncode == 2 and r.stderr.endswith("Error: No such command 'decod'. (Did you mean one of: 'decode', 'demo'?)\n")
