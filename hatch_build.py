"""Hatchling build hook: compile the hot modules with mypyc, or leave them interpreted.

The modules are those of ``wddmsim._native.COMPILED``, compiled as one mypyc group (its shared
library is ``wddmsim/_compiled__mypyc``). A wheel gets the extension modules beside its ``.py``
sources; an editable install (what ``uv sync`` makes) gets them built in place, next to the sources
under ``src/wddmsim``, since that is where the editable install imports from. Either way the build
records the SHA-256 of each source it compiled in ``wddmsim/_compiled.sums``, which the package
checks before it uses them (``wddmsim._native``).

When compiling is impossible (no C compiler, no Python headers, mypyc missing or rejecting the
code) the build prints why and succeeds without extension modules: the sources run interpreted.
``WDDMSIM_BUILD_PURE=1`` skips compiling on purpose. Either way any extension modules left in
place by an earlier build are removed, so a stale one is never imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SRC = Path("src")


def _native_module(root: Path):
    """``wddmsim/_native.py`` loaded on its own (it imports nothing of the project)."""
    spec = importlib.util.spec_from_file_location("_wddmsim_native_build", root / SRC / "wddmsim" / "_native.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile(root: Path, native, work: Path) -> list[Path]:
    """Compile ``native.COMPILED`` under ``work``; the built extension files (paths under
    ``work / "lib"``, laid out as in the package)."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    sources = [str(Path(native.source_path(name)).relative_to(root / SRC)) for name in native.COMPILED]
    here = os.getcwd()
    os.chdir(root / SRC)  # mypyc names the modules from the paths it is given
    try:
        extensions = mypycify(
            ["--follow-imports=silent", "--cache-dir", str(work / "mypy-cache"), *sources],
            opt_level="3",
            group_name=native.GROUP,
            target_dir=str(work / "c"),
        )
        dist = Distribution({"name": "wddmsim", "ext_modules": extensions})
        build_ext = dist.get_command_obj("build_ext")
        build_ext.build_lib = str(work / "lib")
        build_ext.build_temp = str(work / "obj")
        build_ext.ensure_finalized()
        build_ext.run()
    finally:
        os.chdir(here)
    return sorted((work / "lib").rglob("*.so")) + sorted((work / "lib").rglob("*.pyd"))


def _in_place_artifacts(package: Path, native) -> list[Path]:
    """What an earlier in-place build may have left under ``package`` (``src/wddmsim``): the sums
    file and every extension module there, not only those of today's ``COMPILED`` (a module taken
    off the list must not leave its extension module behind, which Python would import before its
    ``.py``). The sources hold no extension module of their own: every one is this hook's."""
    found = [package / native.SUMS]
    for suffix in ("so", "pyd"):
        found.extend(sorted(package.rglob(f"*.{suffix}")))
    return [p for p in found if p.exists()]


def _precompile(package: Path) -> None:
    """Write the bytecode of every module of the editable install's sources (``__pycache__``, as
    ``uv sync`` does for the dependencies with ``compile-bytecode``): a start then reads it instead of
    compiling each module, even where ``PYTHONDONTWRITEBYTECODE`` keeps Python from caching it. A
    source edited later is newer than its bytecode, which Python then ignores."""
    import compileall

    compileall.compile_dir(str(package), quiet=2, workers=1)


class CompileHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _keep: Path | None = None

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if self._keep is not None:
            shutil.rmtree(self._keep, ignore_errors=True)

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        package = root / SRC / "wddmsim"
        native = _native_module(root)
        editable = version == "editable"
        if editable:
            for stale in _in_place_artifacts(package, native):
                stale.unlink()  # unlinking never disturbs a process that has the file mapped
            _precompile(package)
        if os.environ.get("WDDMSIM_BUILD_PURE", "") not in ("", "0"):
            self.app.display_info("wddmsim: WDDMSIM_BUILD_PURE is set; nothing compiled, the sources run interpreted")
            return
        work = Path(tempfile.mkdtemp(prefix="wddmsim-mypyc-"))
        try:
            try:
                built = _compile(root, native, work)
                if not built:
                    raise RuntimeError("mypyc produced no extension module")
            except (Exception, SystemExit) as exc:  # distutils reports a failed compiler with SystemExit
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                self.app.display_warning(
                    f"wddmsim: mypyc compilation failed, the sources will run interpreted ({detail})"
                )
                if os.environ.get("WDDMSIM_BUILD_DEBUG"):
                    traceback.print_exc(file=sys.stderr)
                return
            sums = "".join(
                f"{name} {hashlib.sha256(Path(native.source_path(name)).read_bytes()).hexdigest()}\n"
                for name in native.COMPILED
            )
            lib = work / "lib"
            if editable:
                # A running process may have the old file mapped: write beside it, then rename.
                for path in built:
                    target = root / SRC / path.relative_to(lib)
                    partial = target.with_name(target.name + ".partial")
                    shutil.copy2(path, partial)
                    os.replace(partial, target)
                (package / native.SUMS).write_text(sums, encoding="ascii")
            else:
                keep = self._keep = Path(tempfile.mkdtemp(prefix="wddmsim-mypyc-out-"))
                for path in built:
                    relative = path.relative_to(lib)
                    (keep / relative).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, keep / relative)
                    build_data["force_include"][str(keep / relative)] = str(relative)
                (keep / native.SUMS).write_text(sums, encoding="ascii")
                build_data["force_include"][str(keep / native.SUMS)] = f"wddmsim/{native.SUMS}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            self.app.display_info(f"wddmsim: compiled with mypyc: {', '.join(native.COMPILED)}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
