#!/usr/bin/env python3
"""Generate tests/data/msvc_layouts.json: compiler ground truth for the MSVC
layouts (x64 and x86) of the WDDM DDI structures declared in
tools/msvc_layouts/ddi_decls.h, for every DXGKDDI_INTERFACE_VERSION modelled
by wddmsim.

How the numbers are obtained (all from clang-14 targeting *-pc-windows-msvc):
  * offsets, bit positions, sizeof and alignment of every entry come from the
    record-layout dump (-Xclang -fdump-record-layouts) of a wrapper struct
    ``struct __w_<NAME> { <NAME> v; }`` that is forced to be laid out;
  * member sizes (and the storage-unit size of bit-fields) come from a
    generated constant array of sizeof()/offsetof() values compiled with
    -S -emit-llvm and read back from the IR;
  * every non-bit-field offset from the dump is cross-checked against
    offsetof(), and sizeof/alignof of each entry against the dump; any
    disagreement aborts the run.

Usage: python tools/gen_msvc_layouts.py   (stdlib only; needs /usr/bin/clang-14)
The output is deterministic: re-running regenerates the same bytes.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER_DIR = os.path.join(REPO, "tools", "msvc_layouts")
HEADER = "ddi_decls.h"
OUTPUT = os.path.join(REPO, "tests", "data", "msvc_layouts.json")
GENERATOR = "tools/gen_msvc_layouts.py"
CLANG = os.environ.get("CLANG", "clang-14")

VERSIONS = [
    ("vista", 0x1052),
    ("vista_sp1", 0x1053),
    ("win7", 0x2005),
    ("win8", 0x300E),
    ("wddm1_3", 0x4002),
    ("wddm2_0", 0x5023),
    ("wddm2_1", 0x6003),
    ("wddm2_2", 0x700A),
    ("wddm2_3", 0x8001),
    ("wddm2_4", 0x9006),
    ("wddm2_5", 0xA00B),
    ("wddm2_6", 0xB004),
    ("wddm2_7", 0xC004),
    ("wddm2_8", 0xD001),
    ("wddm2_9", 0xE003),
    ("wddm3_0", 0xF003),
    ("wddm3_1", 0x10004),
    ("wddm3_2", 0x11007),
]

TARGETS = [
    ("x64", "x86_64-pc-windows-msvc"),
    ("x86", "i686-pc-windows-msvc"),
]

# Entries written to the JSON (typedef names).  Presence at a given version
# is decided by the header itself through its DDI_HAS_<NAME> macros.
TYPES = [
    # scalars / enums
    "PHYSICAL_ADDRESS",
    "D3DGPU_VIRTUAL_ADDRESS",
    "D3DDDI_VIDEO_PRESENT_SOURCE_ID",
    "D3DDDI_VIDEO_PRESENT_TARGET_ID",
    "D3DDDI_FLIPINTERVAL_TYPE",
    "NTSTATUS",
    "DXGK_INTERRUPT_TYPE",
    "DXGK_BUILDPAGINGBUFFER_OPERATION",
    "DXGK_PAGE_FAULT_FLAGS",
    "DXGK_RENDER_PIPELINE_STAGE",
    "DXGK_GENERAL_ERROR_CODE",
    "DXGK_ENGINE_STATE",
    "DXGK_ENGINE_TYPE",
    "RECT",
    # submission
    "DXGK_SUBMITCOMMANDFLAGS",
    "DXGKARG_SUBMITCOMMAND",
    "DXGKARG_SUBMITCOMMANDVIRTUAL",
    "DXGKARG_SUBMITCOMMANDTOHWQUEUE",
    # interrupts
    "DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS",
    "DXGKARGCB_NOTIFY_INTERRUPT_DATA",
    "DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS",
    "DXGK_MIRACAST_CHUNK_ID",
    "DXGK_MIRACAST_CHUNK_INFO",
    "DXGK_FAULT_ERROR_CODE",
    # preemption, patching
    "DXGK_PREEMPTCOMMANDFLAGS",
    "DXGKARG_PREEMPTCOMMAND",
    "DXGK_PATCHFLAGS",
    "DXGKARG_PATCH",
    "DXGK_ALLOCATIONLIST",
    "D3DDDI_PATCHLOCATIONLIST",
    # contexts
    "DXGK_CONTEXTINFO_CAPS",
    "DXGK_CONTEXTINFO",
    # paging buffers
    "DXGK_TRANSFERFLAGS",
    "DXGK_DISCARDCONTENTFLAGS",
    "DXGK_MAPAPERTUREFLAGS",
    "DXGKARG_BUILDPAGINGBUFFER",
    # TDR, fences, flips
    "DXGKARG_RESETENGINE",
    "DXGKARG_QUERYDEPENDENTENGINEGROUP",
    "DXGK_ENGINESTATUS",
    "DXGKARG_QUERYENGINESTATUS",
    "DXGKARG_QUERYCURRENTFENCE",
    "DXGKARG_CANCELCOMMAND",
    "DXGK_SETVIDPNSOURCEADDRESS_FLAGS",
    "DXGK_PRIMARYDATA",
    "DXGKARG_SETVIDPNSOURCEADDRESS",
    # multiplane overlays: attributes and per-plane vsync reports
    "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES",
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO",
    "DXGKCB_NOTIFY_MPO_VSYNC_FLAGS",
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2",
    "DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3",
    # multiplane-overlay flips, third form (WDDM 2.1): the flip and the support check
    "DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS",
    "DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS",
    "DXGK_PLANE_SPECIFIC_INPUT_FLAGS",
    "DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS",
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS",
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION",
    "DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3",
    "DXGK_PRIMARYCONTEXTDATA",
    "DXGK_MULTIPLANE_OVERLAY_PLANE3",
    "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3",
    "DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO",
    "DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2",
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE",
    "DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3",
    # hardware flip queue (WDDM 3.0)
    "DXGK_CANCELFLIPS_PLANE",
    "DXGKARG_CANCELFLIPS",
    "DXGK_FLIPQUEUE_LOG_ENTRY",
    "DXGKARG_SETFLIPQUEUELOGBUFFER",
    "DXGKARG_UPDATEFLIPQUEUELOG",
    "DXGKARG_SETINTERRUPTTARGETPRESENTID",
    # caps
    "DXGK_VIDSCHCAPS",
    "DXGK_NODEMETADATA_FLAGS",
    # adapter description: segments, engine topology, node metadata
    "DXGK_SEGMENTFLAGS",
    "DXGK_SEGMENTDESCRIPTOR",
    "DXGK_GPUENGINETOPOLOGY",
    "DXGK_NODEMETADATA",
    # device and context creation
    "DXGK_CREATECONTEXTFLAGS",
    "DXGKARG_CREATECONTEXT",
    "DXGK_CREATEDEVICEFLAGS",
    "DXGKARG_CREATEDEVICE",
    "DXGK_DEVICEINFOFLAGS",
    "DXGK_DEVICEINFO",
    # DMA buffer builders
    "DXGKARG_RENDER",
    "DXGK_PRESENTFLAGS",
    "DXGKARG_PRESENT",
    # GpuMmu (WDDM 2.0): page-table entries, page-table paging operations, MMU caps, processes
    "D3DKMT_HANDLE",
    "DXGK_PTE_PAGE_SIZE",
    "DXGK_PTE",
    "D3DGPU_PHYSICAL_ADDRESS",
    "DXGK_PAGETABLEUPDATEMODE",
    "DXGK_PAGETABLEUPDATEADDRESS",
    "DXGK_UPDATEPAGETABLEFLAGS",
    "DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE",
    "DXGK_BUILDPAGINGBUFFER_FLUSHTLB",
    "DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE",
    "DXGK_GPUMMUCAPS",
    "DXGK_PAGE_TABLE_LEVEL_DESC",
    "DXGKARG_SETROOTPAGETABLE",
    "DXGKARG_GETROOTPAGETABLESIZE",
    "DXGK_CREATEPROCESSFLAGS",
    "DXGKARG_CREATEPROCESS",
    # hardware scheduling
    "D3DDDI_CREATEHWCONTEXTFLAGS",
    "DXGK_HWCONTEXT_CAPS",
    "DXGKARG_CREATEHWCONTEXT",
    "D3DDDI_CREATEHWQUEUEFLAGS",
    "DXGKARG_CREATEHWQUEUE",
    "DXGK_SCHEDULING_PRIORITY_BAND",
    "DXGKARG_SETUPPRIORITYBANDS",
    "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES",
    "DXGKARG_SUSPENDCONTEXT",
    "DXGKARG_RESUMECONTEXT",
    "DXGKARG_RESETHWENGINE",
    "DXGKARG_RESUMEHWENGINE",
    "DXGK_INVALIDATEHWCONTEXTFLAGS",
    "DXGKARGCB_INVALIDATEHWCONTEXT",
    "DXGK_KERNEL_SUBMISSION_TYPE",
    "DXGKARG_SIGNALMONITOREDFENCE",
    # native GPU fences
    "D3DDDI_NATIVEFENCE_TYPE",
    "DXGKARG_CREATENATIVEFENCE_FLAGS",
    "DXGKARG_CREATENATIVEFENCE",
    "DXGK_DESTROYNATIVEFENCE_FLAGS",
    "DXGKARG_DESTROYNATIVEFENCE",
    "DXGKARG_UPDATEMONITOREDVALUES_FLAGS",
    "DXGKARG_UPDATEMONITOREDVALUES",
    "DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS",
    "DXGKARG_UPDATECURRENTVALUESFROMCPU",
    "DXGK_NATIVE_FENCE_CAPS",
    # synchronization-object and signal flags (d3dukmdt)
    "D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS",
    "D3DDDICB_SIGNALFLAGS",
    # DxgkDdiQueryAdapterInfo: arguments, driver caps and what they embed, segment queries
    "DXGK_QUERYADAPTERINFOTYPE",
    "DXGK_QUERYADAPTERINFOFLAGS",
    "DXGKARG_QUERYADAPTERINFO",
    "DXGK_POINTERFLAGS",
    "DXGK_GAMMARAMPCAPS",
    "DXGK_COLORTRANSFORMCAPS",
    "DXGK_PRESENTATIONCAPS",
    "DXGK_FLIPCAPS",
    "DXGK_VIDMMCAPS",
    "DXGK_VIRTUALADDRESSCAPS_DEPRECATED",
    "DXGK_DMABUFFERCAPS_DEPRECATED",
    "DXGK_WDDMVERSION",
    "D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY",
    "D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY",
    "D3DKMDT_PREEMPTION_CAPS",
    "DXGK_HWQUEUEDFLIP_CAPS",
    "DXGK_DRIVERCAPS",
    "DXGK_QUERYSEGMENTIN",
    "DXGK_QUERYSEGMENTOUT",
    "DXGK_SEGMENTDESCRIPTOR3",
    "DXGK_QUERYSEGMENTOUT3",
]

# Record types that are leaves when nested inside another structure.
LEAF_RECORD_TYPES = {"union _LARGE_INTEGER"}

LINE_RE = re.compile(r"^\s*(\d+)(?::(\d+)-(\d+))?\s\|(.*)$")
SIZE_RE = re.compile(r"^\s*\|\s*\[sizeof=(\d+), align=(\d+)")
IR_ARRAY_RE = re.compile(
    r"^@__ddi_vals = (?:dso_local )?(?:local_unnamed_addr )?global "
    r"\[(\d+) x i64\] (zeroinitializer|\[(.*?)\])", re.M)


class LayoutError(RuntimeError):
    pass


def run(cmd: list[str], cwd: str) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise LayoutError("command failed: %s\n%s" % (" ".join(cmd), proc.stderr))
    return proc.stdout


def clang_base(triple: str, value: int) -> list[str]:
    return [CLANG, "-target", triple, "-std=c11",
            "-DDXGKDDI_INTERFACE_VERSION=0x%X" % value,
            "-I", HEADER_DIR, "-Wno-microsoft", "-Werror=implicit-function-declaration"]


def dump_source() -> str:
    out = ['#include "%s"' % HEADER]
    for name in TYPES:
        out.append("#ifdef DDI_HAS_%s" % name)
        out.append("struct __w_%s { %s v; };" % (name, name))
        out.append("unsigned long long __use_%s = sizeof(struct __w_%s);" % (name, name))
        out.append("#endif")
    return "\n".join(out) + "\n"


class Node:
    __slots__ = ("depth", "offset", "bit_begin", "bit_end", "text", "children")

    def __init__(self, depth, offset, bit_begin, bit_end, text):
        self.depth = depth
        self.offset = offset
        self.bit_begin = bit_begin
        self.bit_end = bit_end
        self.text = text
        self.children: list[Node] = []


def parse_dump(text: str) -> dict[str, tuple[Node, int, int]]:
    """Return {NAME: (v-node, sizeof, align)} for every wrapper in the dump."""
    blocks = text.split("*** Dumping AST Record Layout")
    result = {}
    for block in blocks:
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        m = LINE_RE.match(lines[0])
        if not m:
            continue
        head = m.group(4).strip()
        if not head.startswith("struct __w_"):
            continue
        name = head[len("struct __w_"):]
        nodes = []
        size = align = None
        for ln in lines[1:]:
            sm = SIZE_RE.match(ln)
            if sm:
                size, align = int(sm.group(1)), int(sm.group(2))
                break
            lm = LINE_RE.match(ln)
            if not lm:
                raise LayoutError("unparsed dump line for %s: %r" % (name, ln))
            body = lm.group(4)
            if not body.startswith(" "):
                raise LayoutError("unexpected dump line: %r" % ln)
            body = body[1:]
            indent = len(body) - len(body.lstrip(" "))
            if indent % 2:
                raise LayoutError("odd indentation in dump line: %r" % ln)
            nodes.append(Node(indent // 2, int(lm.group(1)),
                              None if lm.group(2) is None else int(lm.group(2)),
                              None if lm.group(3) is None else int(lm.group(3)),
                              body.strip()))
        if size is None:
            raise LayoutError("no sizeof line for %s" % name)
        # Build the tree (depth 1 is the wrapper's single member "v").
        root = Node(0, 0, None, None, head)
        stack = [root]
        for node in nodes:
            while stack and stack[-1].depth >= node.depth:
                stack.pop()
            if not stack or stack[-1].depth != node.depth - 1:
                raise LayoutError("bad nesting in dump of %s" % name)
            stack[-1].children.append(node)
            stack.append(node)
        if len(root.children) != 1 or not root.children[0].text.endswith(" v"):
            raise LayoutError("wrapper for %s does not have exactly one member v" % name)
        if name in result:
            raise LayoutError("duplicate dump of wrapper %s" % name)
        result[name] = (root.children[0], size, align)
    return result


def split_decl(text: str) -> tuple[str, str]:
    typ, _, name = text.rpartition(" ")
    if not typ or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise LayoutError("cannot split declaration %r" % text)
    return typ.strip(), name


def collect_members(children: list[Node], prefix: str, out: dict) -> None:
    for node in children:
        text = node.text
        if node.children:
            if text.endswith(")"):           # anonymous struct/union member
                if node.bit_begin is not None:
                    raise LayoutError("bit-field record? %r" % text)
                collect_members(node.children, prefix, out)
                continue
            typ, name = split_decl(text)
            path = prefix + name
            out[path] = {"offset": node.offset, "type": typ, "bitfield": False}
            if typ not in LEAF_RECORD_TYPES:
                collect_members(node.children, path + ".", out)
            continue
        typ, name = split_decl(text)
        path = prefix + name
        if path in out:
            raise LayoutError("duplicate member path %s" % path)
        if node.bit_begin is None:
            out[path] = {"offset": node.offset, "type": typ, "bitfield": False}
        else:
            out[path] = {"offset": node.offset, "type": typ, "bitfield": True,
                         "bit_abs": node.offset * 8 + node.bit_begin,
                         "bit_width": node.bit_end - node.bit_begin + 1}


def layout_for(arch: str, triple: str, vname: str, value: int, workdir: str) -> dict:
    tag = "%s_%s" % (arch, vname)
    src = os.path.join(workdir, "dump_%s.c" % tag)
    with open(src, "w") as f:
        f.write(dump_source())
    dump = run(clang_base(triple, value) + ["-fsyntax-only", "-Xclang", "-fdump-record-layouts",
                                            src], workdir)
    wrappers = parse_dump(dump)

    # Gather member information and the list of compiler queries.
    queries: list[str] = []
    plan = {}
    for name in TYPES:
        if name not in wrappers:
            continue
        vnode, size, align = wrappers[name]
        members: dict = {}
        if vnode.children:
            collect_members(vnode.children, "", members)
        q0 = len(queries)
        queries.append("sizeof(%s)" % name)
        queries.append("_Alignof(%s)" % name)
        for path, info in members.items():
            if info["bitfield"]:
                info["q_size"] = len(queries)
                queries.append("sizeof(%s)" % info["type"])
            else:
                info["q_size"] = len(queries)
                queries.append("sizeof(((%s *)0)->%s)" % (name, path))
                info["q_off"] = len(queries)
                queries.append("__builtin_offsetof(%s, %s)" % (name, path))
        plan[name] = (size, align, members, q0)

    isrc = os.path.join(workdir, "ir_%s.c" % tag)
    with open(isrc, "w") as f:
        f.write('#include "%s"\n' % HEADER)
        f.write("unsigned long long __ddi_vals[%d] = {\n" % len(queries))
        for q in queries:
            f.write("  (unsigned long long)(%s),\n" % q)
        f.write("};\n")
    ir = run(clang_base(triple, value) + ["-S", "-emit-llvm", "-O0", "-o", "-", isrc], workdir)
    m = IR_ARRAY_RE.search(ir)
    if not m:
        raise LayoutError("could not find __ddi_vals in IR for %s" % tag)
    count = int(m.group(1))
    if m.group(2) == "zeroinitializer":
        vals = [0] * count
    else:
        vals = [int(tok.split()[1]) for tok in m.group(3).split(",")]
    if len(vals) != len(queries) or count != len(queries):
        raise LayoutError("IR value count mismatch for %s" % tag)

    layouts = {}
    for name, (size, align, members, q0) in plan.items():
        if vals[q0] != size or vals[q0 + 1] != align:
            raise LayoutError("%s %s %s: dump sizeof/align %d/%d != compiler %d/%d"
                              % (arch, vname, name, size, align, vals[q0], vals[q0 + 1]))
        out_members = {}
        for path, info in members.items():
            msize = vals[info["q_size"]]
            if info["bitfield"]:
                unit_bits = msize * 8
                unit = (info["bit_abs"] // unit_bits) * msize
                bit_offset = info["bit_abs"] - unit * 8
                if bit_offset + info["bit_width"] > unit_bits:
                    raise LayoutError("%s %s %s.%s: bit-field straddles its storage unit"
                                      % (arch, vname, name, path))
                out_members[path] = {"offset": unit, "size": msize,
                                     "bit_offset": bit_offset, "bit_width": info["bit_width"]}
            else:
                off = vals[info["q_off"]]
                if off != info["offset"]:
                    raise LayoutError("%s %s %s.%s: dump offset %d != offsetof %d"
                                      % (arch, vname, name, path, info["offset"], off))
                if off + msize > size:
                    raise LayoutError("%s %s %s.%s: member exceeds struct" % (arch, vname, name, path))
                out_members[path] = {"offset": info["offset"], "size": msize}
        layouts[name] = {"size": size, "align": align, "members": out_members}
    return layouts


def compiler_version() -> str:
    return run([CLANG, "--version"], REPO).splitlines()[0].strip()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Write the MSVC layout tables of the DDI structures.")
    parser.add_argument("--output", default=OUTPUT, help="where to write the JSON (default: %(default)s)")
    output = parser.parse_args(argv).output
    version_line = compiler_version()
    jobs = [(arch, triple, vname, value) for arch, triple in TARGETS for vname, value in VERSIONS]
    results = {}
    with tempfile.TemporaryDirectory(prefix="msvc_layouts_") as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
            futs = {pool.submit(layout_for, a, t, v, val, workdir): (a, v) for a, t, v, val in jobs}
            for fut in concurrent.futures.as_completed(futs):
                results[futs[fut]] = fut.result()

    layouts_out: dict = {}
    for arch, _ in TARGETS:
        per_type: dict = {}
        for name in TYPES:
            entries = []
            for vname, _ in VERSIONS:
                lay = results[(arch, vname)].get(name)
                if lay is None:
                    continue
                if entries and entries[-1]["_layout"] == lay and entries[-1]["_last"] == vname_prev(vname):
                    entries[-1]["versions"].append(vname)
                    entries[-1]["_last"] = vname
                else:
                    entries.append({"versions": [vname], "_layout": lay, "_last": vname})
            if entries:
                per_type[name] = [dict(versions=e["versions"], **e["_layout"]) for e in entries]
        layouts_out[arch] = per_type

    doc = {
        "generator": GENERATOR,
        "compiler": version_line,
        "versions": {v: val for v, val in VERSIONS},
        "layouts": layouts_out,
    }
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    with open(output, "w", newline="\n") as f:
        f.write(text)

    # Short summary: size at the first and last version, and the versions
    # where a new layout entry starts.
    print("%s: wrote %s (%s)" % (GENERATOR, os.path.relpath(output, REPO), version_line))
    last, first = VERSIONS[-1][0], VERSIONS[0][0]
    for name in TYPES:
        cols = []
        for arch, _ in TARGETS:
            ents = layouts_out[arch].get(name, [])
            breaks = [e["versions"][0] for e in ents]
            at_last = next((e["size"] for e in ents if last in e["versions"]), None)
            at_first = next((e["size"] for e in ents if first in e["versions"]), None)
            cols.append("%s size %s->%s breaks [%s]" % (arch, at_first if at_first is not None else "-",
                                           at_last if at_last is not None else "-",
                                           ",".join(breaks)))
        print("  %-40s %s" % (name, " | ".join(cols)))
    return 0


_VORDER = {v: i for i, (v, _) in enumerate(VERSIONS)}


def vname_prev(vname: str) -> str | None:
    i = _VORDER[vname]
    return VERSIONS[i - 1][0] if i else None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LayoutError as exc:
        print("gen_msvc_layouts: ERROR: %s" % exc, file=sys.stderr)
        sys.exit(1)
