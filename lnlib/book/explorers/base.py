"""The explorer convention shared by every chapter (ARCHITECTURE.md, "Explorers").

An explorer is an ``ipywidgets.VBox`` holding ordinary value controls, a
figure rendered to PNG, a one-line readout and a note. Changing any control's
``.value`` recomputes the display synchronously, so tests and readers can
drive it without a browser. A degenerate or invalid setting shows a note
instead of raising: a reader never sees a traceback.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import ipywidgets as widgets

from ..figures.render import encode_png, overlay
from ..tools.notebooks import website_build
from .plans import Sweep

__all__ = [
    "Explorer",
    "Info",
    "Meaning",
    "choice_slider",
    "described",
    "int_slider",
    "log_slider",
    "png_url",
    "slider",
]

#: The errors lnlib raises for settings a reader can reach; shown as a note, never as a traceback.
READER_ERRORS = (ValueError, TypeError, ArithmeticError)


SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def spoken_number(value: float, digits: int = 4, *, powers: bool = False) -> str:
    """`value` to `digits` significant digits as a reader hears it: ``1 × 10⁻⁵``, ``−0.25``,
    ``1024``; with `powers`, every value but those from 1 to 10 as a power of ten (``1 × 10⁻⁴``,
    not ``0.0001``), for a log slider whose labels would otherwise change notation partway
    (learner A6, chapter "Epsilon").

    Powers of ten as the chapters write them, not Python's ``1e-05``; a minus sign, not a hyphen
    (which some screen readers read as "dash").
    """
    text = format(float(value), f".{digits}g")
    if powers and value != 0:
        mantissa, exponent = format(float(value), f".{digits - 1}e").split("e")
        text = format(float(mantissa), f".{digits}g") + (
            "" if int(exponent) == 0 else f"e{exponent}"
        )
    mantissa, _, exponent = text.partition("e")
    if exponent:
        text = f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPTS)}"
    return text.replace("-", "−")


@dataclass(frozen=True)
class Meaning:
    """What a control moves, in words, and how its value reads: the control's name for a reader who
    cannot see the figure (WCAG 4.1.2 "Name, Role, Value").

    It lives with the control (:func:`described`), so the notebook's widget (its ``tooltip``) and
    the website's control (``aria-label`` and ``aria-valuetext``, :mod:`lnlib.book.explorers.web`)
    say the same.

    Attributes
    ----------
    what : str
        What the control moves, starting with its visible label (WCAG 2.5.3, "Label in Name"), e.g.
        "ε, added to the variance under the square root".
    unit : str
        The unit of a count, singular ("layer", "sample"); "" for a pure number.
    digits : int
        Significant digits of a float value.
    powers : bool
        Whether a float value reads as a power of ten at any size (a log slider's).
    format : callable or None
        ``format(value, label) -> str`` for a value no number-and-unit says well (a step's title,
        say).
    """

    what: str
    unit: str = ""
    digits: int = 4
    powers: bool = False
    format: Callable | None = None

    def text(self, value, label: str | None = None) -> str:
        """`value` as read out, with its unit: ``"12 layers"``, ``"1 × 10⁻⁵"``, ``"on"``, or the
        option's `label`.

        `label` is the option's own text, for a control that offers a list of options (None for a
        slider over numbers).
        """
        if self.format is not None:
            return self.format(value, label)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            if label is not None:
                return str(label)
            return ("on" if value else "off") if isinstance(value, bool) else str(value)
        number = spoken_number(value, self.digits, powers=self.powers)
        if label is not None and label not in (str(value), number.replace("−", "-")):
            number = str(label)  # an option's own label: "√2", "1e-5 (PyTorch)"
        if not self.unit:
            return number
        return f"{number} {self.unit if value == 1 else self.unit + 's'}"


def described(
    control: widgets.ValueWidget, what: str, unit: str = "", **options
) -> widgets.ValueWidget:
    """`control` with its :class:`Meaning`: as its ``.meaning``, and as its tooltip in the notebook.

    ipywidgets 8 gives every ``DOMWidget`` a ``tooltip`` (8.0's "Tooltips everywhere", replacing
    ``description_tooltip``; pyproject.toml asks for ipywidgets >= 8.1), shown on hover as the
    element's ``title``.
    """
    control.meaning = Meaning(what, unit, **options)
    control.tooltip = what + (f" (in {unit}s)" if unit else "")
    return control


def slider(
    description: str,
    value: float,
    low: float,
    high: float,
    step: float = 0.1,
    *,
    what: str,
    unit: str = "",
) -> widgets.FloatSlider:
    """A float slider that updates on every move (``continuous_update``) with a readable width;
    `what` it moves (:class:`Meaning`)."""
    return described(
        widgets.FloatSlider(
            value=value,
            min=low,
            max=high,
            step=step,
            description=description,
            continuous_update=True,
            readout_format=".2f",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="320px"),
        ),
        what,
        unit,
    )


def log_slider(
    description: str,
    value: float,
    low_exponent: float,
    high_exponent: float,
    *,
    what: str,
    step: float = 0.1,
    readout_format: str = ".1e",
    width: str = "360px",
    digits: int = 2,
) -> widgets.FloatLogSlider:
    """A base-10 log slider over ``[10 ** low_exponent, 10 ** high_exponent]`` that updates on every
    move.

    It moves in `step` decades, and a value typed into its box moves to the nearest step (0.5
    becomes 0.501 at the default 0.1): give it a `readout_format` that shows that value (``".3g"``),
    and say the value used in the explorer's readout, so the numbers a reader checks by hand agree.
    """
    return described(
        widgets.FloatLogSlider(
            value=value,
            base=10,
            min=low_exponent,
            max=high_exponent,
            step=step,
            description=description,
            continuous_update=True,
            readout_format=readout_format,
            style={"description_width": "initial"},
            layout=widgets.Layout(width=width),
        ),
        what,
        digits=digits,
        powers=True,
    )


def int_slider(
    description: str,
    value: int,
    low: int,
    high: int,
    *,
    what: str,
    unit: str = "",
    width: str = "340px",
) -> widgets.IntSlider:
    """An integer slider over ``[low, high]`` that updates on every move; `what` it moves, a count
    of `unit`."""
    return described(
        widgets.IntSlider(
            value=value,
            min=low,
            max=high,
            description=description,
            continuous_update=True,
            style={"description_width": "initial"},
            layout=widgets.Layout(width=width),
        ),
        what,
        unit,
    )


def choice_slider(
    description: str, options, value, *, what: str, unit: str = "", width: str = "320px"
) -> widgets.SelectionSlider:
    """A slider over a fixed list of `options` (values, or (label, value) pairs), e.g. the
    precomputed settings of an explorer."""
    return described(
        widgets.SelectionSlider(
            options=options,
            value=value,
            description=description,
            continuous_update=True,
            style={"description_width": "initial"},
            layout=widgets.Layout(width=width),
        ),
        what,
        unit,
    )


def png_url(png: bytes) -> bytes:
    """PNG bytes as a ``data:`` URL, the form the explorers' ``ipywidgets.Image`` (``format="url"``)
    carries.

    Chromium shows a data URL's image 1-3 ms after it is set, a blob URL's (ipywidgets'
    ``format="png"``) 3-9 ms (BENCHMARKS.md, "Explorers in JupyterLab"): the moving layer reaches
    the page sooner, for a third more bytes.
    """
    return b"data:image/png;base64," + base64.b64encode(png)


class Info(str):
    """A note that explains a setting rather than warns about it (e.g. "G = 1: group norm is layer
    norm"): :func:`note_html` shows it without the warning sign and its colour."""


def note_html(note: str) -> str:
    """A note as the explorers show it: empty, one line of plain text for an :class:`Info`, or one
    warning line in the palette's vermillion."""
    if not note:
        return ""
    if isinstance(note, Info):
        return f"<span>{html.escape(note)}</span>"
    return f"<span style='color:#D55E00'>⚠ {html.escape(note)}</span>"


def text_lines(count: int) -> str:
    """CSS height of `count` lines of an HTML widget's text (ipywidgets sets their line height to
    its inline height)."""
    return f"calc({count} * var(--jp-widgets-inline-height, 28px))"


class Explorer(widgets.VBox):
    """Base class of every ``*_explorer``: controls, a figure, a readout and a note.

    Subclasses pass a :class:`~lnlib.book.figures.render.FastRenderer` for their
    figure and implement :meth:`compute`, which takes the control values,
    updates the figure's artists in place and returns
    ``(readout_html, note, result)``.

    Attributes
    ----------
    controls : dict of str to ipywidgets.ValueWidget
        The controls, by name; set their ``.value`` to drive the explorer. Each carries its
        :class:`Meaning` as ``.meaning`` (:func:`described`).
    image : ipywidgets.Image
        The figure's moving layer as a PNG ``data:`` URL (:func:`png_url`; transparent where nothing
        moves), shown over ``background``; its ``.value`` changes when the figure does.
    background : ipywidgets.Image
        The figure's static parts as a PNG ``data:`` URL, re-sent only when they change.
    readout : ipywidgets.HTML
        The numbers behind the figure, in one or two lines.
    note : ipywidgets.HTML
        Empty, or a note on a degenerate or invalid setting.
    result : dict
        The numbers computed by the last update, for tests and curious readers.
    """

    #: Lines of text kept for the readout and for the note (a subclass whose readout wraps further
    #: says so).
    readout_lines = 2
    note_lines = 2
    #: Controls per row in a grid, so that related controls line up in columns (chapter 07: each γᵢ
    #: above its βᵢ); None lets them wrap as the width allows.
    control_columns: int | None = None
    #: What the website offers (:mod:`lnlib.book.explorers.plans`): grids for the float sliders, by
    #: control name, or a :class:`~lnlib.book.explorers.plans.Sweep` of presets. An explorer without
    #: float sliders needs none.
    web_plan: dict | Sweep = MappingProxyType({})

    def __init__(self, title: str, controls: dict, renderer):
        unnamed = [
            name
            for name, c in controls.items()
            if not isinstance(getattr(c, "meaning", None), Meaning)
        ]
        if unnamed:
            raise TypeError(
                f"{type(self).__name__}: controls {unnamed} do not say what they move; make them "
                "with described()."
            )
        self.controls = controls
        self.renderer = renderer
        # The figure is two stacked images: the static background, sent when it changes, and the
        # moving layer (the pixels the dynamic artists drew, transparent elsewhere), sent on every
        # update.
        self.background = widgets.Image(
            format="url", layout=widgets.Layout(grid_area="figure", max_width="100%")
        )
        self.image = widgets.Image(
            format="url", layout=widgets.Layout(grid_area="figure", max_width="100%")
        )
        self._shown_background = None
        # Room for the longest readout and note this explorer shows, so nothing below them moves as
        # they change.
        self.readout = widgets.HTML(
            layout=widgets.Layout(min_height=text_lines(self.readout_lines))
        )
        self.note = widgets.HTML(layout=widgets.Layout(min_height=text_lines(self.note_lines)))
        self.result: dict = {}
        parts = (
            (self.image, "lnlib-figure"),
            (self.background, "lnlib-figure-background"),
            (self.readout, "lnlib-readout"),
            (self.note, "lnlib-note"),
        )
        for part, css_class in parts:
            part.add_class(
                css_class
            )  # stable hooks for the browser tests (tests/browser/test_lab.py)
        self.title = title
        header = widgets.HTML(f"<b>{html.escape(title)}</b>")
        figure = widgets.Box(
            [self.background, self.image],
            layout=widgets.Layout(
                display="grid", grid_template_areas='"figure"', justify_items="flex-start"
            ),
        )
        super().__init__(
            [
                header,
                self._control_box(list(controls.values())),
                figure,
                self.readout,
                self.note,
            ]
        )
        self.add_class("lnlib-explorer")
        for control in controls.values():
            control.observe(self._on_change, names="value")
            # No echo of a reader's move back to the page (ipywidgets 8 echoes every synced change,
            # for other views of the same widget): one message fewer per move, and no re-render of
            # the control mid-move.
            for synced in ("value", "index"):
                setattr(control, f"_{synced}_metadata", {"echo_update": False})
        self.refresh()

    def _control_box(self, controls: list) -> widgets.Box:
        """The controls in a row that wraps, or in a grid of :attr:`control_columns` equal
        columns."""
        if self.control_columns is None:
            return widgets.HBox(controls, layout=widgets.Layout(flex_flow="row wrap"))
        for control in controls:
            control.layout.width = "auto"  # each fills its column
        columns = f"repeat({self.control_columns}, minmax(0, 1fr))"
        return widgets.GridBox(controls, layout=widgets.Layout(grid_template_columns=columns))

    def _on_change(self, _change) -> None:
        self.refresh()

    def values(self) -> dict:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self) -> None:
        """Recompute and redraw from the current control values; grey out the controls not in
        effect."""
        values = self.values()
        readout, note = self.texts(values)
        background, frame = self.renderer.layers()
        # The figure first, then the text: a page that sees the new readout already has the new
        # figure.
        # FastRenderer returns the same background array until it redraws it: a new array, a new
        # picture.
        if background is not self._shown_background:
            self.background.value = png_url(encode_png(background))
            self._shown_background = background
        self.image.value = png_url(encode_png(overlay(background, frame)))
        self.readout.value, self.note.value = readout, note
        inactive = self.inactive(values)
        for name, control in self.controls.items():
            control.disabled = name in inactive

    def inactive(self, values: dict) -> dict:
        """The controls that have no effect at `values`, each with the reason the readout gives
        (none by default).

        They are disabled, in the notebook and on the website; what they show must not change
        anything.
        """
        return {}

    def texts(self, values: dict) -> tuple[str, str]:
        """Recompute at `values` (every control's value, by name) and return the readout and note
        HTML.

        The figure's artists are left in that state; the website's precomputed explorer calls this
        for every setting of its grid (:mod:`lnlib.book.explorers.web`), so both show the same text.
        """
        try:
            readout, note, self.result = self.compute(**values)
        except READER_ERRORS as exc:
            readout, note, self.result = "", f"This setting has no answer: {exc}", {}
        return readout, note_html(note)

    def _repr_mimebundle_(self, **kwargs):
        """In a kernel, the live widget; in the website build (``LNBOOK_WEBSITE=1``), the
        precomputed explorer."""
        if website_build():
            from .web import web_explorer_html  # noqa: PLC0415 (only the website build needs it)

            return {
                "text/html": web_explorer_html(self),
                "text/plain": f"<{type(self).__name__}: precomputed for the website>",
            }
        return super()._repr_mimebundle_(**kwargs)

    def compute(self, **values):  # pragma: no cover - every subclass overrides it
        raise NotImplementedError
