"""The explorers on the website: a grid of settings precomputed at build time, swapped in the page.

A website reader has no kernel (ARCHITECTURE.md, "Explorers"). When ``make book`` executes a chapter
it sets ``LNBOOK_WEBSITE=1``, and an explorer then displays as :func:`web_explorer_html` instead of
a widget: native controls (``<input type=range>``, ``<select>``, a checkbox) with the explorer's own
labels, and the display of every setting of a grid, computed by the explorer's own ``compute``. Per
setting only the pixels the moving artists drew are stored (lossless WebP over one static
background, from :meth:`lnlib.book.figures.render.FastRenderer.layers`), with the readout and the
note as the notebook shows them. ``_ext/web_explorers_static/lnlib-explorers.js`` swaps them as the
reader moves a control.

Explorers with one slider per vector entry (chapters 3, 4, 6, 7, 9) cannot enumerate their settings;
on the website they offer named presets and a sweep of one entry at a time (:class:`Sweep`).

The HTML of an explorer is cached on disk when ``LNBOOK_WEB_CACHE`` names a folder (``make book``
does), keyed on lnlib's source, the library versions and the explorer's starting values: an
unchanged chapter costs nothing the next time.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as widgets
import numpy as np
from PIL import Image

from ..figures.render import overlay
from .plans import Sweep

__all__ = [
    "WebControl",
    "overlay",
    "web_controls",
    "web_explorer_html",
    "web_plan",
    "web_states",
]

#: The most distinct settings one explorer may compute at build time (a bound on `make book`'s
#: time).
MAX_STATES = 1500
#: The most HTML one explorer may add to its page (CONTRIBUTING.md's budget; a page stays under 2.5
#: MB).
MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class WebControl:
    """One control of the website's explorer: what the reader moves, and the values behind each
    position."""

    name: str
    label: str
    kind: str  # "range", "select" or "checkbox"
    labels: tuple[str, ...]
    values: tuple
    what: str = ""  # what it moves, starting with `label`: its accessible name (Meaning.what)
    spoken: tuple[str, ...] = ()  # each position's value as read out, with its unit (Meaning.text)


def web_plan(explorer):
    """The website's plan for `explorer`: its class's ``web_plan``
    (:mod:`lnlib.book.explorers.plans`).

    A :class:`~lnlib.book.explorers.plans.Sweep`, or a dict of grids for its float sliders (maybe
    empty).
    """
    return explorer.web_plan


def _format(control, value) -> str:
    readout_format = getattr(control, "readout_format", None)
    if isinstance(control, (widgets.FloatSlider, widgets.FloatLogSlider)) and readout_format:
        mantissa, e, exponent = format(value, readout_format).partition("e")
        # an exponent as the notebook's slider (d3-format) and the readouts write it: 1.00e-5, not
        # Python's 1.00e-05 (truth audit 14, chapter "Epsilon")
        return f"{mantissa}e{int(exponent):+d}" if e else mantissa
    return str(value)


def web_controls(explorer, grids: dict, skip=()) -> list[WebControl]:
    """The explorer's own controls as website controls, in order; float sliders take their values
    from `grids`.

    Each carries its control's :class:`~lnlib.book.explorers.base.Meaning`: what it moves and every
    position's value as read out.
    """
    controls = []
    for name, control in explorer.controls.items():
        if name in skip:
            continue
        label = control.description or name
        options = None  # the options' own labels, for a control that offers a list
        if isinstance(control, (widgets.FloatSlider, widgets.FloatLogSlider)):
            kind, values = "range", tuple(grids[name])
            labels = tuple(_format(control, v) for v in values)
        elif isinstance(control, widgets.IntSlider):
            kind, values = "range", tuple(range(control.min, control.max + 1))
            labels = tuple(map(str, values))
        elif isinstance(
            control, (widgets.SelectionSlider, widgets.Dropdown, widgets.ToggleButtons)
        ):
            kind = "range" if isinstance(control, widgets.SelectionSlider) else "select"
            labels = options = tuple(control._options_labels)
            values = tuple(control._options_values)
        elif isinstance(control, widgets.Checkbox):
            kind, labels, values = "checkbox", ("off", "on"), (False, True)
        else:
            raise TypeError(
                f"{type(explorer).__name__}.{name}: no website control for {type(control).__name__}"
            )
        meaning = control.meaning
        spoken = tuple(
            meaning.text(v, None if options is None else options[i]) for i, v in enumerate(values)
        )
        controls.append(WebControl(name, label, kind, labels, values, meaning.what, spoken))
    return controls


def _nearest(values, value) -> int:
    if isinstance(value, (bool, str)) or not all(isinstance(v, (int, float)) for v in values):
        return list(values).index(value)
    return int(np.argmin(np.abs(np.asarray(values, dtype=float) - value)))


@dataclass
class WebStates:
    """Every setting of an explorer's website grid: the controls, and the explorer values behind
    each grid index."""

    controls: list
    # per flat grid index: the explorer's control values (dict), or None where the grid has a hole
    settings: list
    start: list  # the starting position of every control
    sweep: dict | None = None


def web_states(explorer) -> WebStates:
    """The website's controls for `explorer` and the explorer values at every flat grid index
    (row-major)."""
    plan = web_plan(explorer)
    start_values = explorer.values()
    if not isinstance(plan, Sweep):
        controls = web_controls(explorer, plan)
        settings = [
            {c.name: c.values[i] for c, i in zip(controls, index)}
            for index in itertools.product(*(range(len(c.values)) for c in controls))
        ]
        return WebStates(
            controls, settings, [_nearest(c.values, start_values[c.name]) for c in controls]
        )
    entries = list(plan.grids)
    presets = list(plan.presets)
    longest = max(len(g) for g in plan.grids.values())
    labels = {e: explorer.controls[e].description for e in entries}
    fixed = {name for values in plan.presets.values() for name in values}
    others = web_controls(
        explorer, {}, skip=fixed
    )  # menus and checkboxes; a sweep's float sliders are all swept or fixed
    value_labels = [[_format(explorer.controls[e], v) for v in plan.grids[e]] for e in entries]
    meanings = [explorer.controls[e].meaning for e in entries]
    spoken = [[m.text(v) for v in plan.grids[e]] for m, e in zip(meanings, entries)]
    controls = [
        WebControl(
            "preset",
            "start from",
            "select",
            tuple(presets),
            tuple(presets),
            "start from, a setting of every entry",
            tuple(presets),
        ),
        WebControl(
            "entry",
            "move",
            "select",
            tuple(labels.values()),
            tuple(entries),
            "move, the entry the next slider changes",
            tuple(labels.values()),
        ),
        WebControl(
            "value",
            labels[entries[0]],
            "range",
            tuple(value_labels[0]),
            tuple(plan.grids[entries[0]]),
            meanings[0].what,
            tuple(spoken[0]),
        ),
        *others,
    ]
    settings = []
    for p, e, v, *rest in itertools.product(
        range(len(presets)),
        range(len(entries)),
        range(longest),
        *(range(len(c.values)) for c in others),
    ):
        grid = plan.grids[entries[e]]
        if v >= len(grid):
            settings.append(None)
            continue
        values = {**plan.presets[presets[p]], entries[e]: grid[v]}
        settings.append(values | {c.name: c.values[i] for c, i in zip(others, rest)})
    reset = [[_nearest(plan.grids[e], plan.presets[p][e]) for e in entries] for p in presets]
    sweep = {
        "reset": reset,
        "labels": value_labels,
        "names": list(labels.values()),
        "whats": [m.what for m in meanings],  # the value slider's accessible name, per entry
        "spoken": spoken,  # its values as read out, per entry
        "size": longest,
    }
    start = [0, 0, reset[0][0], *(_nearest(c.values, start_values[c.name]) for c in others)]
    return WebStates(controls, settings, start, sweep)


def _webp(rgba: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray(rgba).save(buffer, format="webp", lossless=True, quality=50, method=4)
    return "data:image/webp;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class _Table:
    """Distinct strings, each stored once, by index."""

    def __init__(self):
        self.items, self.index = [], {}

    def add(self, key, make=lambda key: key) -> int:
        if key not in self.index:
            self.index[key] = len(self.items)
            self.items.append(make(key))
        return self.index[key]


def _render(explorer, states: WebStates) -> dict:
    """Compute every distinct setting once; return the JSON data of the page's explorer."""
    images, texts, done, table = _Table(), _Table(), {}, []
    arrays = {}
    position = {c.name: i for i, c in enumerate(states.controls)}
    for values in states.settings:
        if values is None:
            table.append(None)
            continue
        inactive = [name for name in explorer.inactive(values) if name in position]
        # A control with no effect is disabled on the page; its position must not change the
        # display.
        canonical = values | {name: states.controls[position[name]].values[0] for name in inactive}
        key = tuple(sorted(canonical.items()))
        if key not in done:
            readout, note = explorer.texts(canonical)
            background, frame = explorer.renderer.layers()
            layer = overlay(background, frame)
            ids = []
            for array in (background, layer):
                digest = hashlib.sha1(array.tobytes()).hexdigest()
                arrays.setdefault(digest, array)
                ids.append(images.add(digest, lambda d: _webp(arrays.pop(d))))
            done[key] = [
                *ids,
                texts.add(readout),
                texts.add(note),
                sorted(position[name] for name in inactive),
            ]
        table.append(done[key])
    distinct = len(done)
    if distinct > MAX_STATES:
        raise ValueError(
            f"{type(explorer).__name__} would ship {distinct} settings to the website; the budget "
            f"is {MAX_STATES}."
        )
    sizes = [len(c.values) for c in states.controls]
    if states.sweep:
        sizes[2] = states.sweep["size"]
    return {
        "sizes": sizes,
        "labels": [list(c.labels) for c in states.controls],
        "spoken": [list(c.spoken) for c in states.controls],
        "states": table,
        "images": images.items,
        "texts": texts.items,
        "sweep": states.sweep,
        "distinct": distinct,
    }


