"""``wddmsim layout`` and ``wddmsim decode``: the DDI structures read the way a debugger's ``dt``
reads them.

``layout STRUCT`` prints a structure's size and every member's offset, size, C type and bit
position for one architecture and DDI version (``--json`` the same as JSON, each member with its C
type name); ``layout --list`` lists every type the model knows with its size on x86 and x64 and the
DDI version it appeared in. ``layout STRUCT --explain`` explains every bit of a flag type: the DDI
version it appeared in, what it means, who sets it and when, what the driver must do, and the rule
numbers that judge it (:mod:`wddmsim.ddi.flagbits`; ``--markdown`` prints the tables of docs/ddi.md).
``layout STRUCT --compare x86,x64`` (or two DDI versions, ``--compare wddm2_0,wddm3_0``) lays the
structure out twice side by side, marks what differs and says why the sizes differ
(:mod:`wddmsim.ddi.explain_layout`). ``decode STRUCT DATA`` reads a structure from bytes (hex text,
or ``@FILE``) member by member and judges it by the contract rules one structure can show; ``decode
@RECORD`` reads a crash record written by ``wddmsim run`` and shows the stop, each bug-check
parameter explained (:func:`wddmsim.ddi.bugcheck.describe`), the rule the driver broke in a
sentence, and the structure.

Text output fits the console: :func:`text_width` is ``COLUMNS`` when it is set, else the
terminal's width, else 100 columns (output piped or redirected;
:func:`wddmsim.ddi.explain_text.fit_width`). Names (members, types, rules) are never cut: the
column that holds prose or a long type name wraps instead, and so do the sentences.

Exit status of ``decode``: 0 when no contract rule is broken, 1 when the bytes break one or the
crash record names one the driver broke, 2 for bad input (an unknown structure, bytes of the wrong
length, text that is not hex, a file that is missing or is no crash record): one line on stderr,
never a traceback. ``layout`` answers bad input the same way (exit status 2).

This module does not import :mod:`wddmsim.cli` (the CLI imports it): its input errors are its
own :class:`StructInputError`, which reads and exits like the CLI's.
"""

from __future__ import annotations

import ctypes
import json
import re
from pathlib import Path

import click
from rich.console import Console

from ..ddi import codec, layout, registry, versions
from ..ddi.explain_text import Col, fit_width, plain_table, wrap
from ..ddi.schema import EnumType, Record

ARCH = click.Choice(list(layout.ARCHES))
VERSION = click.Choice(list(versions.VERSION_NAMES), case_sensitive=False)


