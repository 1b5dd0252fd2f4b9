"""Plotting a capture against a model: one non-empty PNG per swap chain."""

import dataclasses

from replay_data import gold

from wddmsim.replay.plots import plot_comparison

PNG = b"\x89PNG\r\n\x1a\n"


def test_one_png_per_chain(tmp_path):
    real = gold(4, "current")
    model = [dataclasses.replace(f, until_displayed=None if f.until_displayed is None else f.until_displayed + 2_000_000)
             for f in gold(4, "v2").frames]
    paths = plot_comparison(real, model, tmp_path / "plots")
    assert [p.name for p in paths] == [
        "01-dwm.exe-10376-0x1BF098B1ED0.png",
        "02-Presenter.exe-9620-0x19E52815138.png",
        "03-Presenter.exe-8536-0x197B10BAB70.png",
        "04-Presenter.exe-5236-0x285B4C0D1B0.png",
        "05-Presenter.exe-5192-0x0.png",
    ]
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000
        assert data[16:24] == (1000).to_bytes(4, "big") + (650).to_bytes(4, "big")  # 10 x 6.5 in at 100 dpi


def test_chains_only_one_side_has_are_drawn_alone(tmp_path):
    real = gold(4, "current")
    model = [f for f in gold(4, "v1").frames if f.application == "dwm.exe"]
    model += [dataclasses.replace(f, pid=1) for f in gold(4, "v1").frames if f.pid == 9620]
    paths = plot_comparison(real.frames, model, tmp_path)
    assert len(paths) == 6  # the v1 dwm chain pairs with the real one despite its padded address
    assert paths[-1].name == "06-Presenter.exe-1-0x0000019E52815138.png"
    assert all(p.read_bytes().startswith(PNG) for p in paths)