def _control_html(uid: str, i: int, control: WebControl, position: int, disabled: bool) -> str:
    cid = f"{uid}-{i}"
    label = f'<label for="{cid}">{html.escape(control.label)}</label>'
    # The accessible name says what the control moves and keeps the visible label (WCAG 2.5.3); a
    # slider's aria-valuetext reads its value with the unit, a list's options do (lnlib-explorers.js
    # keeps both current).
    common = f'id="{cid}" data-lnlib-control="{i}" aria-label="{html.escape(control.what)}"' + (
        " disabled" if disabled else ""
    )
    if control.kind == "range":
        text = html.escape(control.labels[position])
        spoken = html.escape(control.spoken[position])
        return (
            f'<span class="lnlib-web-control">{label}<input type="range" {common} min="0" '
            f'max="{len(control.values) - 1}" step="1" value="{position}" aria-valuetext="{spoken}'
            f'"><output for="{cid}">{text}</output></span>'
        )
    if control.kind == "select":
        options = "".join(
            f'<option value="{j}"{" selected" if j == position else ""}>{html.escape(t)}</option>'
            for j, t in enumerate(control.spoken)
        )
        return f'<span class="lnlib-web-control">{label}<select {common}>{options}</select></span>'
    checked = " checked" if position else ""
    return (
        '<span class="lnlib-web-control lnlib-web-check"><input type="checkbox" '
        f"{common}{checked}>{label}</span>"
    )