class StructInputError(click.ClickException):
    """A mistake in what the person asked for: one line on stderr, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"wddmsim: error: {self.message}", err=True)


def text_width(con: Console | None = None) -> int:
    """Columns the text output fits: ``COLUMNS`` when it holds a whole number, else the width of
    the terminal ``con`` writes to, else 100 (:func:`wddmsim.ddi.explain_text.fit_width`)."""
    return fit_width(con.width if con is not None and con.is_terminal else None)


def _console() -> Console:
    """Rich console as wide as :func:`text_width`; the commands wrap their lines to it themselves."""
    con = Console(highlight=False)
    width = text_width(con)
    return con if con.width == width else Console(highlight=False, width=width)


def _say(con: Console, text: str, indent: str = "", more: str | None = None, style: str | None = None) -> None:
    for line in wrap(text, text_width(con), indent, more):
        con.print(line, markup=False, highlight=False, soft_wrap=True, style=style)


def _print_lines(con: Console, lines: list[str]) -> None:
    for text in lines:
        con.print(text, markup=False, highlight=False, soft_wrap=True)


def _lookup(name: str):
    try:
        return registry.lookup(name)
    except registry.UnknownType as e:
        raise StructInputError(str(e)) from None


def _require_exists(t, version: versions.DdiVersion) -> None:
    since = registry.since(t)
    if versions.ddi_version(since).value > version.value:
        raise StructInputError(f"{t.name} does not exist at DDI version {version.name}; it appeared in {since}")


# ---------------------------------------------------------------------------------------- layout
def kind_of(t) -> str:
    """What a registry type is: ``struct``, ``union``, ``flags`` (a flag union), ``enum`` or ``scalar``."""
    if isinstance(t, Record):
        return "flags" if t.flags else t.kind
    return "enum" if isinstance(t, EnumType) else "scalar"


def sizes(t, version: versions.DdiVersion) -> dict[str, dict[str, int]]:
    """``{"x86": {"size", "align"}, "x64": {...}}`` of ``t`` at ``version``."""
    out = {}
    for arch in ("x86", "x64"):
        c = layout.ctype(t, arch, version) if isinstance(t, Record) else layout.scalar_ctype(t, arch)
        out[arch] = {"size": ctypes.sizeof(c), "align": ctypes.alignment(c)}
    return out


def type_list(version: versions.DdiVersion) -> tuple[list[dict], int]:
    """Every registry type that exists at ``version``, by name, with its kind, the DDI version it
    appeared in and its sizes; and how many more types appear only in later versions."""
    rows, later = [], 0
    for name in registry.NAMES:
        t = registry.lookup(name)
        since = registry.since(t)
        if versions.ddi_version(since).value > version.value:
            later += 1
            continue
        rows.append({"name": t.name, "kind": kind_of(t), "since": since, **sizes(t, version)})
    return sorted(rows, key=lambda r: r["name"]), later


def layout_json(t, arch: str, version: versions.DdiVersion) -> dict:
    """``layout --json``: size, alignment and every member (offset, size, C type, bit position)."""
    if isinstance(t, Record):
        table = layout.layout_table(t, arch, version)
        types = {ml.path: codec.type_name(ml.type) for ml in layout.members(t, arch, version)}
        table["members"] = {path: {**m, "type": types[path]} for path, m in table["members"].items()}
    else:
        c = layout.scalar_ctype(t, arch)
        table = {"size": ctypes.sizeof(c), "align": ctypes.alignment(c), "members": {}}
    out = {"struct": t.name, "kind": kind_of(t), "arch": arch, "ddi_version": version.name, **table}
    if isinstance(t, EnumType):
        out["values"] = {e.name: int(e) for e in t.values}
    elif not isinstance(t, Record):
        out["type"] = t.base.name
    return out


def _print_list(version: versions.DdiVersion, as_json: bool) -> None:
    rows, later = type_list(version)
    if as_json:
        click.echo(json.dumps({"ddi_version": version.name, "types": rows}, indent=2))
        return
    con = _console()
    _say(con, f"DDI types at {version.name} (0x{version.value:X}, {version.release}): sizes in bytes", style="bold")
    cols = [Col("name"), Col("kind"), Col("x86", right=True), Col("x64", right=True), Col("since")]
    _print_lines(con, plain_table(cols, [[r["name"], r["kind"], str(r["x86"]["size"]), str(r["x64"]["size"]),
                                         r["since"]] for r in rows], text_width(con)))
    more = f"; {later} more appear in later DDI versions (--ddi-version latest lists them)" if later else ""
    _say(con, f"{len(rows)} types{more}. since: the DDI version the type appeared in.")


def _bits(ml) -> tuple[str, str]:
    """A bitfield's bit range and mask (``7..31``, ``0xFFFFFF80``); empty for other members."""
    if ml is None or ml.bit_width is None:
        return "", ""
    last = ml.bit_offset + ml.bit_width - 1
    bits = f"{ml.bit_offset}" if ml.bit_width == 1 else f"{ml.bit_offset}..{last}"
    return bits, f"0x{((1 << ml.bit_width) - 1) << ml.bit_offset:0{ml.size * 2}X}"


def _member_name(path: str, depth: int) -> str:
    return "  " * depth + path.rsplit(".", 1)[-1]


