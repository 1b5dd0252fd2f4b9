"""The bit texts of the flag types the OS fills in and hands to the driver (its scheduler VidSch,
its memory manager VidMm, or the runtime's request passed on by the OS): who sets each bit and
when, and what the kernel-mode driver must do with it. Read through :mod:`.flagbits`
(``wddmsim layout NAME --explain``, docs/ddi.md "Flag bits").

Spec: the reference page each flag type cites (its ``Record.source``), restated in the project's
words; rule numbers are those of docs/rules.md.
"""

from __future__ import annotations

from .flagtext import BitText as T
from .flagtext import FlagType

_NO_BITS = "No bit is defined yet: the whole value is reserved."

OS_FILLED: dict[str, FlagType] = {
    "D3DDDI_CREATEHWCONTEXTFLAGS": FlagType(
        "os", "The OS, in DXGKARG_CREATEHWCONTEXT.Flags when it calls DxgkDdiCreateHwContext. " + _NO_BITS, {}),
    "D3DDDI_CREATEHWQUEUEFLAGS": FlagType(
        "os", "The user-mode driver asks for it when it creates a hardware queue; the OS passes it on in "
              "DXGKARG_CREATEHWQUEUE.Flags to DxgkDdiCreateHwQueue.", {
            "DisableGpuTimeout": T(
                "Accept buffers that run longer than the 2 s timeout: the OS does not time this queue out, so no "
                "TDR ends its work.", (107, 113),
                sets="A queue whose buffers may legitimately run for seconds (long compute work)."),
            "NoBroadcastSignal": T(
                "No duty of its own: the flag tells the driver the queue is left out of broadcast fence signals.",
                sets="The runtime, from Windows 10 2004, for a queue that never signals broadcast fences."),
            "NoBroadcastWait": T(
                "No duty of its own: the flag tells the driver the queue is never held behind broadcast waits.",
                sets="The runtime, from Windows 10 2004, for a queue that never waits on broadcast fences."),
            "NoKmdAccess": T(
                "No duty of its own: the bit is documented for system use only.",
                sets="Only the system, never an application's driver."),
            "UserModeSubmission": T(
                "Set the queue up for submission through its doorbell; the kernel path (DxgkDdiSubmitCommandToHwQueue) "
                "is not used for it, and the UMD publishes its last queued progress value before it rings the "
                "doorbell.", (106,),
                sets="The user-mode driver (WDDM 3.1 and later) for a queue it feeds itself, on a node that declared "
                     "UserModeSubmission."),
            "NativeProgressFence": T(
                "Take the progress fence from hHwQueueNativeProgressFence, a native fence created earlier with "
                "DxgkDdiCreateNativeFence, instead of hHwQueueProgressFence.",
                sets="The runtime (WDDM 3.2) when the queue's progress fence is a native fence."),
            "TestQueue": T(
                "Create it as any queue; the OS runs its kernel-mode feature tests on it.",
                sets="The OS's kernel-mode feature tests (WDDM 3.2), never an application."),
        }),
    "DXGKARG_CREATENATIVEFENCE_FLAGS": FlagType(
        "os", "The OS, in DXGKARG_CREATENATIVEFENCE.Flags when it calls DxgkDdiCreateNativeFence (WDDM 3.1). "
              + _NO_BITS, {}),
    "DXGKARG_UPDATEMONITOREDVALUES_FLAGS": FlagType(
        "os", "The OS, in DXGKARG_UPDATEMONITOREDVALUES.Flags when it calls DxgkDdiUpdateMonitoredValues (WDDM 3.1). "
              + _NO_BITS, {}),
    "DXGK_DESTROYNATIVEFENCE_FLAGS": FlagType(
        "os", "The OS, in DXGKARG_DESTROYNATIVEFENCE.Flags when it calls DxgkDdiDestroyNativeFence (WDDM 3.1). "
              + _NO_BITS, {}),
    "DXGK_PREEMPTCOMMANDFLAGS": FlagType(
        "os", "The OS, in DXGKARG_PREEMPTCOMMAND.Flags with every DxgkDdiPreemptCommand. " + _NO_BITS, {},
        reserved_rules=(59,)),
    "DXGK_ALLOCATIONLIST": FlagType(
        "os", "The OS, in each element of the allocation list it gives DxgkDdiRender, DxgkDdiPresent and "
              "DxgkDdiPatch (built from the user-mode driver's list).", {
            "WriteOperation": T(
                "Read it only; the OS uses it to order later users of the allocation after this write.",
                sets="The OS, for an allocation the DMA buffer writes (the user-mode driver said so)."),
            "SegmentId": T(
                "With a nonzero SegmentId, write the allocation's address into the DMA buffer already in "
                "DxgkDdiRender (the OS may then skip DxgkDdiPatch), and still list the reference in the output "
                "patch-location list: the allocation can move before the buffer runs.",
                sets="The OS: the segment the allocation was in when the buffer was built, 0 when it was in none."),
        }),
    "DXGK_CREATECONTEXTFLAGS": FlagType(
        "os", "The OS, in DXGKARG_CREATECONTEXT.Flags when it calls DxgkDdiCreateContext.", {
            "SystemContext": T(
                "Create the context on the paging node: it carries VidMm's paging buffers.", (78,),
                sets="The OS, for the paging engine's system context only."),
            "GdiContext": T(
                "Report an allocation list of 256 entries (DXGK_ALLOCATION_LIST_SIZE_GDICONTEXT) in the context "
                "information it returns.", (79,),
                sets="The OS (Windows 7 and later), for the context that carries GDI hardware acceleration."),
            "VirtualAddressing": T(
                "Create a context whose DMA buffers run in the process's GPU virtual address space "
                "(DxgkDdiSubmitCommandVirtual).",
                sets="The OS (WDDM 2.0 and later), for a context of a device that submits by GPU virtual address."),
            "SystemProtectedContext": T(
                "Let this context reach allocations outside the video protected region it changes.",
                sets="The OS (WDDM 2.1 and later), for its own context that changes the video protected region."),
            "HwQueueSupported": T(
                "Prepare the context to take hardware queues (DxgkDdiCreateHwQueue).",
                sets="The OS (WDDM 2.3 and later), for a context of the hardware-scheduling model."),
            "TestContext": T(
                "Create it as any context; the OS builds and runs test command buffers on it.",
                sets="The OS's kernel-mode feature tests (WDDM 3.2), never an application."),
        }),
    "DXGK_CREATEDEVICEFLAGS": FlagType(
        "os", "The OS, in DXGKARG_CREATEDEVICE.Flags when it calls DxgkDdiCreateDevice.", {
            "SystemDevice": T(
                "Create the device as any other; it belongs to the OS, not to an application.",
                sets="The OS, for its own system device."),
            "GdiDevice": T(
                "Create the device that GDI hardware acceleration renders through (DxgkDdiRenderKm).",
                sets="The OS (Windows 7 and later), for GDI's device."),
        }),
    "DXGK_CREATEPROCESSFLAGS": FlagType(
        "os", "The OS, in DXGKARG_CREATEPROCESS.Flags when it calls DxgkDdiCreateProcess (WDDM 2.0).", {
            "SystemProcess": T("Create the per-process object as for any process; the process is the OS's own.",
                               sets="The OS, for its system process."),
            "GdiProcess": T("Create the per-process object as for any process; the process is GDI's.",
                            sets="The OS, for the GDI process."),
            "VirtualMachineProcess": T(
                "Treat the process as a virtual machine's: its work comes through GPU paravirtualization.",
                sets="The OS (WDDM 2.2 and later), for a process that stands for a virtual machine."),
            "VirtualMachineWorkerProcess": T(
                "Expect no rendering from it: a worker process of a virtual machine submits no GPU work.",
                sets="The OS (WDDM 2.4 and later), for a virtual machine's worker process."),
            "SessionIsolatedContainer": T(
                "Treat the process as isolated from the host session (a container).",
                sets="The OS (WDDM 2.5 and later), for a process that runs in a session-isolated container."),
        }),
    "DXGK_DISCARDCONTENTFLAGS": FlagType(
        "os", "VidMm, in DiscardContent.Flags of a DXGK_OPERATION_DISCARD_CONTENT paging operation "
              "(DxgkDdiBuildPagingBuffer).", {
            "AllocationIsIdle": T(
                "Discard without waiting for the GPU; without the bit the driver may answer "
                "STATUS_GRAPHICS_ALLOCATION_BUSY, and VidMm calls again once the allocation is idle.", (72,),
                sets="VidMm, when the GPU is known to be done with the allocation (as on the call after "
                     "STATUS_GRAPHICS_ALLOCATION_BUSY).",
                means="The GPU no longer uses the allocation."),
        }),
    "DXGK_MAPAPERTUREFLAGS": FlagType(
        "os", "VidMm, in MapApertureSegment.Flags of a DXGK_OPERATION_MAP_APERTURE_SEGMENT paging operation.", {
            "CacheCoherent": T(
                "Program the aperture so the GPU's accesses through it stay coherent with the CPU caches.",
                sets="VidMm, when the pages are cacheable and the segment declared CacheCoherent."),
        }),
    "DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS": FlagType(
        "os", "The OS, in the post-composition transform of a multiplane-overlay flip or support check "
              "(WDDM 2.1).", {
            "VerticalFlip": T("Mirror the composed image of all planes top to bottom before scan-out.",
                              sets="The OS, when the composed image must be mirrored vertically."),
            "HorizontalFlip": T("Mirror the composed image left to right; with VerticalFlip, rotate it by 180 degrees.",
                                sets="The OS, when the composed image must be mirrored horizontally."),
        }),
    "DXGK_PATCHFLAGS": FlagType(
        "os", "The OS, in DXGKARG_PATCH.Flags with every DxgkDdiPatch: the same kind of buffer its "
              "DXGKARG_SUBMITCOMMAND.Flags will name.", {
            "Paging": T(
                "Patch without lists: a paging patch has no allocation list and no patch-location list, and it "
                "must not change the buffer's size.", (26, 27),
                sets="VidMm, for a paging buffer.", means="The DMA buffer is a paging buffer."),
            "Present": T("Patch it as any buffer; it holds a present.",
                         sets="The OS, for a buffer DxgkDdiPresent built.",
                         means="The DMA buffer holds a present built by DxgkDdiPresent."),
            "RedirectedPresent": T("Patch it as any buffer; it holds a redirected present.",
                                   sets="The OS, for a present into a DWM-owned shared allocation.",
                                   means="A present DxgkDdiRender built into a DWM-owned shared allocation."),
            "NullRendering": T(
                "Patch it as usual; it will be submitted with NullRendering, fenced but not run.",
                sets="Only for performance investigation, never in normal operation.",
                means="The buffer is to be submitted but not executed."),
        }, reserved_rules=(31,)),
    "DXGK_PLANE_SPECIFIC_INPUT_FLAGS": FlagType(
        "os", "The OS, for each plane of a multiplane-overlay flip "
              "(DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3, WDDM 2.1).", {
            "Enabled": T("Show the plane with its new attributes; 0 turns the plane off.",
                         sets="The OS, for every plane that is to be shown."),
            "FlipImmediate": T(
                "Flip the plane at once, without waiting for the vsync.",
                sets="The OS, for a plane that is to flip immediately."),
            "FlipOnNextVSync": T("Latch the plane's new surface at the next vsync and report the flip then.",
                                 sets="The OS, for a plane that flips with the vsync."),
            "SharedPrimaryTransition": T(
                "Switch the plane to or from the shared managed primary as the flip asks.",
                sets="The OS, for a flip into or out of a shared managed primary allocation."),
            "IndependentFlipExclusive": T(
                "Scan the buffer out as the only reader: the DWM composes nothing into it.",
                sets="The OS, in independent-flip exclusive mode."),
            "FlipImmediateNoTearing": T(
                "Flip as soon as possible but only in the blanking interval, so the frame does not tear (variable "
                "refresh).",
                sets="The OS (WDDM 2.6 and later), for a variable-refresh flip."),
        }),
    "DXGK_PRESENTFLAGS": FlagType(
        "os", "The OS, in DXGKARG_PRESENT.Flags when it calls DxgkDdiPresent to build a present's DMA buffer.", {
            "Blt": T("Build a copy from SrcRect to DstRect, within the sub-rectangles the OS clipped.",
                     sets="The OS, for a present that copies."),
            "ColorFill": T("Fill DstRect with Color; it never comes with SrcColorKey or DstColorKey.", (89,),
                           sets="The OS, for a present that fills."),
            "Flip": T(
                "Build a flip of the source allocation (no destination, no copy). With FlipOnVSyncMmIo the OS passes "
                "no DMA buffer and later flips through DxgkDdiSetVidPnSourceAddress.", (84,),
                sets="The OS, for a present that flips."),
            "FlipWithNoWait": T(
                "Build the flip so that later commands do not stall until it takes effect.", (87,),
                sets="The OS, only to a driver that declared FlipCaps.FlipOnVSyncWithNoWait."),
            "SrcColorKey": T("Copy only source pixels that differ from Color; never with ColorFill or DstColorKey.",
                             (89,), sets="The OS, for a source color-keyed blt."),
            "DstColorKey": T("Write only destination pixels equal to Color; never with ColorFill or SrcColorKey.",
                             (89,), sets="The OS, for a destination color-keyed blt."),
            "LinearToSrgb": T("Convert the linear source to sRGB in the copy.",
                              sets="The OS, when the source is linear and the destination sRGB."),
            "Rotate": T("Rotate the copy to the path's current orientation.",
                        sets="The OS, when the path is rotated."),
            "FlipStereo": T("Flip both images of the stereo allocation.",
                            sets="The OS (Windows 8 and later), for a stereo flip."),
            "FlipStereoTemporaryMono": T("Build the stereo frame from the left image only, shown to both eyes.",
                                         sets="The OS (Windows 8 and later), while a stereo app shows mono."),
            "FlipStereoPreferRight": T("Show the right image when a stereo primary is cloned to a mono display.",
                                       sets="The OS (Windows 8 and later), for such a clone."),
            "BltStereoUseRight": T("Copy from the right image of the stereo source.",
                                   sets="The OS (Windows 8 and later), for a blt from the right image."),
            "FlipWithMultiPlaneOverlay": T(
                "Flip the overlay plane pPresentMultiPlaneOverlayInfo describes.",
                sets="The OS, for a multiplane-overlay flip through DxgkDdiPresent."),
            "RedirectedFlip": T(
                "Build it as a flip of the redirected surface the present names.",
                sets="The OS (WDDM 2.0 and later), for a redirected flip.",
                means="A redirected flip."),
        }),
    "DXGK_PTE": FlagType(
        "os", "VidMm, in the hardware-neutral entries (pPageTableEntries) of a DXGK_OPERATION_UPDATE_PAGE_TABLE "
              "paging operation (GpuMmu, WDDM 2.0): the driver writes each one in its GPU's own format.", {
            "Valid": T("Write an entry the GPU may use to reach memory.",
                       sets="VidMm, for an entry that maps memory."),
            "Zero": T("Make reads through the entry return zero (tiled resources).",
                      sets="VidMm, with Valid, for an unmapped tile (only where the GPU declared ZeroInPteSupported)."),
            "CacheCoherent": T("Map the page so GPU accesses snoop the CPU caches.",
                               sets="VidMm, for I/O-coherent memory (only with CacheCoherentMemorySupported)."),
            "ReadOnly": T("Refuse GPU writes through the entry.",
                          sets="VidMm, for read-only pages (only with ReadOnlyMemorySupported)."),
            "NoExecute": T("Refuse to fetch commands through the entry.",
                           sets="VidMm, for data pages (only with NoExecuteMemorySupported)."),
            "Segment": T("Point the entry into that segment (0: system memory) at the entry's page address.",
                         sets="VidMm, for every valid entry."),
            "LargePage": T("Map the whole range below the entry directly, without a lower-level table.",
                           sets="VidMm, at a non-leaf level (only with LargePageSupported)."),
            "PhysicalAdapterIndex": T("Reach the memory of that linked adapter.",
                                      sets="VidMm, on a linked adapter, for memory of another GPU of the link."),
            "PageTablePageSize": T("Point at a leaf table of that page size (a DXGK_PTE_PAGE_SIZE).",
                                   sets="VidMm, in level-1 entries."),
            "SystemReserved0": T("Ignore it: the bit belongs to the OS.",
                                 sets="The OS, for its own use."),
        }),
    "DXGK_QUERYADAPTERINFOFLAGS": FlagType(
        "os", "The OS, in DXGKARG_QUERYADAPTERINFO.Flags when it calls DxgkDdiQueryAdapterInfo (WDDM 2.2).", {
            "VirtualMachineData": T(
                "Answer for the virtual machine: the query and its private data come from a paravirtualized guest.",
                sets="The OS, for a query a virtual machine's driver made through GPU paravirtualization."),
            "SecureVirtualMachine": T(
                "Answer as for VirtualMachineData; the guest runs as a secure virtual machine.",
                sets="The OS (WDDM 2.4 and later), with VirtualMachineData, for a secure virtual machine."),
        }),
    "DXGK_SETVIDPNSOURCEADDRESS_FLAGS": FlagType(
        "os", "The OS, in DXGKARG_SETVIDPNSOURCEADDRESS.Flags when it calls DxgkDdiSetVidPnSourceAddress: a "
              "mode change, or an MMIO flip at device IRQL.", {
            "ModeChange": T(
                "Program the primary for the new mode; ContextCount is 0 and Context[] means nothing.", (83,),
                sets="The OS, when the call comes with a mode change rather than a flip.",
                means="The call sets the primary for a mode change, not a flip."),
            "FlipImmediate": T(
                "Program the address at once, without waiting for a vsync (a driver with FlipImmediateMmIo; also "
                "the secondary of a clone).", (84,),
                sets="The OS, for an immediate MMIO flip."),
            "FlipOnNextVSync": T(
                "Program the address so it is scanned out from the next vsync, then report that vsync "
                "(DXGK_INTERRUPT_CRTC_VSYNC with the address) and call DxgkCbNotifyDpc.", (84,),
                sets="The OS, for an MMIO flip of a driver with FlipOnVSyncMmIo.",
                means="Flip at the next vertical sync."),
            "FlipStereo": T(
                "Flip both images of the stereo primary; with FlipOnNextVSync the left image shows at the next vsync "
                "and the right one at the vsync after.", (85,),
                sets="The OS (Windows 8 and later), never together with FlipStereoTemporaryMono.",
                means="Flip a stereo primary: both of its images."),
            "FlipStereoTemporaryMono": T(
                "Show the left image to both eyes.", (85,),
                sets="The OS (Windows 8 and later), never together with FlipStereo or FlipStereoPreferRight.",
                means="Scan a stereo primary out as mono, from its left image."),
            "FlipStereoPreferRight": T(
                "Show the right image of the stereo primary on the mono display.", (85,),
                sets="The OS (Windows 8 and later), for a stereo primary cloned to a mono display; never together "
                     "with FlipStereoTemporaryMono.",
                means="Clone a stereo primary to a mono display from its right image."),
            "SharedPrimaryTransition": T(
                "Switch to or from the shared primary; this is the only call for which the driver may answer "
                "STATUS_INVALID_PARAMETER (Windows 8 and later).", (86,),
                sets="The OS (Windows 8 and later), for a flip into or out of a shared managed primary.",
                means="The flip moves to or from a shared managed primary allocation."),
            "IndependentFlipExclusive": T(
                "Scan the surface out as its only reader: the DWM composes nothing into it.",
                sets="The OS (WDDM 2.0 and later), in independent-flip exclusive mode.",
                means="Independent-flip exclusive mode: only the display reads the surface."),
            "MoveFlip": T(
                "Program the flip as the other bits ask; this one marks it as a move flip.",
                sets="The OS (WDDM 2.1 and later), for a move flip.",
                means="A move flip."),
        }),
    "DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS": FlagType(
        "os", "The OS, call-wide, in DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 (WDDM 2.1).", {
            "FlipStereo": T("Flip both images; the right one a vsync after the left.",
                            sets="The OS, for a stereo flip."),
            "FlipStereoTemporaryMono": T("Show the left image to both eyes.",
                                         sets="The OS, while a stereo application shows mono."),
            "FlipStereoPreferRight": T("Show the right image on the mono display.",
                                       sets="The OS, for a stereo primary cloned to a mono display."),
            "RetryAtLowerIrql": T(
                "Do now, at PASSIVE_LEVEL, the work the first call could not do at raised IRQL.",
                sets="The OS, on the second call after the driver answered STATUS_RETRY with PrePresentNeeded."),
        }),
    "DXGK_SUBMITCOMMANDFLAGS": FlagType(
        "os", "The OS, in the Flags of every DXGKARG_SUBMITCOMMAND and DXGKARG_SUBMITCOMMANDVIRTUAL it hands the "
              "driver, and of DXGKARG_SUBMITCOMMANDTOHWQUEUE from WDDM 2.4.", {
            "Paging": T(
                "Submit it as any buffer; hDevice/hContext may be NULL (NodeOrdinal names the node) and the "
                "private-data range may start past 0.", (4, 12, 15, 74),
                sets="VidMm, on each of its paging buffers (every partial one too), and on a ContextSwitch "
                     "submission made while a paging operation ran."),
            "Present": T(
                "Run it as any buffer; on a hardware queue the user-mode driver's own buffers never carry it.", (94,),
                sets="The OS, for a buffer DxgkDdiPresent built; on a hardware queue, for a DxgkDdiPresentToHwQueue "
                     "buffer."),
            "RedirectedPresent": T(
                "Run it as any buffer.",
                sets="The OS, for a present that DxgkDdiRender built into a DWM-owned shared allocation."),
            "NullRendering": T(
                "Put the buffer in the ring and write its fence at its end as usual, but do not execute it.", (14,),
                sets="Only for performance investigation (an infinitely fast engine), never in normal operation."),
            "Flip": T(
                "Latch the flip at a vsync FlipInterval allows; VidPnSourceId and FlipInterval are valid only with "
                "it.", (9,),
                sets="The OS, for a buffer that holds a flip (the DMA flip path)."),
            "FlipWithNoWait": T(
                "Queue the flip for the vsync and let later commands run meanwhile; VidPnSourceId is valid, "
                "FlipInterval is not.", (9, 87),
                sets="The OS, for a flip that must not stall the pipe, only to a driver that declared "
                     "FlipCaps.FlipOnVSyncWithNoWait."),
            "ContextSwitch": T(
                "Switch the node from the context it last ran to the null context; the range is empty, and Paging "
                "is set exactly when a paging operation was running.", (11, 12, 15),
                sets="The OS (Windows 8 and later), as a zero-length submission before it moves or evicts memory of "
                     "the context running on the node."),
            "Resubmission": T(
                "Run the preempted packet again; it comes under a new fence id (a paging packet keeps its own).",
                (13, 62),
                sets="The OS (WDDM 2.0 and later), when it submits again a packet a preemption took off the "
                     "hardware; 0 on a first submission and always 0 for a WDDM 1.x driver."),
            "VirtualMachineData": T(
                "No duty of its own: the flag tells the driver the work is a virtual machine's.",
                sets="The OS (WDDM 2.2 and later), for a submission from a paravirtualized adapter."),
        }, reserved_rules=(10,)),
    "DXGK_TRANSFERFLAGS": FlagType(
        "os", "VidMm, in Transfer.Flags of a DXGK_OPERATION_TRANSFER paging operation (DxgkDdiBuildPagingBuffer).", {
            "Swizzle": T("Convert the linear data into the allocation's swizzled (tiled) layout while copying.",
                         sets="VidMm, for a transfer into a segment where the allocation is swizzled.",
                         means="Swizzle the data on the way to the destination."),
            "Unswizzle": T("Convert the swizzled data into a linear layout while copying.",
                           sets="VidMm, for a transfer out of a segment where the allocation is swizzled.",
                           means="Unswizzle the data on the way to the destination."),
            "AllocationIsIdle": T(
                "Copy without waiting for the GPU; without the bit the driver may answer "
                "STATUS_GRAPHICS_ALLOCATION_BUSY, and VidMm calls again once the allocation is idle.", (72,),
                sets="VidMm, when the GPU is known to be done with the allocation (as on the call after "
                     "STATUS_GRAPHICS_ALLOCATION_BUSY)."),
            "TransferStart": T(
                "Begin the allocation's move; a retried piece carries it again, with the same TransferOffset.", (71,),
                sets="VidMm, on the first piece of a move (with TransferEnd on a move done in one piece)."),
            "TransferEnd": T(
                "Finish the allocation's move; the next TransferStart comes only after it.", (71,),
                sets="VidMm, on the last piece of a move."),
        }),
    "DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS": FlagType(
        "os", "The OS, with each batch it passes DxgkDdiUpdateCurrentValuesFromCpu (native fences, WDDM 3.1).", {
            "AlwaysSignaled": T(
                "Let every GPU wait on the fences pass at once and ignore GPU signals of them.",
                sets="The OS, when the device that owns the fences is in error."),
            "NotificationOnly": T(
                "Do not write the values; only release the GPU waiters the current values already satisfy.",
                sets="The OS, when it has already written CurrentValue itself."),
        }),
    "DXGK_UPDATEPAGETABLEFLAGS": FlagType(
        "os", "VidMm, in UpdatePageTable.Flags of a DXGK_OPERATION_UPDATE_PAGE_TABLE paging operation (GpuMmu, "
              "WDDM 2.0).", {
            "Repeat": T("Write the one entry of pPageTableEntries into every slot the operation updates.",
                        sets="VidMm, when every updated slot takes the same entry."),
            "InitialUpdate": T("Write the entries as asked; the table holds nothing valid before them.",
                               sets="VidMm, on the first update after the table was made resident."),
            "NotifyEviction": T("Write the entries as asked; the bit tells the driver the table is about to go.",
                                sets="VidMm, just before it evicts the page table."),
            "Use64KBPages": T("Write the entries as pointers to page tables of 64 KB pages.",
                              sets="VidMm, for tables whose leaf pages are 64 KB."),
            "NativeFence": T("Map the native GPU fence memory the entries describe.",
                             sets="VidMm (WDDM 3.1 and later), for native fence mappings."),
        }),
}
