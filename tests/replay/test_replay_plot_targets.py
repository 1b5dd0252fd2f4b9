"""A replay plot marks a swap chain that missed a target of the comparison
(:mod:`wddmsim.replay.plots`): a red title counting the misses, a red line per missed target with
both values and the tolerance, and the panel of a missed median's column titled in red; a chain
that met every target is drawn as before."""

import dataclasses

from matplotlib.colors import to_hex
from replay_data import gold

from wddmsim.replay import plots
from wddmsim.replay.compare import compare
from wddmsim.replay.plots import MISSED, chain_figure, missed_lines, plot_comparison

PANELS = ["Frame time (MsBetweenPresents)", "Display latency (MsUntilDisplayed: present call to screen)"]
PRESENTER = ("Presenter.exe", 9620, "0x19E52815138")


def _late(frames, ns: int):
    """The frames displayed ``ns`` later."""
    return [dataclasses.replace(f, until_displayed=None if f.until_displayed is None else f.until_displayed + ns)
            for f in frames]


def _chain(frames, key):
    return [f for f in frames if f.key == key]


def _panels(fig) -> list[tuple[str, str]]:
    """Each panel's left title and its colour (matplotlib keeps the Text of a left title as
    ``_left_title``; ``get_title`` gives its text only)."""
    return [(ax.get_title(loc="left"), to_hex(ax._left_title.get_color())) for ax in fig.axes]


def test_a_missed_median_turns_the_title_and_its_panel_red():
    real = gold(4, "current")
    model = _late(gold(4, "v2").frames, 20_000_000)
    comparison = next(c for c in compare(real, model) if c.key == PRESENTER)
    assert missed_lines(comparison) == [
        "target missed: MsUntilDisplayed median (real 48.682 ms, model 68.682 ms; one refresh (16.68 ms))"]
    fig = chain_figure(PRESENTER, _chain(real.frames, PRESENTER), _chain(model, PRESENTER), comparison)
    assert fig.get_suptitle() == (
        "Presenter.exe (pid 9620), swap chain 0x19E52815138 - 1 of 9 targets missed\n"
        "target missed: MsUntilDisplayed median (real 48.682 ms, model 68.682 ms; one refresh (16.68 ms))")
    assert to_hex(fig._suptitle.get_color()) == MISSED
    assert _panels(fig) == [(PANELS[0], "#000000"), (PANELS[1] + " - target missed", MISSED)]


def test_a_chain_that_meets_every_target_is_drawn_in_black():
    real = gold(4, "current")
    comparison = next(c for c in compare(real, real.frames) if c.key == PRESENTER)
    assert comparison.passed and missed_lines(comparison) == []
    fig = chain_figure(PRESENTER, _chain(real.frames, PRESENTER), _chain(real.frames, PRESENTER), comparison)
    assert fig.get_suptitle() == "Presenter.exe (pid 9620), swap chain 0x19E52815138"
    assert to_hex(fig._suptitle.get_color()) == "#000000"
    assert _panels(fig) == [(PANELS[0], "#000000"), (PANELS[1], "#000000")]
    # not compared at all (None): no mark either
    assert chain_figure(PRESENTER, _chain(real.frames, PRESENTER), [], None).get_suptitle() == (
        "Presenter.exe (pid 9620), swap chain 0x19E52815138 - only in the real capture")


def test_many_misses_take_four_lines_and_a_missing_chain_one():
    real = gold(4, "current")
    model = [dataclasses.replace(f, between_presents=None if f.between_presents is None else 2 * f.between_presents,
                                 gpu_busy=None if f.gpu_busy is None else 3 * f.gpu_busy, in_present=10 * f.in_present,
                                 present_mode="Composed: Flip") for f in _late(gold(4, "v2").frames, 20_000_000)]
    comparison = next(c for c in compare(real, model) if c.key == PRESENTER)
    fig = chain_figure(PRESENTER, _chain(real.frames, PRESENTER), _chain(model, PRESENTER), comparison)
    assert fig.get_suptitle().splitlines() == [
        "Presenter.exe (pid 9620), swap chain 0x19E52815138 - 5 of 9 targets missed",
        "target missed: present mode (real Composed: Copy with GPU GDI, model Composed: Flip; >= 90% of frames)",
        "target missed: MsBetweenPresents median (real 16.660 ms, model 33.343 ms; within 2%)",
        "target missed: MsGPUBusy median (real 1.056 ms, model 3.168 ms; within 10%)",
        "and 2 more targets missed"]
    assert _panels(fig) == [(PANELS[0] + " - target missed", MISSED), (PANELS[1] + " - target missed", MISSED)]
    dwm = ("dwm.exe", 10376, "0x1BF098B1ED0")
    missing = next(c for c in compare(real, [f for f in real.frames if f.key != dwm]) if c.key == dwm)
    assert missed_lines(missing) == ["targets missed: all 10, no such swap chain in the model"]
    assert chain_figure(dwm, _chain(real.frames, dwm), [], missing).get_suptitle() == (
        "dwm.exe (pid 10376), swap chain 0x1BF098B1ED0 - only in the real capture - 10 of 10 targets missed\n"
        "targets missed: all 10, no such swap chain in the model")


def test_plot_comparison_marks_each_chain_by_its_own_comparison(tmp_path, monkeypatch):
    real = gold(4, "current")
    model = _late(gold(4, "v2").frames, 20_000_000)
    seen = []

    def spy(key, real_frames, model_frames, comparison=None, **labels):
        seen.append((key, None if comparison is None else comparison.passed))
        return chain_figure(key, real_frames, model_frames, comparison, **labels)

    monkeypatch.setattr(plots, "chain_figure", spy)
    paths = plot_comparison(real, model, tmp_path)  # compared here, as wddmsim replay compares
    assert len(paths) == 5 and [passed for _, passed in seen] == [False] * 5
    seen.clear()
    plot_comparison(real, model, tmp_path, comparisons=compare(real, real.frames))  # the caller's comparison
    assert [passed for _, passed in seen] == [True] * 5