def _print_layout(con: Console, t, arch: str, version: versions.DdiVersion, data: dict) -> None:
    _say(con, f"{t.name}  {arch}  DDI {version.name} (0x{version.value:X}, {version.release})  "
              f"size {data['size']} (0x{data['size']:X}), align {data['align']}", style="bold")
    if isinstance(t, EnumType):
        _print_lines(con, [f"  {int(e):>10}  {e.name}" for e in t.values])
        return
    if not isinstance(t, Record):
        con.print(f"  scalar ({t.base.name})")
        return
    cols = [Col("offset", right=True), Col("member"), Col("type", wraps=True), Col("size", right=True), Col("bits"),
            Col("mask")]
    rows = [[f"+0x{ml.offset:03x}", _member_name(ml.path, ml.depth), codec.type_name(ml.type), str(ml.size),
             *_bits(ml)] for ml in layout.members(t, arch, version)]
    _print_lines(con, plain_table(cols, rows, text_width(con)))


def _print_explained(con: Console, t: Record, arch: str, version: versions.DdiVersion) -> None:
    """``layout STRUCT --explain``: every bit, its version, meaning, setter, duty and rules."""
    from ..ddi import flagbits

    width = text_width(con)
    bits = flagbits.explain(t.name, version, arch)
    size = ctypes.sizeof(layout.ctype(t, arch, version))
    _say(con, f"{t.name}  {arch}  DDI {version.name} (0x{version.value:X}, {version.release}): "
              f"{len(bits)} bit fields in {size} bytes", style="bold")
    _say(con, f"Filled by: {flagbits.flag_text(t.name).sets}")
    url = flagbits.source_url(t)
    if url:
        base = "https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/"
        _print_lines(con, ["Reference:", url] if len(url) <= width else ["Reference:", base, "  " + url[len(base):]])
    for b in bits:
        con.print("")
        rules = f"  rules {b.rules_text}" if b.rules else ""
        _say(con, f"bit {b.bits}  {b.name}  mask {b.mask}  since {b.since}{rules}", style="bold")
        for label, text in (("means", b.means), ("set", b.sets), ("driver", b.must)):
            _say(con, text, f"  {label:<8}", " " * 10)
    later = flagbits.later_bits(t.name, version)
    if later:
        con.print("")
        _say(con, f"Later DDI versions add {', '.join(later)} (--ddi-version latest explains them).")


def _print_compared(con: Console, c) -> None:
    """``layout STRUCT --compare A,B``: the two layouts side by side, what differs, and why."""
    a, b = c.sides
    same = f"DDI {a.version.name}" if a.version == b.version else a.arch if a.arch == b.arch else ""
    _say(con, f"{c.name}: {a.label} and {b.label} side by side, offsets and sizes in bytes"
              + (f" ({same})" if same else ""), style="bold")
    has_bits = any(ml is not None and ml.bit_width is not None for r in c.rows for ml in r.cells)
    cols = [Col("member"), Col(a.label, right=True), Col("size", right=True), Col(b.label, right=True),
            Col("size", right=True)] + ([Col("bits")] if has_bits else []) + [Col("differs", wraps=True)]
    rows = []
    for r in c.rows:
        cells = [_member_name(r.path, r.depth)]
        for ml in r.cells:
            cells += ["-", "-"] if ml is None else [f"+0x{ml.offset:03x}", str(ml.size)]
        if has_bits:
            bits = [_bits(ml)[0] for ml in r.cells if ml is not None]
            cells.append(bits[0] if len(set(bits)) == 1 else " -> ".join(bits))
        rows.append(cells + [", ".join(r.differs)])
    _print_lines(con, plain_table(cols, rows, text_width(con)))
    for line in c.why:
        _say(con, line)


