"""Finding a user's class by name: ``package.module:Class`` or ``path/to/file.py:Class``.

Used for a driver named on the command line (``--driver``) or in a scenario (``driver = "..."``),
and for the user-mode half a kernel-mode driver names (``UserModeDriverName``). A name that does
not resolve is a :class:`LoadError` with a message that says what was looked for and why it was
not found, never a traceback; an exception raised while importing the user's module is reported
with the module's own traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from pathlib import Path


class LoadError(Exception):
    """A class named by the user cannot be loaded; the message says why."""


def load_class(spec: str, what: str = "class", base_dir: Path | None = None) -> type:
    """The class ``spec`` names (``"package.module:Class"`` or ``"path/to/file.py:Class"``;
    a relative path is taken from ``base_dir``, default the current directory). ``what`` names
    it in messages ("driver", "user-mode driver")."""
    if not isinstance(spec, str) or ":" not in spec:
        raise LoadError(f"{what} {spec!r}: expected 'package.module:Class' or 'path/to/file.py:Class'")
    where, _, name = spec.rpartition(":")
    if not where or not name.isidentifier():
        raise LoadError(f"{what} {spec!r}: expected 'package.module:Class' or 'path/to/file.py:Class'")
    if where.endswith(".py") or "/" in where or "\\" in where:
        module = _load_file(where, what, spec, base_dir)
    else:
        module = _import(where, what, spec)
    cls = getattr(module, name, None)
    if cls is None:
        found = sorted(n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_"))
        hint = f"; it defines {', '.join(found)}" if found else ""
        raise LoadError(f"{what} {spec!r}: {where} has no {name}{hint}")
    if not isinstance(cls, type):
        raise LoadError(f"{what} {spec!r}: {name} is a {type(cls).__name__}, not a class")
    return cls


def _import(module: str, what: str, spec: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise LoadError(f"{what} {spec!r}: no module named {module!r} (is it installed, or on PYTHONPATH?)") \
                from None
        raise LoadError(f"{what} {spec!r}: importing {module} failed:\n{_tb(e)}") from None
    except Exception as e:  # noqa: BLE001 - the user's module raised while importing
        raise LoadError(f"{what} {spec!r}: importing {module} failed:\n{_tb(e)}") from None


def _load_file(path_text: str, what: str, spec: str, base_dir: Path | None):
    path = Path(path_text)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    if not path.is_file():
        raise LoadError(f"{what} {spec!r}: file {path} does not exist")
    key = f"wddmsim_user_{abs(hash(str(path.resolve())))}"
    if key in sys.modules:
        return sys.modules[key]
    loader_spec = importlib.util.spec_from_file_location(key, path)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[key] = module
    added = str(path.parent)
    sys.path.insert(0, added)  # the file may import its neighbours
    try:
        loader_spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file raised while importing
        del sys.modules[key]
        raise LoadError(f"{what} {spec!r}: loading {path} failed:\n{_tb(e)}") from None
    finally:
        if sys.path and sys.path[0] == added:
            sys.path.pop(0)
    return module


def _tb(e: BaseException) -> str:
    """The exception's traceback, without this module's frames or the import machinery's."""
    te = traceback.TracebackException.from_exception(e)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename != __file__ and not f.filename.startswith("<frozen")])
    return "".join(te.format()).rstrip()
