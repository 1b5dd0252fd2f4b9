"""A driver file that cannot be loaded (issue 29, case 2): one clear first line, exit status 2.

``wddmsim verify FILE:Class`` and ``wddmsim run SCENARIO --driver FILE:Class`` with a file that is
not Python (``/etc/passwd``), a directory, a file that does not exist, a Python file with a syntax
error, one that raises while it is imported and one that calls ``sys.exit()`` at its top level:
each gives exit status 2 and a first line naming the file and the reason (for the last three, the
exception with its line), never a traceback of the loader's or of importlib's. What follows that
line, for a module that failed while importing, is the module's own traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wddmsim.cli import main
from wddmsim.dxgkrnl.loader import LoadError, load_class

ROOT = Path(__file__).parents[1]
DEEP_QUEUE = str(ROOT / "examples" / "deep_queue.toml")
runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def invoke(command: str, spec: str):
    args = ["verify", spec] if command == "verify" else ["run", DEEP_QUEUE, "--driver", spec]
    return runner.invoke(main, args)


def first_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "loader.py" not in r.stderr and "importlib" not in r.stderr and "<frozen" not in r.stderr
    return r.stderr.splitlines()[0]


@pytest.mark.parametrize("command", ["verify", "run"])
def test_a_file_that_is_not_python_is_one_line(tmp_path, command):
    notes = tmp_path / "passwd"
    notes.write_text("root:x:0:0:root:/root:/bin/bash\n")
    r = invoke(command, f"{notes}:X")
    assert r.stderr.strip() == f"wddmsim: error: driver '{notes}:X': {notes} is not a Python file (.py)"
    assert first_line(r)


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="no /etc/passwd here")
def test_etc_passwd_is_not_a_python_file():
    r = invoke("verify", "/etc/passwd:X")
    assert first_line(r) == "wddmsim: error: driver '/etc/passwd:X': /etc/passwd is not a Python file (.py)"
    assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["verify", "run"])
@pytest.mark.parametrize("name", ["drivers", "drivers.py"])
def test_a_directory_is_named_as_one(tmp_path, command, name):
    folder = tmp_path / name
    folder.mkdir()
    r = invoke(command, f"{folder}:X")
    assert r.stderr.strip() == f"wddmsim: error: driver '{folder}:X': {folder} is a directory, not a Python file (.py)"
    assert first_line(r)


def test_a_file_that_does_not_exist_still_says_so(tmp_path):
    r = invoke("verify", f"{tmp_path / 'nope.py'}:X")
    assert r.stderr.strip() == f"wddmsim: error: driver '{tmp_path / 'nope.py'}:X': file {tmp_path / 'nope.py'} " \
                               f"does not exist"


def test_a_file_that_cannot_be_read_says_so(tmp_path, monkeypatch):
    """As for a file without read permission (simulated: the tests may run as root, who reads any)."""
    import wddmsim.dxgkrnl.loader as loader

    path = tmp_path / "locked.py"
    path.write_text("X = 1\n")

    def refuse(name, mode="r", *args, **kw):
        raise PermissionError(13, "Permission denied", str(name))

    monkeypatch.setattr(loader, "open", refuse, raising=False)
    with pytest.raises(LoadError) as err:
        load_class(f"{path}:X", "driver")
    assert str(err.value) == f"driver '{path}:X': cannot read {path}: Permission denied"


@pytest.mark.parametrize("command", ["verify", "run"])
def test_a_syntax_error_names_the_file_the_line_and_the_error(tmp_path, command):
    path = tmp_path / "syntax.py"
    path.write_text("from wddmsim.kmd import ReferenceDriver\n\ndef f(:\n    pass\n")
    r = invoke(command, f"{path}:X")
    assert first_line(r) == (f"wddmsim: error: driver '{path}:X': loading {path} failed: SyntaxError: invalid syntax "
                             f"(line 3)")
    assert "Traceback" not in r.stderr and "def f(:" in r.stderr


@pytest.mark.parametrize("command", ["verify", "run"])
def test_an_exception_at_import_names_the_file_the_line_and_the_exception(tmp_path, command):
    path = tmp_path / "raises.py"
    path.write_text("x = 1\nraise ValueError('no such register')\n")
    r = invoke(command, f"{path}:X")
    assert first_line(r) == (f"wddmsim: error: driver '{path}:X': loading {path} failed: ValueError: no such "
                             f"register (line 2)")
    assert r.stderr.rstrip().endswith("ValueError: no such register")


def test_an_exception_in_a_module_the_driver_imports_names_that_file(tmp_path):
    (tmp_path / "helper_mod_29.py").write_text("x = 1\nraise KeyError('k')\n")
    path = tmp_path / "uses_helper.py"
    path.write_text("import helper_mod_29\n")
    try:
        r = invoke("verify", f"{path}:X")
    finally:
        sys.modules.pop("helper_mod_29", None)
    assert first_line(r) == (f"wddmsim: error: driver '{path}:X': loading {path} failed: KeyError: 'k' "
                             f"({tmp_path / 'helper_mod_29.py'}, line 2)")


@pytest.mark.parametrize("command", ["verify", "run"])
@pytest.mark.parametrize("call, said", [("sys.exit(0)", "SystemExit: 0"), ("sys.exit()", "SystemExit"),
                                        ("raise SystemExit('bye')", "SystemExit: bye")])
def test_sys_exit_at_import_is_a_load_failure_not_a_pass(tmp_path, command, call, said):
    path = tmp_path / "exits.py"
    path.write_text(f"import sys\n{call}\n")
    r = invoke(command, f"{path}:X")
    assert first_line(r) == f"wddmsim: error: driver '{path}:X': loading {path} failed: {said} (line 2)"
    assert r.stdout == ""


def test_sys_exit_in_a_module_named_by_its_import_name(tmp_path, monkeypatch):
    (tmp_path / "exits_by_name_29.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(LoadError) as err:
            load_class("exits_by_name_29:X", "driver")
    finally:
        sys.modules.pop("exits_by_name_29", None)
    assert str(err.value).splitlines()[0] == (
        f"driver 'exits_by_name_29:X': importing exits_by_name_29 failed: SystemExit: 0 "
        f"({tmp_path / 'exits_by_name_29.py'}, line 2)")


def test_a_failed_load_leaves_no_module_behind_and_a_fixed_file_loads(tmp_path):
    path = tmp_path / "fixed.py"
    path.write_text("import sys\nsys.exit(1)\n")
    with pytest.raises(LoadError):
        load_class(f"{path}:Mine", "driver")
    path.write_text("from wddmsim.kmd import ReferenceDriver\n\nclass Mine(ReferenceDriver):\n    pass\n")
    assert load_class(f"{path}:Mine", "driver").__name__ == "Mine"


def test_a_keyboard_interrupt_at_import_is_not_swallowed(tmp_path):
    path = tmp_path / "interrupted.py"
    path.write_text("raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        load_class(f"{path}:X", "driver")
