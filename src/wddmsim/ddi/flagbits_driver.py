"""The bit texts of the flag types the driver fills in: the capabilities it declares when the
adapter starts, what it answers a call with, what it reports in an interrupt, and what its
user-mode half asks the OS for. For each bit: when the driver sets it and what it commits to by
setting it (what the OS then does or asks). Read through :mod:`.flagbits`
(``wddmsim layout NAME --explain``, docs/ddi.md "Flag bits").

Spec: the reference page each flag type cites (its ``Record.source``), restated in the project's
words; rule numbers are those of docs/rules.md.
"""

from __future__ import annotations

from .flagtext import BitText as T
from .flagtext import FlagType

_CAPS = "The driver, in DXGK_DRIVERCAPS.{0}, answering DxgkDdiQueryAdapterInfo (DXGKQAITYPE_DRIVERCAPS) when the " \
        "adapter starts; the OS reads it once."

#: What every capability bit commits the driver to, in the words the caps' texts share.
_DECLARE = "Set it only if the hardware and driver do it: "

DRIVER_FILLED: dict[str, FlagType] = {
    "D3DDDICB_SIGNALFLAGS": FlagType(
        "driver", "The user-mode driver, with each signal it asks of the OS (pfnSignalSynchronizationObjectCb and "
                  "its later forms).", {
            "SignalAtSubmission": T(
                "Ask for it only when waiters may go as soon as the work before the signal is queued: the OS signals "
                "at submission, not at completion.",
                sets="The user-mode driver, for a signal that need not wait for the GPU work before it."),
            "EnqueueCpuEvent": T(
                "Pass the CPU event to set; the OS sets it once every listed context has processed the signal.",
                sets="The user-mode driver (Windows 8 and later), when a CPU event is to follow the signal."),
            "AllowFenceRewind": T(
                "Ask for it only to move a monitored fence back to an earlier value; without it a fence never goes "
                "down.", (98,),
                sets="The user-mode driver (WDDM 2.0 and later), on a signal that rewinds a monitored fence."),
            "DXGK_SIGNAL_FLAG_INTERNAL0": T("Leave it 0.", sets="Only the OS, internally."),
        }),
    "D3DDDI_PATCHLOCATIONLIST": FlagType(
        "driver", "The user-mode driver in its patch-location list, and the kernel-mode driver in the list "
                  "DxgkDdiRender returns (pPatchLocationListOut).", {
            "SlotId": T(
                "Keep it below DXGK_DRIVERCAPS.MaxAllocationListSlotId, which sizes VidMm's table of slots.",
                sets="The driver, for each place in the DMA buffer that takes an allocation's address.",
                means="The slot the allocation is bound to; a later element with the same slot replaces it."),
        }),
    "D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS": FlagType(
        "driver", "The user-mode driver or runtime that creates a synchronization object "
                  "(D3DDDI_SYNCHRONIZATIONOBJECTINFO2.Flags); the OS enforces them.", {
            "Shared": T("Ask for it to share the object; the OS manages the sharing.", (102,),
                        sets="The creator of an object other devices or processes open."),
            "NtSecuritySharing": T("Ask for it only together with Shared.", (102,),
                                   sets="The creator (Windows 8 and later), to share through an NT handle."),
            "CrossAdapter": T("Ask for it with Shared, for a fence both GPUs of a hybrid system use.",
                              sets="The creator (WDDM 1.3 and later), for a cross-adapter fence."),
            "TopOfPipeline": T(
                "Ask for it on monitored fences only; the signal then says nothing about finished rendering.", (102,),
                sets="The creator (WDDM 2.0 and later) of a monitored fence signalled as the work is fetched."),
            "NoSignal": T(
                "Ask for it on monitored fences only and never with NoWait; this device's signals are then refused "
                "with STATUS_ACCESS_DENIED.", (102,),
                sets="The creator (WDDM 2.0 and later) of a monitored fence this device only waits on."),
            "NoWait": T(
                "Ask for it on monitored fences only and never with NoSignal; this device's waits are then refused "
                "with STATUS_ACCESS_DENIED.", (102,),
                sets="The creator (WDDM 2.0 and later) of a monitored fence this device only signals."),
            "NoSignalMaxValueOnTdr": T(
                "Ask for it to keep the fence's value across a TDR: without it, a reset that takes down a device "
                "able to signal the fence drives the fence to its largest value so its waiters go.", (101,),
                sets="The creator (WDDM 2.0 and later) of a fence whose waiters must not be released by a reset."),
            "NoGPUAccess": T(
                "Signal and wait only through the OS's packets: the fence has no GPU virtual address and is always "
                "64-bit.",
                sets="The creator (WDDM 2.0 and later) of a fence the GPU never writes."),
            "SignalByKmd": T("Ask for it on CPU_NOTIFICATION objects only; the kernel-mode driver may then signal it.",
                             sets="The creator (WDDM 3.0 and later) of a CPU notification the KMD signals."),
            "UnwaitCpuWaitersOnlyOnDestroy": T(
                "No duty of its own: the OS releases the CPU waiters of the shared object only when its last "
                "reference is destroyed.",
                sets="The creator (WDDM 3.2 and later) of a shared object."),
        }),
    "DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS": FlagType(
        "driver", "The driver, in DXGKARGCB_NOTIFY_INTERRUPT_DATA.Flags with each DxgkCbNotifyInterrupt.", {
            "ValidPhysicalAdapterMask": T(
                "Set it whenever the vsync member carries a PhysicalAdapterMask; a NULL mask on a GPU of several "
                "physical adapters is bug check 0x119 (0x6).", (46,),
                sets="The driver, on a vsync report that carries PhysicalAdapterMask."),
            "HsyncFlipCompletion": T(
                "Set it on the report that completes flips the driver returned with HsyncInterruptCompletion.",
                sets="The driver (WDDM 2.2 and later), on a multiplane-overlay vsync report (the OVERLAY2 form) that "
                     "completes Hsync flips."),
            "EvaluateLegacyMonitoredFences": T(
                "Set it so the OS rescans legacy monitored fences as well as the native ones.",
                sets="The driver (WDDM 3.1 and later), on a native-fence report when legacy monitored fences may "
                     "have changed too."),
        }),
    "DXGKCB_NOTIFY_MPO_VSYNC_FLAGS": FlagType(
        "driver", "The driver, in each plane's entry of a multiplane-overlay vsync report (WDDM 2.1).", {
            "PostPresentNeeded": T("Set it when the plane's flip needs DxgkDdiPostMultiPlaneOverlayPresent.",
                                   sets="The driver, for a plane whose flip it must finish after the vsync."),
        }),
    "DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO": FlagType(
        "driver", "The driver, answering DxgkDdiCheckMultiPlaneOverlaySupport (and its later forms).", {
            "FailingPlane": T("Name the first plane that cannot be shown when the answer is 'not supported'.",
                              sets="The driver, when it refuses a configuration."),
            "TryAgain": T("Set it only for a refusal that will pass, so the OS asks again in a vsync or two.",
                          sets="The driver, when the refusal is temporary."),
        }),
    "DXGK_COLORTRANSFORMCAPS": FlagType(
        "driver", _CAPS.format("ColorTransformCaps") + " The OS sends only the gamma and matrix forms declared.", {
            "Gamma_Rgb256x3x16": T(_DECLARE + "the OS may then set 256x3x16 gamma ramps.",
                                   sets="The driver, if the display pipeline takes that ramp."),
            "Gamma_Dxgi1": T(_DECLARE + "the OS may then set DXGI 1 gamma ramps.",
                             sets="The driver, if the display pipeline takes that ramp."),
            "Transform_3x4Matrix": T(_DECLARE + "the OS may then set a 3x4 color matrix.",
                                     sets="The driver (WDDM 2.3 and later), if scan-out applies a 3x4 matrix."),
            "Transform_3x4Matrix_WideColor": T(_DECLARE + "the OS may then use the matrix for wide-color output.",
                                               sets="The driver (WDDM 2.3 and later), with Transform_3x4Matrix."),
            "Transform_3x4Matrix_HighColor": T(_DECLARE + "the OS may then use the matrix for high-color output.",
                                               sets="The driver (WDDM 2.3 and later), with Transform_3x4Matrix."),
            "Transform_Matrix_V2": T(_DECLARE + "the OS may then use the second-generation color transform.",
                                     sets="The driver (WDDM 2.6 and later), if scan-out has that transform."),
        }),
    "DXGK_CONTEXTINFO_CAPS": FlagType(
        "driver", "The driver, in DXGK_CONTEXTINFO.Caps, returned from DxgkDdiCreateContext (WDDM 2.0).", {
            "NoPatchingRequired": T(
                "Set it only if the context's DMA buffers need no patching: they use GPU virtual addresses.",
                sets="The driver, for a context that addresses memory by GPU virtual address.",
                means="The context's DMA buffers need no patching by the OS."),
            "DriverManagesResidency": T(
                "Set it only if the driver keeps resident what the context's buffers use; VidMm then does no "
                "residency work for its submissions.",
                sets="The driver, for a context whose residency it manages itself.",
                means="The driver, not VidMm, keeps the context's allocations resident."),
            "UseIoMmu": T(
                "Set it only for an engine that reaches memory through the IOMMU (the IoMmu model).",
                sets="The driver, for a context on such an engine.",
                means="The context's engine works in the IoMmu model."),
        }),
    "DXGK_DEVICEINFOFLAGS": FlagType(
        "driver", "The driver, in DXGK_DEVICEINFO.Flags, returned from DxgkDdiCreateDevice.", {
            "GuaranteedDmaBufferContract": T(
                "Leave it 0: whatever it says, the OS uses the one DMA-buffer model WDDM has.",
                sets="Nobody today: the bit is obsolete."),
        }),
    "DXGK_ENGINESTATUS": FlagType(
        "driver", "The driver, answering DxgkDdiQueryEngineStatus for one node (per-engine reset, Windows 8).", {
            "Responsive": T(
                "Set it while the node makes progress; 0 tells the OS the node is hung, and the OS goes on to reset "
                "it (DxgkDdiResetEngine).",
                sets="The driver, when the node is making progress."),
        }),
    "DXGK_FAULT_ERROR_CODE": FlagType(
        "driver", "The driver, in FaultErrorCode of a DXGK_INTERRUPT_DMA_PAGE_FAULTED or HWQUEUE_PAGE_FAULTED report "
                  "(WDDM 2.0).", {
            "IsDeviceSpecificCode": T(
                "Clear it and fill GeneralErrorCode with a DXGK_GENERAL_ERROR_CODE, or set it and fill "
                "DeviceSpecificCode with the vendor's code.",
                sets="The driver, for every fault it reports.",
                means="0: GeneralErrorCode holds the cause; 1: DeviceSpecificCode does."),
            "GeneralErrorCode": T(
                "Fill it with the cause (PAGE_FAULT, INVALID_INSTRUCTION, ...) when IsDeviceSpecificCode is 0.",
                sets="The driver, for a cause the general codes name.",
                means="A DXGK_GENERAL_ERROR_CODE."),
            "IsDeviceSpecificCodeReservedBit": T(
                "Set it (it is bit 0, IsDeviceSpecificCode, seen from the vendor arm) with DeviceSpecificCode.",
                sets="The driver, for a vendor-specific cause.",
                means="Bit 0 again, in the vendor arm of the union."),
            "DeviceSpecificCode": T(
                "Fill it with the vendor's own code when IsDeviceSpecificCode is 1.",
                sets="The driver, for a cause no general code names.",
                means="A vendor-defined error code."),
        }),
    "DXGK_FLIPCAPS": FlagType(
        "driver", _CAPS.format("FlipCaps"), {
            "FlipOnVSyncWithNoWait": T(
                _DECLARE + "flips then take effect at the vsync without stalling later work, with the extra "
                "flip-pending registers counted in MaxQueuedFlipOnVSync. Without it the OS never asks for "
                "FlipWithNoWait.", (87,),
                sets="The driver, if queued flips need no pipeline stall."),
            "FlipOnVSyncMmIo": T(
                _DECLARE + "the OS flips through DxgkDdiSetVidPnSourceAddress at device IRQL, DxgkDdiPresent gets "
                "no DMA buffer for a flip, and each vsync is reported with the address now scanned out. A "
                "preemption-aware driver must declare it.", (64, 84),
                sets="The driver, if it flips by MMIO latched at vsync."),
            "FlipInterval": T(
                _DECLARE + "the OS may then ask for flip intervals 2, 3 and 4; immediate and interval-one flips are "
                "always supported.", (88,),
                sets="The driver, if it can wait several vsyncs per flip."),
            "FlipImmediateMmIo": T(
                _DECLARE + "the OS may then flip immediately by MMIO (FlipImmediate).",
                sets="The driver, if an MMIO flip can take effect without waiting for vsync."),
            "FlipIndependent": T(
                "Set it: independent flip is required from WDDM 1.3.",
                sets="The driver (WDDM 1.3 and later)."),
            "DdiPresentForIFlip": T(
                "Set it to have the OS call DxgkDdiPresent for independent-flip presents too.",
                sets="The driver (WDDM 2.0 and later), if it needs to see those presents."),
            "FlipImmediateOnHSync": T(
                _DECLARE + "immediate flips then land between scan lines, without tearing.",
                sets="The driver (WDDM 2.0 and later), if immediate flips wait for the horizontal blank."),
        }),
    "DXGK_GAMMARAMPCAPS": FlagType(
        "driver", _CAPS.format("GammaRampCaps"), {
            "Gamma_Rgb256x3x16": T(_DECLARE + "the OS may then set 256x3x16 gamma ramps.",
                                   sets="The driver, if the display pipeline takes that ramp."),
        }),
    "DXGK_GPUMMUCAPS": FlagType(
        "driver", "The driver, answering DxgkDdiQueryAdapterInfo (DXGKQAITYPE_GPUMMUCAPS) when the adapter starts "
                  "(GpuMmu model, WDDM 2.0); VidMm builds page tables by it.", {
            "ReadOnlyMemorySupported": T(_DECLARE + "VidMm may then map pages read-only (DXGK_PTE.ReadOnly).",
                                         sets="The driver, if the GPU enforces read-only pages."),
            "NoExecuteMemorySupported": T(_DECLARE + "VidMm may then mark pages no-execute (DXGK_PTE.NoExecute).",
                                          sets="The driver, if the GPU enforces no-execute pages."),
            "ZeroInPteSupported": T(_DECLARE + "VidMm may then use DXGK_PTE.Zero at every level.",
                                    sets="The driver, if every page-table level honours the Zero bit."),
            "ExplicitPageTableInvalidation": T(
                "Set it if the GPU needs it: VidMm then invalidates a table's entries through UpdatePageTable before "
                "it frees the table.",
                sets="The driver, if the GPU may read entries of a table being freed."),
            "CacheCoherentMemorySupported": T(
                _DECLARE + "VidMm may then set DXGK_PTE.CacheCoherent and map I/O-coherent system memory.",
                sets="The driver, if the GPU snoops CPU caches."),
            "PageTableUpdateRequireAddressSpaceIdle": T(
                "Set it if the GPU needs it: VidMm then suspends an address space's contexts before it changes its "
                "page tables or TLB.",
                sets="The driver, if tables cannot change under a running engine."),
            "LargePageSupported": T(_DECLARE + "VidMm may then use LargePage entries at non-leaf levels.",
                                    sets="The driver, if the GPU walks large-page entries."),
            "DualPteSupported": T(
                _DECLARE + "VidMm may then point a level-1 entry at a 4 KB and a 64 KB leaf table at once.",
                sets="The driver, if the GPU takes both leaf tables."),
            "AllowNonAlignedLargePageAddress": T(
                _DECLARE + "VidMm may then place large pages on unaligned physical addresses.",
                sets="The driver (WDDM 2.1 and later), if the GPU allows it."),
            "SysMem64KBPageSupported": T(_DECLARE + "VidMm may then map system memory in 64 KB pages.",
                                         sets="The driver (WDDM 2.1 and later), if the GPU allows it."),
            "InvalidTlbEntriesNotCached": T(
                _DECLARE + "VidMm then skips FlushTlb for ranges that turn from invalid to valid, so the GPU must "
                "never cache an invalid entry.",
                sets="The driver (WDDM 2.6 and later), if the TLB never holds invalid entries."),
            "SysMemLargePageSupported": T(_DECLARE + "VidMm may then map system memory in large pages.",
                                          sets="The driver (WDDM 2.9 and later), if the GPU allows it."),
            "CachedPageTables": T(_DECLARE + "VidMm may then use cached page tables.",
                                  sets="The driver (WDDM 3.1 and later), if the GPU allows it."),
        }),
    "DXGK_HWCONTEXT_CAPS": FlagType(
        "driver", "The driver, in DXGKARG_CREATEHWCONTEXT.ContextCaps, returned from DxgkDdiCreateHwContext "
                  "(WDDM 2.2).", {
            "UseIoMmu": T("Set it only for an engine that reaches memory through the IOMMU.",
                          sets="The driver, for a hardware context on such an engine."),
        }),
    "DXGK_HWQUEUEDFLIP_CAPS": FlagType(
        "driver", _CAPS.format("HwQueuedFlipCaps") + " No bit is defined yet: the whole value is reserved.", {}),
    "DXGK_INVALIDATEHWCONTEXTFLAGS": FlagType(
        "driver", "The driver, in DXGKARGCB_INVALIDATEHWCONTEXT.Flags when it calls DxgkCbInvalidateHwContext for "
                  "each context a hardware engine reset hit (WDDM 2.4).", {
            "CollateralDamage": T(
                "Set it for a context only caught by the reset, leave it 0 for the one that hung; the OS puts the "
                "devices of every invalidated context in error either way.",
                sets="The driver, for a context that did not cause the hang."),
        }),
    "DXGK_MIRACAST_CHUNK_ID": FlagType(
        "driver", "The driver, in the chunk information of a DXGK_INTERRUPT_MICACAST_CHUNK_PROCESSING_COMPLETE "
                  "report (WDDM 1.3).", {
            "FrameNumber": T("Number the frames the encoder produces, so the OS can put the chunks back in order.",
                             sets="The driver, for every encoded chunk."),
            "PartNumber": T("Number the parts of one frame.",
                            sets="The driver, for every encoded chunk."),
        }),
    "DXGK_NODEMETADATA_FLAGS": FlagType(
        "driver", "The driver, per node, answering DxgkDdiGetNodeMetadata (WDDM 2.2).", {
            "ContextSchedulingSupported": T(
                _DECLARE + "the OS may then schedule the node's contexts in the GPU.",
                sets="The driver, for a node whose contexts the GPU can schedule.",
                means="The node supports GPU scheduling of its contexts."),
            "RingBufferFenceRelease": T(
                "Write a queue's progress fence only once the buffer is retired (no GPU or CPU use left), not at its "
                "last instruction.", (96,),
                sets="The driver (WDDM 2.5 and later), for a node that releases progress fences from the ring."),
            "SupportTrackedWorkload": T(
                _DECLARE + "the OS may then use the tracked-workload DDIs on the node.",
                sets="The driver (WDDM 2.5 and later), for a node that implements them.",
                means="The node supports tracked workloads."),
            "UserModeSubmission": T(
                _DECLARE + "the node then takes work through doorbells, and the user-mode driver publishes each "
                "queue's last progress value before it rings.", (106,),
                sets="The driver (WDDM 3.1 and later), for a node with user-mode work submission.",
                means="The node takes user-mode (doorbell) submission."),
            "SupportBuildTestCommandBuffer": T(
                _DECLARE + "the OS may then ask for test command buffers on the node (DxgkDdiBuildTestCommandBuffer).",
                sets="The driver (WDDM 3.2 and later), for a node with that entry point.",
                means="The driver builds test command buffers for the node."),
            "MaxInFlightHwQueueBuffers": T(
                "Give the most command buffers the node can take from the hardware scheduler at once (0: no limit); "
                "the OS never hands more.", (105,),
                sets="The driver (WDDM 2.5 and later), for a node that bounds them."),
        }),
    "DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS": FlagType(
        "driver", "The driver, for each plane, returned from DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 "
                  "(WDDM 2.1).", {
            "FlipConvertedToImmediate": T(
                "Set it when a vsync flip was done immediately (it came before MaxImmediateFlipLine).",
                sets="The driver, for such a plane."),
            "PostPresentNeeded": T(
                "Set it on an immediate flip that needs DxgkDdiPostMultiPlaneOverlayPresent; the OS then calls it.",
                sets="The driver, for such an immediate flip."),
            "HsyncInterruptCompletion": T(
                "Set it on an immediate flip not done at return; report it later with HsyncFlipCompletion.",
                sets="The driver (WDDM 2.2 and later), for an immediate flip that finishes at a horizontal blank."),
        }),
    "DXGK_POINTERFLAGS": FlagType(
        "driver", _CAPS.format("PointerCaps") + " The OS hands DxgkDdiSetPointerShape only the kinds declared.", {
            "Monochrome": T(_DECLARE + "the OS may then hand it monochrome pointer shapes.",
                            sets="The driver, if the hardware cursor draws AND/XOR masks."),
            "Color": T(_DECLARE + "the OS may then hand it colour shapes with alpha.",
                       sets="The driver, if the hardware cursor blends per-pixel alpha."),
            "MaskedColor": T(_DECLARE + "the OS may then hand it colour shapes with an XOR mask in the alpha byte.",
                             sets="The driver, if the hardware cursor takes them."),
        }),
    "DXGK_PRESENTATIONCAPS": FlagType(
        "driver", _CAPS.format("PresentationCaps") + " GDI hardware acceleration and the present path keep to it.", {
            "NoScreenToScreenBlt": T("Set it if the GPU cannot copy the primary onto itself; the OS then never asks.",
                                     sets="The driver, for such hardware."),
            "NoOverlapScreenBlt": T("Set it if overlapping copies on the primary fail; the OS then never asks.",
                                    sets="The driver, for such hardware."),
            "SupportKernelModeCommandBuffer": T(
                _DECLARE + "the OS then accelerates GDI through DxgkDdiRenderKm.",
                sets="The driver (Windows 7 and later), if it implements DxgkDdiRenderKm."),
            "NoSameBitmapAlphaBlend": T(
                "Set it if the GPU cannot alpha-blend within one bitmap; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No AlphaBlend whose source and destination are the same bitmap."),
            "NoSameBitmapStretchBlt": T(
                "Set it if the GPU cannot stretch within one bitmap; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No StretchBlt whose source and destination are the same bitmap."),
            "NoSameBitmapTransparentBlt": T(
                "Set it if the GPU cannot do a transparent blt within one bitmap; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No TransparentBlt whose source and destination are the same bitmap."),
            "NoSameBitmapOverlappedAlphaBlend": T(
                "Set it if overlapping alpha blends within one bitmap fail; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No AlphaBlend whose source and destination overlap in one bitmap."),
            "NoSameBitmapOverlappedStretchBlt": T(
                "Set it if overlapping stretches within one bitmap fail; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No StretchBlt whose source and destination overlap in one bitmap."),
            "DriverSupportsCddDwmInterop": T(
                _DECLARE + "the canonical display driver then presents into DWM textures without GDI acceleration.",
                sets="The driver (Windows 7 and later), if it supports that interop."),
            "AlignmentShift": T("Give n (2 or more): GDI blt pitches are then multiples of 1 << n bytes.",
                                sets="The driver (Windows 7 and later), with GDI acceleration."),
            "MaxTextureWidthShift": T("Give n: the widest texture GDI acceleration uses is 2^(n + 11) texels.",
                                      sets="The driver (Windows 7 and later), with GDI acceleration."),
            "MaxTextureHeightShift": T("Give n: the tallest texture GDI acceleration uses is 2^(n + 11) texels.",
                                       sets="The driver (Windows 7 and later), with GDI acceleration."),
            "SupportAllBltRops": T(_DECLARE + "the OS may then ask for every ROP3 with a solid pattern.",
                                   sets="The driver (Windows 7 and later), with GDI acceleration."),
            "SupportMirrorStretchBlt": T(
                _DECLARE + "the OS may then ask for stretches that mirror the image.",
                sets="The driver (Windows 7 and later), with GDI acceleration.",
                means="StretchBlt that mirrors (a negative width or height)."),
            "SupportMonoStretchBltModes": T(_DECLARE + "the OS may then ask for those stretch modes.",
                                            sets="The driver (Windows 7 and later), with GDI acceleration."),
            "StagingRectStartPitchAligned": T(
                "Set it if staging rectangles must start at x = 0; the OS then keeps them so.",
                sets="The driver (Windows 7 and later), with GDI acceleration."),
            "NoSameBitmapBitBlt": T(
                "Set it if the GPU cannot copy within one bitmap; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No BitBlt whose source and destination are the same bitmap."),
            "NoSameBitmapOverlappedBitBlt": T(
                "Set it if overlapping copies within one bitmap fail; the OS then never asks.",
                sets="The driver (Windows 7 and later), for such hardware.",
                means="No BitBlt whose source and destination overlap in one bitmap."),
            "NoTempSurfaceForClearTypeBlend": T(
                "Set it if ClearType blends need no scratch surface; the OS then allocates none.",
                sets="The driver (Windows 7 and later), with GDI acceleration."),
            "SupportSoftwareDeviceBitmaps": T("Leave it 0: the reference page calls it reserved.",
                                              sets="Nobody."),
            "NoCacheCoherentApertureMemory": T(
                "Set it if the GPU cannot use cache-coherent aperture memory; the OS then gives it none.",
                sets="The driver (Windows 8 and later), for such hardware.",
                means="No cache-coherent aperture memory."),
            "SupportLinearHeap": T(_DECLARE + "the OS may then make linear-heap allocations from staging surfaces.",
                                   sets="The driver (Windows 8 and later), if it supports them."),
        }),
    "DXGK_SEGMENTFLAGS": FlagType(
        "driver", "The driver, in the Flags of each segment it describes, answering DxgkDdiQueryAdapterInfo "
                  "(DXGKQAITYPE_QUERYSEGMENT and its later forms) when the adapter starts.", {
            "Aperture": T(
                "Set it for an aperture segment: only those may hold DMA buffers (DmaBufferSegmentSet), and VidMm "
                "never fills one.", (17, 73),
                sets="The driver, for a segment that maps allocations instead of holding them."),
            "Agp": T("Set it for the AGP aperture only, and no other bit with it.",
                     sets="The driver, for the one AGP aperture segment."),
            "CpuVisible": T("Give CpuTranslatedAddress: the CPU then reaches the segment there.",
                            sets="The driver, for a segment the CPU can map."),
            "UseBanking": T("Give NbOfBanks and pBankRangeTable with it.",
                            sets="The driver, for a segment split in banks."),
            "CacheCoherent": T("Set it on an aperture segment only, when it stays coherent with cacheable pages.",
                               sets="The driver, for such an aperture."),
            "PitchAlignment": T("Expect allocations there at their pitch-aligned size; VidMm never evicts into it.",
                                sets="The driver, for a segment that needs pitch-aligned allocations."),
            "PopulatedFromSystemMemory": T(
                "Set it for a memory segment carved from system RAM the driver set aside.",
                sets="The driver, for such a segment."),
            "PreservedDuringStandby": T(
                _DECLARE + "VidMm then keeps the segment's content in place across standby.",
                sets="The driver (Windows 8 and later), if the content survives standby."),
            "PreservedDuringHibernate": T(
                _DECLARE + "VidMm then keeps the content across hibernation; needs PreservedDuringStandby.",
                sets="The driver (Windows 8 and later), if the content survives hibernation."),
            "PartiallyPreservedDuringHibernate": T(
                _DECLARE + "part of the content survives hibernation; needs PreservedDuringStandby.",
                sets="The driver (Windows 8 and later), for such a segment."),
            "DirectFlip": T(_DECLARE + "VidMm may then pin Direct Flip allocations there and scan them out.",
                            sets="The driver (Windows 8 and later), for a segment the display can scan out."),
            "Use64KBPages": T("Set it if the segment's GPU pages are 64 KB: allocations there are 64 KB aligned.",
                              sets="The driver (WDDM 2.0 and later), for such a segment."),
            "ReservedSysMem": T("Leave it clear: the bit is for the OS.",
                                sets="Only the OS."),
            "SupportsCpuHostAperture": T(
                _DECLARE + "the CPU may then map it through the host aperture; never together with CpuVisible.",
                sets="The driver (WDDM 2.0 and later), for such a segment."),
            "SupportsCachedCpuHostAperture": T(
                _DECLARE + "that host aperture is cache coherent; needs SupportsCpuHostAperture.",
                sets="The driver (WDDM 2.0 and later), for such a segment."),
            "ApplicationTarget": T(
                "Set it for a segment counted in application budgets (the budget groups replaced it).",
                sets="The driver (WDDM 2.0 and later), for such a segment."),
            "VprSupported": T(_DECLARE + "video protected regions may then live there.",
                              sets="The driver (WDDM 2.0 and later), for such a segment."),
            "VprPreservedDuringStandby": T(_DECLARE + "protected-region content then survives standby.",
                                           sets="The driver (WDDM 2.0 and later), for such a segment."),
            "EncryptedPagingSupported": T(
                _DECLARE + "hardware-protected allocations are then encrypted while paged out.",
                sets="The driver (WDDM 2.0 and later), for such a segment."),
            "LocalBudgetGroup": T("Set it for a segment counted against the local memory budget.",
                                  sets="The driver (WDDM 2.0 and later), for local video memory."),
            "NonLocalBudgetGroup": T("Set it for a segment counted against the non-local memory budget.",
                                     sets="The driver (WDDM 2.0 and later), for system-memory segments."),
            "PopulatedByReservedDDRByFirmware": T(
                "Set it for a segment backed by system memory the firmware set aside.",
                sets="The driver (WDDM 2.9 and later), for such a segment."),
        }),
    "DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS": FlagType(
        "driver", "The driver, call-wide, returned from DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 "
                  "(WDDM 2.1).", {
            "PrePresentNeeded": T(
                "Set it with STATUS_RETRY when the flip needs work at PASSIVE_LEVEL; the OS calls again with "
                "RetryAtLowerIrql.",
                sets="The driver, when it cannot finish the flip at raised IRQL."),
            "HwFlipQueueDrainNeeded": T(
                "Set it with STATUS_RETRY; the OS submits again once the affected planes' queued flips are done.",
                sets="The driver (WDDM 3.0 and later, hardware flip queue), when queued flips are in the way."),
            "HwFlipQueueDrainAllPlanes": T(
                "Set it with HwFlipQueueDrainNeeded; the OS waits for every plane's queued flips.",
                sets="The driver (WDDM 3.0 and later), when all planes must drain."),
            "HwFlipQueueDrainAllSources": T(
                "Set it with HwFlipQueueDrainNeeded; the OS waits for every VidPn source's queued flips.",
                sets="The driver (WDDM 3.0 and later), when all sources must drain."),
        }),
    "DXGK_VIDMMCAPS": FlagType(
        "driver", _CAPS.format("MemoryManagementCaps"), {
            "OutOfOrderLock": T(_DECLARE + "the OS may then lock older instances of a renamed allocation.",
                                sets="The driver, if it supports such locks."),
            "DedicatedPagingEngine": T("Leave it 0: the reference page calls it reserved.", sets="Nobody."),
            "PagingEngineCanSwizzle": T("Leave it 0: the reference page calls it reserved.", sets="Nobody."),
            "SectionBackedPrimary": T(_DECLARE + "primaries are then backed by a section and need no I/O range.",
                                      sets="The driver (Windows 8 and later), for such primaries."),
            "CrossAdapterResource": T(_DECLARE + "the OS may then copy to and from cross-adapter resources (tier 1).",
                                      sets="The driver (WDDM 1.3 and later), on a hybrid system."),
            "VirtualAddressingSupported": T(
                _DECLARE + "the OS then runs the adapter with GPU virtual addresses (with GpuMmu or IoMmu).",
                sets="The driver (WDDM 2.0 and later)."),
            "GpuMmuSupported": T(_DECLARE + "VidMm then manages the GPU's page tables; never with IoMmuSupported.",
                                 sets="The driver (WDDM 2.0 and later), for a GPU with its own MMU."),
            "IoMmuSupported": T(_DECLARE + "the GPU then shares the CPU's page tables through the IOMMU; never with "
                                "GpuMmuSupported.",
                                sets="The driver (WDDM 2.0 and later), for a GPU behind an IOMMU."),
            "ReplicateGdiContent": T(_DECLARE + "the OS then replicates GDI's content for the adapter.",
                                     sets="The driver (WDDM 2.0 and later).",
                                     means="GDI content is replicated for the adapter."),
            "NonCpuVisiblePrimary": T(_DECLARE + "GDI allocations then need not be CPU visible.",
                                      sets="The driver (WDDM 2.0 and later)."),
            "ParavirtualizationSupported": T(
                "Set it only if every GPU-paravirtualization DDI is implemented.",
                sets="The driver (WDDM 2.2 and later)."),
            "IoMmuSecureModeSupported": T(_DECLARE + "the OS may then isolate the GPU with the IOMMU.",
                                          sets="The driver (WDDM 2.4 and later)."),
            "DisableSelfRefreshVRAMInS3": T(
                "Set it if video memory is not kept in self-refresh in S3 sleep, so its content does not survive "
                "it.",
                sets="The driver (WDDM 2.4 and later), for such hardware.",
                means="Video memory is not kept in self-refresh during S3 sleep."),
            "IoMmuSecureModeRequired": T("Set it to keep the adapter from starting without IOMMU isolation.",
                                         sets="The driver (WDDM 2.7 and later)."),
            "MapAperture2Supported": T(
                "Set it only if DXGK_OPERATION_MAP_APERTURE_SEGMENT2 is implemented; VidMm may then use it.",
                sets="The driver (WDDM 2.9 and later)."),
            "CrossAdapterResourceTexture": T(
                _DECLARE + "the OS may then texture from cross-adapter resources (tier 2).",
                sets="The driver (WDDM 2.9 and later), on a hybrid system."),
            "CrossAdapterResourceScanout": T(
                _DECLARE + "the OS may then scan out cross-adapter resources (tier 3).",
                sets="The driver (WDDM 2.9 and later), on a hybrid system."),
            "AlwaysPoweredVRAM": T(
                "Set it only if video memory keeps its power in every state the OS uses.",
                sets="The driver (WDDM 3.1 and later), for such hardware.",
                means="Video memory stays powered."),
        }),
    "DXGK_VIDSCHCAPS": FlagType(
        "driver", _CAPS.format("SchedulingCaps"), {
            "MultiEngineAware": T(
                _DECLARE + "the driver then has contexts (DxgkDdiCreateContext) and gets hContext where a driver "
                "without it gets hDevice. PreemptionAware, NoDmaPatching and CancelCommandAware need it.", (63,),
                sets="The driver, if it supports contexts."),
            "VSyncPowerSaveAware": T(
                _DECLARE + "the OS may then turn the vsync interrupt off after idle vsyncs and on again; without it "
                "the OS never turns it off for applications.",
                sets="The driver, if its vsync interrupt may be switched off.",
                means="The OS may switch vsync interrupts off while the GPU is idle, to save power."),
            "PreemptionAware": T(
                _DECLARE + "the OS then preempts long work before it times out (Windows 8 model). Needs "
                "MultiEngineAware and FlipOnVSyncMmIo; without it the Windows 7 policy applies.", (63, 64),
                sets="The driver (Windows 8 and later), if it supports preemption."),
            "NoDmaPatching": T(
                "Set it only with PreemptionAware and MultiEngineAware, for GPU-virtual-address hardware: the OS "
                "then skips its split-buffer binding checks before DxgkDdiPatch.", (63,),
                sets="The driver (Windows 8 and later), for such hardware."),
            "CancelCommandAware": T(
                "Set it only if DxgkDdiCancelCommand is implemented (needs MultiEngineAware); the OS then calls it "
                "for packets a device in error never ran.", (63, 67),
                sets="The driver (Windows 8 and later), if it implements DxgkDdiCancelCommand."),
            "No64BitAtomics": T(
                "Set it if the GPU updates only 32-bit values atomically: every pending monitored-fence wait and "
                "signal must then stay within half the 32-bit range of the last signalled value.", (99,),
                sets="The driver (WDDM 2.0 and later), for such hardware.",
                means="The GPU cannot update 64-bit values atomically."),
            "LowIrqlPreemptCommand": T(
                "Set it to have DxgkDdiPreemptCommand called at low IRQL instead of DISPATCH_LEVEL.", (2,),
                sets="The driver (WDDM 2.0 and later); compute-only (MCDM) drivers must.",
                means="DxgkDdiPreemptCommand is called at low IRQL."),
            "HwQueuePacketCap": T(
                "Give the most DMA packets one node may have queued (4 bits); compute-only (MCDM) drivers leave 0.",
                sets="The driver (WDDM 2.3 and later)."),
            "NativeGpuFence": T(
                "Set it only if native GPU fences are supported and the OS enabled that feature.",
                sets="The driver (WDDM 3.1 and later).",
                means="Native GPU fences are supported."),
            "OptimizedNativeFenceSignaledInterrupt": T(
                "Set it to report, in a native-fence signal interrupt, only the hardware queue that ran; without it "
                "the OS rescans every waiter.",
                sets="The driver (WDDM 3.1 and later), with NativeGpuFence.",
                means="Native-fence signal reports name the running hardware queue."),
        }),
    "DXGK_VIRTUALADDRESSCAPS_DEPRECATED": FlagType(
        "driver", "The driver, in DXGK_DRIVERCAPS.Reserved (Windows 7): a placeholder that was never used.", {
            "PrivilegedMemorySupported": T("Leave it 0: the placeholder was never used.", sets="Nobody.",
                                           means="Unused placeholder bit."),
            "ReadOnlyMemorySupported": T("Leave it 0: the placeholder was never used.", sets="Nobody.",
                                         means="Unused placeholder bit."),
        }),
}