def _compare_sides(text: str, arch: str, version: versions.DdiVersion, ctx: click.Context) -> tuple:
    """The two (architecture, DDI version) pairs ``--compare`` names: two architectures at
    ``--ddi-version``, or two DDI versions on ``--arch``; anything else is a StructInputError."""
    values = [v.strip().lower() for v in text.split(",")]
    if len(values) != 2 or not all(values):
        raise StructInputError(f"--compare: {text!r}: give two values separated by a comma, two architectures "
                               f"(x86,x64) or two DDI versions (wddm2_0,wddm3_0)")
    known = [v for v in values if v not in layout.ARCHES and v not in versions.VERSION_NAMES]
    if known:
        raise StructInputError(f"--compare: {known[0]!r} is neither an architecture ({', '.join(layout.ARCHES)}) "
                               f"nor a DDI version ({', '.join(versions.VERSION_NAMES)})")
    archs = [v in layout.ARCHES for v in values]
    if archs[0] != archs[1]:
        raise StructInputError(f"--compare: {text!r}: give two architectures (x86,x64) or two DDI versions "
                               f"(wddm2_0,wddm3_0), not one of each")
    if values[0] == values[1] or (not archs[0] and versions.ddi_version(values[0]) == versions.ddi_version(values[1])):
        raise StructInputError(f"--compare: {text!r} names the same layout twice")
    if archs[0]:
        if ctx.get_parameter_source("arch") == click.core.ParameterSource.COMMANDLINE:
            raise StructInputError(f"--arch: --compare {text} already names the architectures")
        return (values[0], version), (values[1], version)
    if ctx.get_parameter_source("ddi_version") == click.core.ParameterSource.COMMANDLINE:
        raise StructInputError(f"--ddi-version: --compare {text} already names the DDI versions")
    return (arch, versions.ddi_version(values[0])), (arch, versions.ddi_version(values[1]))


def _explain_all(names: list[str] | None, as_json: bool) -> None:
    from ..ddi import flagbits

    if as_json:
        raise StructInputError("--markdown and --json: give one of them")
    click.echo(flagbits.markdown(names), nl=False)


@click.command("layout")
@click.argument("struct", required=False)
@click.option("--list", "as_list", is_flag=True,
              help="List every structure, flag union, enumeration and scalar with its size on x86 and x64 and "
                   "the DDI version it appeared in.")
@click.option("--arch", type=ARCH, default="x64", show_default=True, help="Target architecture.")
@click.option("--ddi-version", "ddi_version", type=VERSION, default="latest", show_default=True,
              help="DXGKDDI_INTERFACE_VERSION to lay out for.")
@click.option("--explain", is_flag=True,
              help="Explain every bit of a flag type: the DDI version it appeared in, what it means, who sets it "
                   "and when, what the driver must do, and the rule numbers that judge it.")
@click.option("--compare", metavar="A,B",
              help="Two layouts side by side with their differences marked: two architectures (x86,x64) at "
                   "--ddi-version, or two DDI versions (wddm2_0,wddm3_0) on --arch.")
@click.option("--markdown", is_flag=True,
              help="With --explain: the Markdown tables of docs/ddi.md (of every flag type without STRUCT).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table (each member with its C type).")
@click.pass_context
def layout_cmd(ctx: click.Context, struct: str | None, as_list: bool, arch: str, ddi_version: str, explain: bool,
               compare: str | None, markdown: bool, as_json: bool) -> None:
    """Size and every member's offset, size and C type of a DDI structure, like a debugger's dt
    (or, with --list, every type the model knows).

    With --explain, every bit of a flag type explained; with --compare, two layouts of the
    structure side by side (two architectures, or two DDI versions) and why their sizes differ."""
    version = versions.ddi_version(ddi_version)
    if markdown and not explain:
        raise StructInputError("--markdown goes with --explain (the flag-bit tables of docs/ddi.md)")
    if as_list:
        if struct is not None:
            raise StructInputError("give a STRUCT or --list, not both")
        if explain or compare:
            raise StructInputError("--list goes alone, not with --explain or --compare")
        _print_list(version, as_json)
        return
    if explain and compare:
        raise StructInputError("--explain and --compare: give one of them")
    if explain and markdown and struct is None:
        _explain_all(None, as_json)
        return
    if struct is None:
        raise StructInputError("layout needs a STRUCT (e.g. DXGKARG_SUBMITCOMMAND), or --list for every type")
    t = _lookup(struct)
    if explain:
        _explain_cmd(t, arch, version, markdown, as_json)
        return
    if compare is not None:
        if not isinstance(t, Record):
            raise StructInputError(f"--compare: {t.name} is {'an enumeration' if kind_of(t) == 'enum' else 'a scalar'}"
                                   f", the same 4 bytes on every layout; compare a structure or union")
        first, second = _compare_sides(compare, arch, version, ctx)
        for _, v in (first, second):
            _require_exists(t, v)
        from ..ddi.explain_layout import compare as compare_layouts

        c = compare_layouts(t, first, second)
        if as_json:
            click.echo(json.dumps(c.as_json(), indent=2))
        else:
            _print_compared(_console(), c)
        return
    _require_exists(t, version)
    data = layout_json(t, arch, version)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    _print_layout(_console(), t, arch, version, data)


