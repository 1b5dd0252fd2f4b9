"""The ``wddmsim`` command line.

``layout`` and ``decode`` read the DDI structures the way a debugger's ``dt`` does; ``demo`` shows
what crosses the DDI for one submission. Bad input from a person (an unknown structure, bytes of the
wrong length, text that is not hex, a missing file) gets one clear line on stderr and exit status 2,
never a traceback.

Spec: DESIGN.md section 6 (user-facing command line).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .ddi import codec, layout, registry, versions
from .ddi.schema import EnumType, Record, Typedef

ARCH = click.Choice(list(layout.ARCHES))
VERSION = click.Choice(list(versions.VERSION_NAMES), case_sensitive=False)


class UserError(click.ClickException):
    """A mistake in what the person asked for: one line on stderr, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"wddmsim: error: {self.message}", err=True)


def _console() -> Console:
    """Rich console; when stdout is not a terminal, wide enough that no member name is cut."""
    con = Console(highlight=False)
    if not con.is_terminal:
        con = Console(highlight=False, width=200)
    return con


def _lookup(name: str):
    try:
        return registry.lookup(name)
    except registry.UnknownType as e:
        raise UserError(str(e)) from None


def _require_exists(t, version: versions.DdiVersion) -> None:
    if isinstance(t, Record) and not layout.exists(t, version):
        raise UserError(f"{t.name} does not exist at DDI version {version.name}; it appeared in {t.since}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wddmsim")
def main() -> None:
    """wddmsim: an executable model of how Windows submits work to a GPU (WDDM)."""


# ---------------------------------------------------------------------------------------- layout
def _layout_json(t, arch: str, version: versions.DdiVersion) -> dict:
    if isinstance(t, Record):
        table = layout.layout_table(t, arch, version)
    else:
        size = layout.scalar_ctype(t, arch)
        import ctypes

        table = {"size": ctypes.sizeof(size), "align": ctypes.alignment(size), "members": {}}
    out = {"struct": t.name, "arch": arch, "ddi_version": version.name, **table}
    if isinstance(t, EnumType):
        out["values"] = {e.name: int(e) for e in t.values}
    return out


