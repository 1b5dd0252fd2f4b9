"""Finding a user's class by name: ``package.module:Class`` or ``path/to/file.py:Class``.

Used for a driver named on the command line (``--driver``) or in a scenario (``driver = "..."``),
and for the user-mode half a kernel-mode driver names (``UserModeDriverName``). A name that does
not resolve is a :class:`LoadError` with a message that says what was looked for and why it was
not found, never a traceback of the loader's: a file that does not exist, a directory, a file that
is not Python source (``/etc/passwd:X``: "... is not a Python file (.py)"), one that cannot be
read. When the user's module fails while it is imported, the message's first line names the file
(or module) and the reason (``SyntaxError at line 3: invalid syntax``, ``ValueError: boom``), and
the lines after it are the module's own traceback. Every exception counts, ``SystemExit``
(``sys.exit()`` at the module's top level) included: it is the module's code ending abnormally,
not the command's end; only ``KeyboardInterrupt`` (a person's Ctrl-C) passes through.

A module that has no attribute of the name asked for is told with the classes in it that look like
what was asked for, not every class it imports (``Path``, ``NTSTATUS``): for a driver the classes
with DDI entry points (``DxgkDdiSubmitCommand``, ...), for a user-mode driver those with a
``build`` method, for a scheduling policy the subclasses of ``wddmsim.policies.Policy`` or
``HwPolicy``, and the closest of their names when one is close (``did you mean 'Raises'?``).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
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
        raise LoadError(f"{what} {spec!r}: {where} has no {name}{_candidates(module, name, what)}")
    if not isinstance(cls, type):
        raise LoadError(f"{what} {spec!r}: {name} is a {type(cls).__name__}, not a class")
    return cls


def _has_ddi_entry_points(cls: type) -> bool:
    """A kernel-mode driver's look: a method named for a DDI entry point (``DxgkDdiSubmitCommand``)."""
    return any(n.startswith("DxgkDdi") and callable(getattr(cls, n, None)) for n in dir(cls))


def _builds_buffers(cls: type) -> bool:
    """A user-mode driver's look: a ``build(request)`` method (``wddmsim.umd.UserModeDriver``)."""
    return callable(getattr(cls, "build", None))


def _is_policy(cls: type) -> bool:
    """A scheduling policy's look: a subclass of ``wddmsim.policies.Policy`` or ``HwPolicy`` (told
    by name, as the OS does not import the policies), not the base class itself."""
    return any(base.__name__ in ("Policy", "HwPolicy") and base.__module__.startswith("wddmsim.policies")
               for base in cls.__mro__[1:])


#: For each ``what`` of :func:`load_class`: its plural, the test of a class that looks like one,
#: and what that look is, in words (for a module that has none).
_KINDS: dict[str, tuple[str, Callable[[type], bool], str]] = {
    "driver": ("drivers", _has_ddi_entry_points, "a class with DDI entry points such as DxgkDdiSubmitCommand"),
    "user-mode driver": ("user-mode drivers", _builds_buffers, "a class with a build(request) method"),
    "scheduling policy": ("scheduling policies", _is_policy, "a subclass of wddmsim.policies.Policy or HwPolicy"),
}


def _candidates(module, name: str, what: str) -> str:
    """What follows "MODULE has no NAME" in the message: the closest name among the module's
    classes that look like a ``what`` and the list of those (every public class for a ``what``
    without a look of its own), or that it has none."""
    plural, looks, look = _KINDS.get(what, ("classes", lambda cls: True, ""))

    def fits(cls: type) -> bool:
        try:
            return looks(cls)
        except Exception:  # noqa: BLE001 - a user's class whose attributes raise is not one
            return False

    found = sorted(n for n, v in vars(module).items() if isinstance(v, type) and not n.startswith("_") and fits(v))
    if not found:
        return f", and no class in it looks like a {what} ({look})" if look else ""
    close = difflib.get_close_matches(name, found, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{hint}; the {plural} it defines: {', '.join(found)}"


def _import(module: str, what: str, spec: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise LoadError(f"{what} {spec!r}: no module named {module!r} (is it installed, or on PYTHONPATH?)") \
                from None
        raise LoadError(f"{what} {spec!r}: importing {module} failed: {_reason(e)}\n{_tb(e)}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - the user's module raised (or called sys.exit) while importing
        from .watchdog import NothingRan

        if isinstance(e, NothingRan):
            raise  # a Ctrl-C before the run began, not the module's own exit
        raise LoadError(f"{what} {spec!r}: importing {module} failed: {_reason(e)}\n{_tb(e)}") from None


def _load_file(path_text: str, what: str, spec: str, base_dir: Path | None):
    path = Path(path_text)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    try:
        if path.is_dir():
            raise LoadError(f"{what} {spec!r}: {path} is a directory, not a Python file (.py)")
        if not path.is_file():
            raise LoadError(f"{what} {spec!r}: file {path} does not exist")
        resolved = path.resolve()
    except OSError as e:  # a name too long for the file system, a loop of links...
        raise LoadError(f"{what} {spec!r}: {path}: {e.strerror or e}") from None
    key = f"wddmsim_user_{abs(hash(str(resolved)))}"
    if key in sys.modules:
        return sys.modules[key]
    loader_spec = importlib.util.spec_from_file_location(key, path)
    if loader_spec is None or loader_spec.loader is None:  # not .py (nor .pyc, nor an extension module)
        raise LoadError(f"{what} {spec!r}: {path} is not a Python file (.py)")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise LoadError(f"{what} {spec!r}: cannot read {path}: {e.strerror or e}") from None
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[key] = module
    added = str(path.parent)
    sys.path.insert(0, added)  # the file may import its neighbours
    try:
        loader_spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 - the user's file raised (or called sys.exit) while importing
        del sys.modules[key]
        if isinstance(e, KeyboardInterrupt):
            raise
        raise LoadError(f"{what} {spec!r}: loading {path} failed: {_reason(e, path)}\n{_tb(e)}") from None
    finally:
        if sys.path and sys.path[0] == added:
            sys.path.pop(0)
    return module


def _reason(e: BaseException, path: Path | None = None) -> str:
    """The exception in a few words, for the first line of a load failure: its type, its message
    and where (``SyntaxError: invalid syntax (line 3)``, ``SystemExit: 0 (line 2)``); the place is
    the deepest line of the user's code, its line number alone when it is in ``path``."""
    name = type(e).__name__
    if isinstance(e, SyntaxError):
        said, file, line = e.msg, e.filename, e.lineno
    else:
        try:
            said = str(e)
        except Exception:  # noqa: BLE001 - the exception's own __str__ failed
            said = ""
        said = said.strip().splitlines()[0] if said.strip() else ""
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if f.filename != __file__ and not f.filename.startswith("<frozen")]
        file, line = (frames[-1].filename, frames[-1].lineno) if frames else (None, None)
    text = f"{name}: {said}" if said else name
    if line:
        same = path is not None and file is not None and Path(file) == path
        text += f" (line {line})" if same or file is None else f" ({file}, line {line})"
    return text


def _tb(e: BaseException) -> str:
    """The exception's traceback, without this module's frames or the import machinery's."""
    te = traceback.TracebackException.from_exception(e)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if f.filename != __file__ and not f.filename.startswith("<frozen")])
    return "".join(te.format()).rstrip()