def _explain_cmd(t, arch: str, version: versions.DdiVersion, markdown: bool, as_json: bool) -> None:
    from ..ddi import flagbits

    if not flagbits.has_bits(t):
        inner = []
        if isinstance(t, Record):
            inner = sorted({f"{ml.path} ({codec.type_name(ml.type)})" for ml in layout.members(t, arch, version)
                            if ml.depth == 0 and flagbits.has_bits(ml.type)})
        hint = f"; explain its flag member{'s' if len(inner) > 1 else ''} {', '.join(inner)}" if inner else ""
        raise StructInputError(f"--explain: {t.name} has no bit fields of its own{hint}")
    if markdown:
        _explain_all([t.name], as_json)
        return
    _require_exists(t, version)
    if as_json:
        out = {"struct": t.name, "arch": arch, "ddi_version": version.name, "source": flagbits.source_url(t),
               "filled_by": flagbits.flag_text(t.name).sets,
               "bits": [b.as_json() for b in flagbits.explain(t.name, version, arch)],
               "later": flagbits.later_bits(t.name, version)}
        click.echo(json.dumps(out, indent=2))
        return
    _print_explained(_console(), t, arch, version)


# ---------------------------------------------------------------------------------------- decode
_HEX_JUNK = re.compile(r"0x|[\s:,_-]", re.IGNORECASE)


def parse_hex(text: str, where: str) -> bytes:
    """Bytes from hex text; ``0x``, spaces, colons, commas, dashes and underscores are ignored."""
    digits = _HEX_JUNK.sub("", text)
    bad = re.search(r"[^0-9a-fA-F]", digits)
    if bad:
        raise StructInputError(f"{where}: not hex: unexpected character {bad.group()!r}")
    if len(digits) % 2:
        raise StructInputError(f"{where}: odd number of hex digits ({len(digits)})")
    return bytes.fromhex(digits)


def read_input(source: str) -> tuple[bytes, str]:
    """The bytes named on the command line: ``@FILE`` (raw bytes) or hex text; and where they came from."""
    if source.startswith("@"):
        from ..util.inputbound import STRUCT_MAX, TooLarge, read_bounded

        path = Path(source[1:])
        try:
            return read_bounded(path, STRUCT_MAX), str(path)
        except TooLarge as e:
            raise StructInputError(f"{path}: {e} (no DDI structure is)") from None
        except FileNotFoundError:
            raise StructInputError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise StructInputError(f"{path}: is a directory, not a file") from None
        except OSError as e:
            raise StructInputError(f"{path}: cannot read: {e.strerror}") from None
    return parse_hex(source, "argument"), "argument"


