"""The IRQL classes a timer runs at, in the order same-instant timers run: device IRQL (interrupt
service routines, MMIO flips), then DISPATCH_LEVEL (DPCs, DxgkDdiSubmitCommand,
DxgkDdiPreemptCommand), then PASSIVE_LEVEL (DxgkDdiRender, DxgkDdiPatch, user threads).

The kernel (:mod:`.kernel`) orders its heap by them and the processes (:mod:`.process`) resume at
them; both import them from here. Spec: the IRQL at which Microsoft's reference page of each DDI
says it is called.
"""

DEVICE = 0
DISPATCH = 1
PASSIVE = 2
IRQL_NAMES = {DEVICE: "DIRQL", DISPATCH: "DISPATCH_LEVEL", PASSIVE: "PASSIVE_LEVEL"}