@main.command("layout")
@click.argument("struct")
@click.option("--arch", type=ARCH, default="x64", show_default=True, help="Target architecture.")
@click.option("--ddi-version", "ddi_version", type=VERSION, default="latest", show_default=True, help="DXGKDDI_INTERFACE_VERSION to lay out for.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def layout_cmd(struct: str, arch: str, ddi_version: str, as_json: bool) -> None:
    """Size and every member's offset and size of a DDI structure, like a debugger's dt."""
    t = _lookup(struct)
    version = versions.ddi_version(ddi_version)
    _require_exists(t, version)
    data = _layout_json(t, arch, version)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    con = _console()
    con.print(f"[bold]{t.name}[/bold]  {arch}  DDI {version.name} (0x{version.value:X}, {version.release})  size {data['size']} (0x{data['size']:X}), align {data['align']}")
    if isinstance(t, EnumType):
        for e in t.values:
            con.print(f"  {int(e):>10}  {e.name}")
        return
    if not isinstance(t, Record):
        con.print(f"  scalar ({t.base.name})")
        return
    tab = Table(box=None, pad_edge=False, show_edge=False)
    tab.add_column("offset", justify="right")
    tab.add_column("member")
    tab.add_column("type")
    tab.add_column("size", justify="right")
    tab.add_column("bits")
    tab.add_column("mask")
    for ml in layout.members(t, arch, version):
        bits = mask = ""
        if ml.bit_width is not None:
            bits = f"{ml.bit_offset}" if ml.bit_width == 1 else f"{ml.bit_offset}..{ml.bit_offset + ml.bit_width - 1}"
            mask = f"0x{((1 << ml.bit_width) - 1) << ml.bit_offset:0{ml.size * 2}X}"
        name = "  " * ml.depth + ml.path.rsplit(".", 1)[-1]
        tab.add_row(f"+0x{ml.offset:03x}", name, codec.type_name(ml.type), str(ml.size), bits, mask)
    con.print(tab)


# ---------------------------------------------------------------------------------------- decode
_HEX_JUNK = re.compile(r"0x|[\s:,_-]", re.IGNORECASE)


def _parse_hex(text: str, where: str) -> bytes:
    digits = _HEX_JUNK.sub("", text)
    bad = re.search(r"[^0-9a-fA-F]", digits)
    if bad:
        raise UserError(f"{where}: not hex: unexpected character {bad.group()!r}")
    if len(digits) % 2:
        raise UserError(f"{where}: odd number of hex digits ({len(digits)})")
    return bytes.fromhex(digits)


def read_input(source: str) -> tuple[bytes, str]:
    """The bytes named on the command line: ``@FILE`` (raw bytes) or hex text."""
    if source.startswith("@"):
        path = Path(source[1:])
        try:
            return path.read_bytes(), str(path)
        except FileNotFoundError:
            raise UserError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise UserError(f"{path}: is a directory, not a file") from None
        except OSError as e:
            raise UserError(f"{path}: cannot read: {e.strerror}") from None
    return _parse_hex(source, "argument"), "argument"


def _violations(t: Record, data: bytes, arch: str, version: versions.DdiVersion) -> list:
    from .ddi import rules

    obj = codec.from_bytes(t, data, arch, version)
    return rules.check(t.name, obj, rules.Facts(version=version))


@main.command("decode")
@click.argument("struct")
@click.argument("data")
@click.option("--arch", type=ARCH, default="x64", show_default=True, help="Architecture the bytes come from.")
@click.option("--ddi-version", "ddi_version", type=VERSION, default="latest", show_default=True, help="DXGKDDI_INTERFACE_VERSION the bytes were laid out for.")
@click.option("--all-arms", is_flag=True, help="Show every union arm, not only the one the tag selects.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def decode_cmd(struct: str, data: str, arch: str, ddi_version: str, all_arms: bool, as_json: bool) -> None:
    """Every field of a DDI structure from its bytes (HEX, or @FILE for a binary file).

    Flags are spelled out by bit name, enumerations by name, and the contract rules the values break
    are listed."""
    t = _lookup(struct)
    version = versions.ddi_version(ddi_version)
    _require_exists(t, version)
    if not isinstance(t, Record):
        raise UserError(f"{t.name} is a scalar; decode takes a structure")
    raw, where = read_input(data)
    try:
        fields = codec.decode(t, raw, arch, version, all_arms=all_arms)
    except codec.WrongSize as e:
        raise UserError(f"{where}: {t.name} ({arch}, {version.name}) is {e.expected} bytes, got {e.got}") from None
    broken = _violations(t, raw, arch, version)
    if as_json:
        click.echo(json.dumps({
            "struct": t.name, "arch": arch, "ddi_version": version.name, "size": len(raw),
            "fields": {f.path: f.as_json() for f in fields},
            "violations": [{"rule": v.rule, "name": v.name, "message": v.message,
                            "bugcheck": None if v.bugcheck is None else str(v.bugcheck)} for v in broken],
        }, indent=2))
        return
    con = _console()
    con.print(f"[bold]{t.name}[/bold]  {arch}  DDI {version.name}  {len(raw)} bytes")
    tab = Table(box=None, pad_edge=False, show_edge=False)
    tab.add_column("offset", justify="right")
    tab.add_column("member")
    tab.add_column("value")
    for f in fields:
        if f.bit_width is not None and f.path.rsplit(".", 1)[-1] == "Reserved" and f.value == 0:
            continue
        tab.add_row(f"+0x{f.offset:03x}", "  " * f.depth + f.path.rsplit(".", 1)[-1], f.text)
    con.print(tab)
    if broken:
        con.print(f"[bold red]{len(broken)} contract rule(s) broken:[/bold red]")
        for v in broken:
            con.print(f"  {v}")
    else:
        con.print("No contract rule that can be judged from this structure alone is broken.")


# ---------------------------------------------------------------------------------------- demo
@main.command("demo")
@click.option("--arch", type=ARCH, default="x64", show_default=True)
def demo_cmd(arch: str) -> None:
    """Show what crosses the DDI for one render submission and its completion."""
    from .demo import run_demo

    run_demo(_console(), arch)


