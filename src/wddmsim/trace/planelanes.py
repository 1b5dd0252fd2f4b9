"""The overlay-plane lanes of the timeline (:mod:`.chrome`): one lane per plane a window was put on,
``VidPn source S plane P``, stacked like the flip queue lanes.

- Each frame a window presented to its plane (``Present`` mode ``overlay_flip``) is a slice from
  its present call to its ``Displayed`` (or its ``Dropped``: a later write of the plane won), on
  the lane of the plane its window held then (``PlaneAssign``; the window's presents after its
  ``PlaneRelease`` are composed and stay on the flip queue lane).
- Instant markers on the lane's row 0: each ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3``
  the OS made for the plane (``MpoFlip``: ``MPO flip #PresentId`` with ``next vsync``, ``immediate``
  or ``disable``), each vsync at which the plane showed a flip (``PlaneDisplayed``), and the
  window's assignment and release.

Spec: the Trace Event Format (phases X, i); docs/timeline.md lists the lanes.
"""

from __future__ import annotations

from collections import defaultdict

#: plane P of VidPn source S: tids 950000 + 1000 S + 100 P + row
PLANE_BASE = 950_000


def overlay_keys(events: list[dict]) -> set[tuple[int, int]]:
    """The (context, seq) of every present flipped on an overlay plane (they leave the flip queue
    lane for their plane's)."""
    return {(e["context"], e["seq"]) for e in events if e["event"] == "Present" and e["mode"] == "overlay_flip"}


def plane_slices(events: list[dict]) -> tuple[list, list]:
    """``(slices, markers)``: each overlay frame as ``(source, layer, start, end, context, seq,
    result)`` and the markers as ``(t, source, layer, label)``."""
    lane_of: dict[int, tuple[int, int]] = {}  # window (context) -> (source, layer) it holds now
    presents: dict = {}  # (context, seq) -> (t, source, layer)
    slices, markers = [], []
    for e in events:
        ev = e["event"]
        if ev == "PlaneAssign":
            lane_of[e["context"]] = (e["source"], e["layer"])
            markers.append((e["t"], e["source"], e["layer"], f"assigned: context {e['context']}"))
        elif ev == "PlaneRelease":
            lane_of.pop(e["context"], None)
            markers.append((e["t"], e["source"], e["layer"], f"released ({e['reason']}): context {e['context']}"))
        elif ev == "Present" and e["mode"] == "overlay_flip":
            source, layer = lane_of.get(e["context"], (e["source"], 1))
            presents[(e["context"], e["seq"])] = (e["t"], source, layer)
        elif ev in ("Displayed", "Dropped"):
            p = presents.pop((e["context"], e["seq"]), None)
            if p is not None:
                slices.append((p[1], p[2], p[0], e["t"], e["context"], e["seq"], ev))
        elif ev == "MpoFlip":
            how = "disable" if not e["enabled"] else "immediate" if e["immediate"] else "next vsync"
            markers.append((e["t"], e["source"], e["layer"], f"MPO flip #{e['present_id']} {how}"))
        elif ev == "PlaneDisplayed":
            markers.append((e["t"], e["source"], e["layer"], f"vsync (plane shows #{e['present_id']})"))
    return slices, markers


def plane_tracks(events: list[dict], context_name, names: dict, out: list, us) -> None:
    """Add the plane lanes' slices and markers to ``out`` and their names to ``names`` (tid ->
    name); ``context_name(handle)`` names a window, ``us`` turns ns into the format's µs."""
    slices, markers = plane_slices(events)
    ends: dict = defaultdict(list)  # (source, layer) -> end of each row's last slice
    for source, layer, start, end, ctx, seq, what in sorted(slices, key=lambda s: (s[2], s[3])):
        rows = ends[(source, layer)]
        row = next((i for i, last in enumerate(rows) if last <= us(start)), len(rows))
        if row == len(rows):
            rows.append(0.0)
        rows[row] = us(end)
        tid = PLANE_BASE + 1000 * source + 100 * layer + row
        names[tid] = f"VidPn source {source} plane {layer}" + (f" {row}" if row else "")
        out.append({"name": f"{context_name(ctx)} #{seq}", "cat": "plane", "ph": "X", "pid": 1, "tid": tid,
                    "ts": us(start), "dur": us(end - start), "args": {"result": what}})
    for t, source, layer, label in markers:
        tid = PLANE_BASE + 1000 * source + 100 * layer
        names.setdefault(tid, f"VidPn source {source} plane {layer}")
        cat = "vsync" if label.startswith("vsync") else "mpo_flip" if label.startswith("MPO") else "plane"
        out.append({"name": label, "cat": cat, "ph": "i", "s": "t", "pid": 1, "tid": tid, "ts": us(t)})
