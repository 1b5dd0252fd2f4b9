"""Workload generators: user-mode threads that drive the D3DKMT-style API.

Each generator is a :mod:`wddmsim.sim` process body taking the API, the context, its parameters
and a named random stream. GPU work is expressed as command buffers of the GPU model's command set
(WORK packets for compute time; COPY for the copy stream, patched from allocations).

Spec: the reference scenarios (tests/reference/) 2, 12-14, 17 and 18 drive these workloads.
"""

from .generators import bursty, compute_batch, copy_stream, frame_loop, script, start_workload

__all__ = ["bursty", "compute_batch", "copy_stream", "frame_loop", "script", "start_workload"]
