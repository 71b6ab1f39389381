"""Every explorer in lnlib.book.explorers, driven as a reader would: each control moved, the display
must follow.

For each ``*_explorer`` listed in ``lnlib.book.explorers.__all__``: build it with its
defaults, move every control through its extremes, middle and options, and
check that (1) nothing raised, (2) the figure or the readout changed whenever
the value changed, and (3) a failing setting shows a note rather than a
traceback. Chapter-specific tests check that the numbers shown are right.
"""

import base64

import ipywidgets as widgets
import numpy as np
import pytest

import lnlib.book.explorers

EXPLORERS = sorted(name for name in lnlib.book.explorers.__all__ if name.endswith("_explorer"))


SELECTIONS = (
    widgets.Dropdown,
    widgets.ToggleButtons,
    widgets.RadioButtons,
    widgets.SelectionSlider,
)


def option_values(control):
    """The positions a reader can reach that are most likely to break something: extremes, middle,
    every option."""
    if isinstance(control, widgets.FloatLogSlider):
        low, high = control.min, control.max
        return [control.base**low, control.base**high, control.base ** ((low + high) / 2)]
    if isinstance(control, (widgets.FloatSlider, widgets.IntSlider)):
        middle = (control.min + control.max) / 2
        return [
            control.min,
            control.max,
            int(middle) if isinstance(control, widgets.IntSlider) else middle,
        ]
    if isinstance(control, SELECTIONS):
        return [option[1] if isinstance(option, tuple) else option for option in control.options]
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not control.value, control.value]
    raise AssertionError(
        f"no test positions for control {type(control).__name__}; add it to option_values"
    )


def png(image) -> bytes:
    """The PNG an explorer's image widget carries as a data URL (lnlib.book.explorers.base.png_url),
    or b"" if it is not one."""
    prefix, _, data = bytes(image.value).partition(b",")
    return base64.b64decode(data) if prefix == b"data:image/png;base64" else b""


def display(explorer):
    return png(explorer.image), explorer.readout.value, explorer.note.value


def test_there_are_explorers():
    assert "mean_explorer" in EXPLORERS


@pytest.mark.parametrize("name", EXPLORERS)
def test_every_control_changes_the_display(name):
    explorer = getattr(lnlib.book.explorers, name)()
    assert isinstance(explorer, widgets.Box)
    assert explorer.controls, f"{name} has no controls"
    for image in (explorer.image, explorer.background):
        assert png(image)[:8] == b"\x89PNG\r\n\x1a\n"
    assert explorer.readout.value, f"{name} shows no readout at its defaults"
    assert not explorer.note.value.startswith("<span") or "no answer" not in explorer.note.value, (
        f"{name} fails at its defaults"
    )
    for control_name, control in explorer.controls.items():
        for value in option_values(control):
            before_value = control.value
            before = display(explorer)
            control.value = value
            after = display(explorer)
            assert after[0][:8] == b"\x89PNG\r\n\x1a\n", (
                f"{name}.{control_name}={value!r} shows no figure"
            )
            assert after[1] or after[2], (
                f"{name}.{control_name}={value!r} shows neither a readout nor a note"
            )
            reason = explorer.inactive(explorer.values()).get(control_name)
            assert control.disabled == bool(reason), (
                f"{name}.{control_name}: disabled exactly when it has no effect"
            )
            if reason:
                assert reason in after[1], (
                    f"{name}: {control_name} is disabled and the readout does not say why"
                )
            elif control.value != before_value:
                assert after[:2] != before[:2], (
                    f"{name}: moving {control_name} from {before_value!r} to {value!r} changed "
                    "nothing on screen"
                )


@pytest.mark.parametrize("name", EXPLORERS)
def test_all_controls_at_extremes_together_show_no_traceback(name):
    """Every control at its minimum, then every one at its maximum: an explorer must answer with a
    figure and text."""
    explorer = getattr(lnlib.book.explorers, name)()
    for pick in (0, -1):
        for control in explorer.controls.values():
            control.value = option_values(control)[pick]
        image, readout, note = display(explorer)
        assert image[:8] == b"\x89PNG\r\n\x1a\n"
        assert readout or note


# --- the mean explorer: the numbers shown are the right ones ------------------------------


def test_mean_explorer_shows_the_mean_of_the_sliders():
    explorer = lnlib.book.explorers.mean_explorer(values=[1.0, 2.0, 3.0, 4.0])
    assert explorer.result["mean"] == 2.5
    assert "<b>2.5</b>" in explorer.readout.value
    explorer.controls["x4"].value = 8.0
    assert explorer.result["mean"] == pytest.approx(3.5)
    np.testing.assert_allclose(explorer.result["centred"], [-2.5, -1.5, -0.5, 4.5])
    assert "<b>3.5</b>" in explorer.readout.value
    assert explorer.note.value == ""


