"""``wddmsim demo``: what crosses the DDI for one render submission.

Until the event kernel, GPU and scheduler exist, the demo walks one packet's trip through the
structures the OS and the driver exchange: the ``DXGKARG_SUBMITCOMMAND`` the scheduler builds for a
MultiEngineAware driver, the ``DXGKARGCB_NOTIFY_INTERRUPT_DATA`` the ISR reports when the fence
lands, and what the contract checker makes of each, including one submission that breaks a rule.
Every value shown is computed: built with :func:`wddmsim.ddi.codec.new`, encoded to the MSVC bytes
and decoded back.

Spec: seed 000 (DXGKARG_SUBMITCOMMAND members), ddi-facts.md sections 1, 2.2, 4.2.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .ddi import codec, rules
from .ddi.enums import DXGK_INTERRUPT_TYPE
from .ddi.registry import RECORDS
from .ddi.versions import LATEST

#: The packet the demo follows: a 64 KiB DMA buffer of a 3D context, the first 0x1A40 bytes of it
#: submitted, sitting in aperture segment 2 at 0x10_0000 (segment base 0xE000_0000).
PACKET = {
    "hContext": 0xFFFF_A001_2000_0040,
    "DmaBufferSegmentId": 2,
    "DmaBufferPhysicalAddress": 0xE000_0000 + 0x10_0000,
    "DmaBufferSize": 0x1_0000,
    "DmaBufferSubmissionStartOffset": 0,
    "DmaBufferSubmissionEndOffset": 0x1A40,
    "pDmaBufferPrivateData": 0xFFFF_A001_3000_0000,
    "DmaBufferPrivateDataSize": 0x100,
    "DmaBufferPrivateDataSubmissionStartOffset": 0,
    "DmaBufferPrivateDataSubmissionEndOffset": 0x100,
    "SubmissionFenceId": 17,
    "NodeOrdinal": 0,
}


def _hex(data: bytes) -> str:
    return " ".join(data[i : i + 8].hex(" ") for i in range(0, len(data), 8))


def _show(con: Console, title: str, name: str, obj, arch: str, facts: rules.Facts) -> None:
    rec = RECORDS[name]
    data = codec.to_bytes(obj)
    con.rule(f"[bold]{title}[/bold]")
    con.print(f"{name} ({arch}, DDI {LATEST.name}): {len(data)} bytes")
    con.print(f"[dim]{_hex(data)}[/dim]")
    tab = Table(box=None, pad_edge=False, show_edge=False)
    tab.add_column("offset", justify="right")
    tab.add_column("member")
    tab.add_column("value")
    for f in codec.decode(rec, data, arch, LATEST):
        if f.path.rsplit(".", 1)[-1] == "Reserved" and not f.value:
            continue
        tab.add_row(f"+0x{f.offset:03x}", "  " * f.depth + f.path.rsplit(".", 1)[-1], f.text)
    con.print(tab)
    broken = rules.check(name, obj, facts)
    if broken:
        for v in broken:
            con.print(f"[red]verifier:[/red] {v}")
            if v.bugcheck is not None:
                con.print(f"[red]         stops with[/red] {v.bugcheck}")
    else:
        con.print("[green]verifier: no contract rule broken[/green]")


def run_demo(con: Console, arch: str = "x64") -> None:
    """Print the demo to ``con``."""
    facts = rules.Facts(version=LATEST, multi_engine_aware=True, node_count=3, dma_buffer_segment_set=0b100)
    submit = codec.new(RECORDS["DXGKARG_SUBMITCOMMAND"], arch, LATEST, **PACKET)
    con.print(
        "One render packet of a 3D context, as the OS scheduler hands it to DxgkDdiSubmitCommand at "
        "DISPATCH_LEVEL, then as the driver's ISR reports its fence."
    )
    _show(con, "1. DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)", "DXGKARG_SUBMITCOMMAND", submit, arch, facts)

    done = codec.new(RECORDS["DXGKARGCB_NOTIFY_INTERRUPT_DATA"], arch, LATEST,
                     InterruptType=DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED)
    done.DmaCompleted.SubmissionFenceId = PACKET["SubmissionFenceId"]
    done.DmaCompleted.NodeOrdinal = PACKET["NodeOrdinal"]
    facts_isr = rules.Facts(version=LATEST, node_count=3, last_submitted_fence=17, last_completed_fence=16)
    _show(con, "2. DxgkCbNotifyInterrupt(hAdapter, pNotifyInterrupt) from the ISR", "DXGKARGCB_NOTIFY_INTERRUPT_DATA", done, arch, facts_isr)

    bad = codec.new(RECORDS["DXGKARG_SUBMITCOMMAND"], arch, LATEST, **{**PACKET, "DmaBufferPrivateDataSubmissionStartOffset": 0x40})
    _show(con, "3. The same submission with a private-data range that only a paging buffer may have",
          "DXGKARG_SUBMITCOMMAND", bad, arch, facts)
    con.print("\nSee the layout of any structure with [bold]wddmsim layout DXGKARG_SUBMITCOMMAND --arch x86[/bold], "
              "and read bytes back with [bold]wddmsim decode[/bold].")