def _grid_line(explorer, states: WebStates, distinct: int) -> str:
    """One line, only where the page's explorer is coarser than the notebook's (module
    docstring)."""
    # in a reader's words, not the build's (learner A, 2026-11-30: "Here: presets, then one entry
    # at a time on a grid of 674 settings" read as build-system talk)
    if states.sweep:
        return (
            f"On this page the results are computed ahead for {distinct} settings: the presets, "
            "and each entry moved alone from them; in the notebook the explorer computes every "
            "setting as you make it."
        )
    sliders = [
        c
        for c in states.controls
        if isinstance(explorer.controls[c.name], (widgets.FloatSlider, widgets.FloatLogSlider))
    ]
    if not sliders:
        return ""
    positions = math.prod(len(c.values) for c in sliders)
    # the truth audit of 2026-11-30: chapter 13's one slider has 21 positions, not 63 settings
    others = f" ({distinct} settings with the other controls)" if positions != distinct else ""
    steps, moves = (
        ("the slider steps", "it moves") if len(sliders) == 1 else ("the sliders step", "they move")
    )
    return (
        f"On this page {steps} through {positions} positions computed ahead{others}; in the "
        f"notebook {moves} in finer steps."
    )


def _html(explorer, states: WebStates, data: dict) -> str:
    uid = "lnlib-web-" + hashlib.sha1(json.dumps(data["texts"]).encode()).hexdigest()[:10]
    figure = explorer.renderer.figure
    width, height = (int(round(v)) for v in figure.bbox.size)
    k = 0
    for size, position in zip(data["sizes"], states.start):
        k = k * size + position
    background, layer, readout, note, disabled = data["states"][k]
    title = html.escape(explorer.title)
    line = _grid_line(explorer, states, data["distinct"])
    payload = json.dumps(
        {
            key: data[key]
            for key in ("sizes", "labels", "spoken", "states", "images", "texts", "sweep")
        },
        ensure_ascii=False,
        separators=(",", ":"),
    ).replace("</", "<\\/")
    controls = "".join(
        _control_html(uid, i, c, p, i in disabled)
        for i, (c, p) in enumerate(zip(states.controls, states.start))
    )
    alt = html.escape(
        f"{explorer.title}: the figure at the setting of the controls above; the numbers are in "
        "the readout below."
    )
    return (
        f'<div class="lnlib-web-explorer" id="{uid}" data-explorer="{type(explorer).__name__}" '
        f'data-settings="{data["distinct"]}" data-state="{k}" data-shown="{k}" '
        f'data-title="{title}"><p class="lnlib-web-title"><b>{title}</b></p><div '
        f'class="lnlib-web-controls">{controls}</div><div class="lnlib-figure lnlib-web-figure" '
        f'style="aspect-ratio: {width} / {height}; width: {width}px; --lnlib-aspect: '
        f'{width / height:.4f}"><img class="lnlib-web-background" '
        f'src="{data["images"][background]}" width="{width}" height="{height}" alt="{alt}"><img '
        f'class="lnlib-web-overlay" src="{data["images"][layer]}" width="{width}" '
        f'height="{height}" alt="{alt}" aria-hidden="true"></div><div class="lnlib-readout">'
        f'{data["texts"][readout]}</div><div class="lnlib-note">{data["texts"][note]}</div>'
        # read out once a reader pauses (lnlib-explorers.js), not at every step of a slider
        '<p class="lnlib-announce" role="status" aria-live="polite" aria-atomic="true"></p>'
        + (f'<p class="lnlib-web-grid">{html.escape(line)}</p>' if line else "")
        + f'<script type="application/json" class="lnlib-web-data">{payload}</script></div>'
    )


