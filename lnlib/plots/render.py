"""Fast rendering for the explorers: redraw only what moved.

A full matplotlib draw of a two-panel figure takes tens of milliseconds
(ticks and text dominate); an explorer must answer a slider in well under
50 ms. :class:`FastRenderer` draws the static parts (axes, ticks, labels)
once, keeps that picture, and on each update pastes it back and draws only
the artists that change (blitting), then encodes the PNG. The website's
precomputed explorers (:mod:`lnlib.widgets.web`) use the same two layers:
:meth:`FastRenderer.layers` gives the static picture and the finished frame.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

__all__ = ["FastRenderer", "encode_png", "overlay"]


def overlay(background: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The pixels of `frame` that differ from `background`, on a transparent canvas: laid over the background, the frame.

    Both are (height, width, 4) uint8 RGBA arrays (:meth:`FastRenderer.layers`). The explorers send only this
    moving layer per update, in JupyterLab and on the website.
    """
    moved = np.any(frame != background, axis=2)
    layer = np.zeros_like(frame)
    layer[moved] = frame[moved]
    return layer


def encode_png(rgba: np.ndarray) -> bytes:
    """RGBA pixels as PNG bytes, encoded for speed (zlib level 1)."""
    buffer = io.BytesIO()
    Image.fromarray(rgba).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


class FastRenderer:
    """Render `figure` to PNG, redrawing only `dynamic` artists between calls.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        A free-standing figure (``new_figure(managed=False)``). Its layout is
        computed once at the first render, then frozen.
    dynamic : iterable of Artist
        The artists an update changes. Anything else (limits, ticks, titles)
        is treated as static: after changing it, call :meth:`invalidate`.
    """

    def __init__(self, figure, dynamic):
        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.dynamic = list(dynamic)
        for artist in self.dynamic:
            artist.set_animated(True)
        self._background = None

    def invalidate(self) -> None:
        """Redraw the static parts at the next render (after changing limits, ticks or titles)."""
        self._background = None

    def _restore_background(self) -> None:
        if self._background is None:
            self.canvas.draw()
            self.figure.set_layout_engine("none")
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        else:
            self.canvas.restore_region(self._background)

    def _draw_dynamic(self) -> None:
        for artist in self.dynamic:
            (artist.axes or self.figure).draw_artist(artist)

    def png(self) -> bytes:
        """The figure as PNG bytes, with the dynamic artists in their current state."""
        self._restore_background()
        self._draw_dynamic()
        return encode_png(np.asarray(self.canvas.buffer_rgba()))

    def layers(self) -> tuple[np.ndarray, np.ndarray]:
        """The static background and the finished frame, as two (height, width, 4) uint8 RGBA arrays.

        Where the two differ, the dynamic artists drew (:func:`overlay`); the explorers send only those
        pixels per update.
        """
        self._restore_background()
        background = np.array(self.canvas.buffer_rgba())
        self._draw_dynamic()
        return background, np.array(self.canvas.buffer_rgba())