def read_record(path_text: str) -> dict:
    """The crash record at ``path_text`` (see :mod:`wddmsim.dxgkrnl.crash`), checked; a stop that
    is about no structure has ``struct`` empty."""
    from ..dxgkrnl.crash import RECORD_FORMAT

    from ..util.inputbound import RECORD_MAX, TooLarge, read_bounded

    path = Path(path_text)
    try:
        text = read_bounded(path, RECORD_MAX).decode("utf-8")
    except TooLarge as e:
        raise StructInputError(f"{path}: {e} (a crash record)") from None
    except FileNotFoundError:
        raise StructInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise StructInputError(f"{path}: is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise StructInputError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        rec = json.loads(text)
    except json.JSONDecodeError as e:
        raise StructInputError(f"{path}: not a crash record (line {e.lineno}: {e.msg}); give STRUCT and DATA to "
                               f"decode raw bytes") from None
    except RecursionError:
        raise StructInputError(f"{path}: not a crash record (nested too deeply to read); give STRUCT and DATA "
                               f"to decode raw bytes") from None
    if not isinstance(rec, dict) or rec.get("format") != RECORD_FORMAT:
        raise StructInputError(f"{path}: format: not a {RECORD_FORMAT} file")
    for key in ("struct", "arch", "ddi_version", "bytes", "bugcheck", "address", "time", "message"):
        if key not in rec:
            raise StructInputError(f"{path}: {key}: missing from the crash record")
    b = rec["bugcheck"]
    if not isinstance(b, dict) or any(not _is_int(b.get(k)) for k in ("code", "p1", "p2", "p3", "p4")):
        raise StructInputError(f"{path}: bugcheck: needs the integers code, p1, p2, p3 and p4")
    _check_record_fields(path, rec)
    try:
        raw = bytes.fromhex(rec["bytes"])
    except (TypeError, ValueError):
        raise StructInputError(f"{path}: bytes: not hex") from None
    if rec["struct"] and not raw:
        raise StructInputError(f"{path}: bytes: empty, but struct names {rec['struct']}")
    return rec


def _is_int(value) -> bool:
    return type(value) is int  # JSON true/false are no integers here


def _check_record_fields(path: Path, rec: dict) -> None:
    """Each member of a crash record has the type and the range ``wddmsim run`` writes: a
    StructInputError names the first that does not (exit status 2), so a record edited by hand is
    never half-read."""
    from ..ddi.layout import ARCHES

    def bad(key: str, why: str) -> StructInputError:
        return StructInputError(f"{path}: {key}: {why}")

    if not isinstance(rec["struct"], str):
        raise bad("struct", f"a structure name or \"\" (none), not {json.dumps(rec['struct'])}")
    if rec["struct"]:
        try:
            _lookup(rec["struct"])
        except StructInputError as e:
            raise bad("struct", str(e)) from None
    if rec["arch"] not in ARCHES:
        raise bad("arch", f"{json.dumps(rec['arch'])} is not an architecture; one of {', '.join(ARCHES)}")
    ver = rec["ddi_version"]
    if not isinstance(ver, str):
        raise bad("ddi_version", f"a DDI version name, not {json.dumps(ver)}")
    if ver:
        try:
            versions.ddi_version(ver)
        except KeyError as e:
            raise bad("ddi_version", str(e.args[0])) from None
    for key in ("address", "time"):
        if not _is_int(rec[key]) or rec[key] < 0:
            raise bad(key, f"a whole number of at least 0, not {json.dumps(rec[key])}")
    if not isinstance(rec["message"], str):
        raise bad("message", f"text, not {json.dumps(rec['message'])}")
    for key in ("ddi", "traceback"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            raise bad(key, f"text or null, not {json.dumps(rec[key])}")
    rule = rec.get("rule")
    if rule is not None and (not isinstance(rule, dict) or not _is_int(rule.get("number"))
                             or not isinstance(rule.get("name", ""), (str, type(None)))):
        raise bad("rule", "null, or {\"number\": N, \"name\": \"...\"} with N a whole number")


def rule_sentence(number: int, name: str | None = None) -> str:
    """Contract rule ``number`` in a sentence: its number, name and what it asks (the catalogue's words)."""
    from ..ddi.rules.catalog import RULE_COUNT, catalog

    if not 1 <= number <= RULE_COUNT:
        return f"rule {number}{f' ({name})' if name else ''}"
    r = catalog()[number - 1]
    return f"rule {number} ({r.name}), which asks: {r.words}"


def stop_name(bc) -> str:
    """``bug check 0x119 (VIDEO_SCHEDULER_INTERNAL_ERROR), parameter 1 0x2 (DRIVER_FAILED_SUBMIT_COMMAND)``:
    a bug check by its code and name, and for 0x119 its subcode."""
    from ..ddi.bugcheck import BugCheckCode, VidSchError

    text = f"bug check 0x{bc.code:X} ({bc.name})"
    if bc.code == BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR and bc.p1 in VidSchError._value2member_map_:
        text += f", parameter 1 0x{bc.p1:X} ({VidSchError(bc.p1).name})"
    return text


def print_stop(con: Console, record: dict, parameters: bool = True) -> None:
    """The stop a crash record holds (also what ``wddmsim run`` prints after one): the time, the
    bug check with every parameter explained, why the model stopped (the rule the driver broke, in
    a sentence) and the driver's traceback where it faulted. Every line is wrapped to
    :func:`text_width`. ``parameters=False`` leaves out the stop line and its parameters, for a
    caller that has printed them already (the summary of ``wddmsim run``)."""
    from ..ddi.bugcheck import BugCheck, describe

    if parameters:
        b = record["bugcheck"]
        lines = describe(BugCheck(b["code"], b["p1"], b["p2"], b["p3"], b["p4"]))
        _say(con, f"*** STOP at t={record['time']} ns of virtual time: {lines[0]}", more="    ", style="bold red")
        for line in lines[1:]:
            _say(con, line, "  ")
    rule = record.get("rule")
    if rule:
        _say(con, f"Why it stopped: the driver broke contract {rule_sentence(rule['number'], rule.get('name'))}")
        message = re.sub(rf"^rule {rule['number']} \([^)]*\): ", "", record["message"])
        _say(con, f"What happened: {message}", "  ")
    else:
        _say(con, f"Why it stopped: {record['message']}")
    if record.get("traceback"):
        _say(con, f"The driver's traceback (in {record.get('ddi') or 'the driver'}):", "  ")
        for line in record["traceback"].rstrip().splitlines():
            indent = "    " + line[:len(line) - len(line.lstrip())]
            _say(con, line.strip(), indent, indent + "    ")


def _violations(t: Record, data: bytes, arch: str, version: versions.DdiVersion) -> list:
    from ..ddi import rules

    obj = codec.from_bytes(t, data, arch, version)
    return rules.check(t.name, obj, rules.Facts(version=version))


def decode_bytes(t: Record, raw: bytes, arch: str, version: versions.DdiVersion, where: str = "argument",
                 all_arms: bool = False) -> tuple[list, list]:
    """What ``decode`` makes of ``raw``: every member of structure ``t`` (:func:`codec.decode`)
    and the contract rules the bytes break, judged from them alone. Bytes of the wrong length are
    a :class:`StructInputError` naming ``where`` they came from (exit status 2)."""
    try:
        fields = codec.decode(t, raw, arch, version, all_arms=all_arms)
    except codec.WrongSize as e:
        raise StructInputError(f"{where}: {t.name} ({arch}, {version.name}) is {e.expected} bytes, "
                               f"got {e.got}") from None
    return fields, _violations(t, raw, arch, version)


def _print_fields(con: Console, t: Record, fields, arch: str, version: versions.DdiVersion, size: int) -> None:
    _say(con, f"{t.name}  {arch}  DDI {version.name}  {size} bytes", style="bold")
    rows = [[f"+0x{f.offset:03x}", _member_name(f.path, f.depth), f.text] for f in fields
            if not (f.bit_width is not None and f.path.rsplit(".", 1)[-1] == "Reserved" and f.value == 0)]
    _print_lines(con, plain_table([Col("offset", right=True), Col("member"), Col("value", wraps=True)], rows,
                                  text_width(con)))


def _print_judgement(con: Console, name: str, broken: list, record: dict | None) -> None:
    """What the contract rules say of the decoded bytes, in sentences."""
    if broken:
        count = "1 contract rule" if len(broken) == 1 else f"{len(broken)} contract rules"
        _say(con, f"Rules broken: judged from these bytes alone, {name} breaks {count}:", style="bold red")
        for v in broken:
            _say(con, f"- {rule_sentence(v.rule, v.name)}", "  ", "    ")
            _say(con, f"Here: {v.message}", "    ", "      ")
            if v.bugcheck is not None:
                _say(con, f"Windows stops for it with {stop_name(v.bugcheck)}.", "    ", "      ")
        return
    rule = (record or {}).get("rule")
    if rule:
        _say(con, f"Judged from these bytes alone, {name} breaks no further contract rule: rule {rule['number']} "
                  f"is about what happened around it (what the driver returned or reported, and what the OS had "
                  f"issued), which the bytes do not hold.")
    else:
        _say(con, f"No contract rule broken: judged from these bytes alone, {name} breaks none of the rules one "
                  f"structure can show (rules about the calls around it need a run).")


@click.command("decode")
@click.argument("struct")
@click.argument("data", required=False)
@click.option("--arch", type=ARCH, default=None, help="Architecture the bytes come from [default: x64].")
@click.option("--ddi-version", "ddi_version", type=VERSION, default=None,
              help="DXGKDDI_INTERFACE_VERSION the bytes were laid out for [default: latest].")
@click.option("--all-arms", is_flag=True, help="Show every union arm, not only the one the tag selects.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def decode_cmd(struct: str, data: str | None, arch: str | None, ddi_version: str | None, all_arms: bool,
               as_json: bool) -> None:
    """Every field of a DDI structure from its bytes (HEX, or @FILE for a binary file), or a crash
    record written by ``wddmsim run`` (``wddmsim decode @RECORD``: the stop, each bug-check
    parameter explained, the rule the driver broke and the structure).

    Flags are spelled out by bit name, enumerations by name, and the contract rules the values break
    are named and explained. Exit status: 0 when no rule is broken, 1 when one is (by the bytes, or
    by the driver in a crash record), 2 for bad input."""
    record = None
    if data is None:
        if not struct.startswith("@"):
            raise StructInputError("decode needs STRUCT and DATA (hex or @FILE), or a crash record as @RECORD")
        record = read_record(struct[1:])
        struct = record["struct"]
        arch = arch or record["arch"]
        ddi_version = ddi_version or record["ddi_version"] or None
    arch = arch or "x64"
    version = versions.ddi_version(ddi_version or "latest")
    t = fields = None
    broken: list = []
    raw = b""
    if struct:
        t = _lookup(struct)
        _require_exists(t, version)
        if not isinstance(t, Record):
            raise StructInputError(f"{t.name} is a scalar; decode takes a structure")
        raw, where = (bytes.fromhex(record["bytes"]), "crash record") if record is not None else read_input(data)
        fields, broken = decode_bytes(t, raw, arch, version, where, all_arms=all_arms)
    failed = bool(broken) or bool(record is not None and record.get("rule"))
    if as_json:
        out = {
            "struct": t.name if t is not None else None, "arch": arch, "ddi_version": version.name, "size": len(raw),
            "fields": {f.path: f.as_json() for f in fields or ()},
            "violations": [{"rule": v.rule, "name": v.name, "message": v.message, "explained": rule_sentence(v.rule),
                            "bugcheck": None if v.bugcheck is None else str(v.bugcheck)} for v in broken],
        }
        if record is not None:
            from ..ddi.bugcheck import BugCheck, describe

            b = record["bugcheck"]
            crash = {k: record.get(k) for k in ("time", "bugcheck", "rule", "message", "address", "ddi")}
            crash["explained"] = describe(BugCheck(b["code"], b["p1"], b["p2"], b["p3"], b["p4"]))
            if record.get("rule"):
                crash["rule_explained"] = rule_sentence(record["rule"]["number"], record["rule"].get("name"))
            out["crash"] = crash
        click.echo(json.dumps(out, indent=2))
        raise SystemExit(1 if failed else 0)
    con = _console()
    if record is not None:
        print_stop(con, record)
        if t is None:
            _say(con, "The stop is about no single structure: the crash record holds no bytes to decode.")
            raise SystemExit(1 if failed else 0)
        _say(con, f"The structure at 0x{record['address']:X} when the model stopped:")
    _print_fields(con, t, fields, arch, version, len(raw))
    _print_judgement(con, t.name, broken, record)
    raise SystemExit(1 if failed else 0)