def _cache_key(explorer) -> str:
    import matplotlib  # noqa: PLC0415
    import PIL  # noqa: PLC0415

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[2]  # lnlib: the library and the book
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + path.read_bytes())
    digest.update(
        repr(
            (
                type(explorer).__name__,
                sorted(explorer.values().items()),
                np.__version__,
                matplotlib.__version__,
                PIL.__version__,
                widgets.__version__,
            )
        ).encode()
    )
    return digest.hexdigest()[:24]


def web_explorer_html(explorer) -> str:
    """The precomputed explorer of the website, as one self-contained HTML fragment (module
    docstring).

    Parameters
    ----------
    explorer : lnlib.book.explorers.base.Explorer
        Any chapter's explorer; its controls' current values are the starting setting.

    Returns
    -------
    str
        HTML: native controls, the figure as a background and a moving layer, the readout, the note,
        and the states as JSON, for ``_ext/web_explorers_static/lnlib-explorers.js``.
    """
    folder = os.environ.get("LNBOOK_WEB_CACHE")
    cached = Path(folder) / f"{_cache_key(explorer)}.html" if folder else None
    if cached is not None and cached.exists():
        return cached.read_text(encoding="utf-8")
    start = explorer.values()
    states = web_states(explorer)
    data = _render(explorer, states)
    explorer.texts(start)  # leave the explorer where it started
    result = _html(explorer, states, data)
    if len(result.encode()) > MAX_BYTES:
        raise ValueError(
            f"{type(explorer).__name__}'s website version takes {len(result.encode()) / 1e6:.2f} "
            f"MB; the budget is {MAX_BYTES / 1e6:.0f} MB: coarsen its class's web_plan."
        )
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(result, encoding="utf-8")
        temporary.replace(cached)
    return result
