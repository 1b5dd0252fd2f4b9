"""The surfaces the workloads' applications render and present: a 128x128 back buffer of 32-bit
pixels (presents copy or flip whole surfaces of this size)."""

SURFACE_W = 128
SURFACE_H = 128
SURFACE_BYTES = SURFACE_W * SURFACE_H * 4