def test_mean_explorer_notes_a_constant_vector():
    explorer = lnlib.book.explorers.mean_explorer(values=[1.0, 2.0, 3.0, 4.0])
    for control in explorer.controls.values():
        control.value = 3.0
    assert "All entries are equal" in explorer.note.value
    np.testing.assert_array_equal(explorer.result["centred"], 0.0)


@pytest.mark.parametrize("values", [[1.0], list(range(9)), [1.0, 20.0]])
def test_mean_explorer_refuses_bad_starting_values(values):
    with pytest.raises(ValueError, match="mean_explorer|starting values"):
        lnlib.book.explorers.mean_explorer(values=values)


# --- the website's precomputed explorers (lnlib.book.explorers.web) ------------------------------


@pytest.mark.parametrize("name", EXPLORERS)
def test_the_moving_layer_over_the_background_is_the_figure(name):
    """The website stores per setting only the pixels that differ from the static background: laid
    over it, the frame."""
    from lnlib.book.explorers.web import overlay

    explorer = getattr(lnlib.book.explorers, name)()
    last = {c: option_values(control)[-1] for c, control in explorer.controls.items()}
    explorer.texts(explorer.values() | last)
    background, frame = explorer.renderer.layers()
    layer = overlay(background, frame)
    opaque = layer[..., 3] > 0
    composed = np.where(opaque[..., None], layer, background)
    np.testing.assert_array_equal(composed, frame)
    assert 0 < opaque.mean() < 0.9, (
        f"{name}: the moving layer covers {opaque.mean():.0%} of the figure"
    )


@pytest.mark.parametrize("name", EXPLORERS)
def test_both_layers_decode_to_their_pixels(name):
    """The hand-written PNG encoder (lnlib.book.figures.render.encode_png), read back by Pillow's
    decoder."""
    import io

    from PIL import Image

    from lnlib.book.figures.render import encode_png, overlay

    background, frame = getattr(lnlib.book.explorers, name)().renderer.layers()
    for pixels in (background, overlay(background, frame)):
        decoded = Image.open(io.BytesIO(encode_png(pixels)))
        assert decoded.mode == "RGBA"
        np.testing.assert_array_equal(np.asarray(decoded), pixels)


@pytest.mark.parametrize("name", EXPLORERS)
def test_web_settings_show_what_the_widget_shows(name):
    """At grid points of the website's explorer, its readout and note are the widget's, set by its
    controls."""
    from lnlib.book.explorers.web import web_states

    web, widget = getattr(lnlib.book.explorers, name)(), getattr(lnlib.book.explorers, name)()
    states = web_states(web)
    settings = [s for s in states.settings if s is not None]
    assert settings, f"{name}: the website grid is empty"
    for values in (settings[0], settings[len(settings) // 2], settings[-1]):
        readout, note = web.texts(values)
        for control, value in values.items():
            widget.controls[control].value = value
        assert (widget.readout.value, widget.note.value) == (readout, note), f"{name} at {values}"


def test_the_website_build_shows_the_precomputed_explorer(monkeypatch, tmp_path):
    from lnlib.book.explorers import web

    explorer = lnlib.book.explorers.complete_examples_explorer()
    assert "application/vnd.jupyter.widget-view+json" in explorer._repr_mimebundle_()
    monkeypatch.setenv("LNBOOK_WEBSITE", "1")
    monkeypatch.setenv("LNBOOK_WEB_CACHE", str(tmp_path))
    page = explorer._repr_mimebundle_()["text/html"]
    assert 'class="lnlib-web-explorer"' in page and "<select" in page and 'type="range"' in page
    assert len(list(tmp_path.glob("*.html"))) == 1
    monkeypatch.setattr(
        web, "_render", lambda *args: pytest.fail("an unchanged explorer was computed again")
    )
    assert explorer._repr_mimebundle_()["text/html"] == page  # from the cache


def test_the_website_refuses_an_explorer_over_its_budget(monkeypatch):
    from lnlib.book.explorers import web

    monkeypatch.setattr(web, "MAX_BYTES", 10_000)
    with pytest.raises(ValueError, match="budget is"):
        web.web_explorer_html(lnlib.book.explorers.complete_examples_explorer())


def test_a_preset_off_the_sweep_grid_is_refused():
    from lnlib.book.explorers.plans import Sweep

    with pytest.raises(ValueError, match="not on the sweep grid"):
        Sweep(presets={"odd": {"x1": 0.3}}, grids={"x1": (0.0, 0.5, 1.0)})
