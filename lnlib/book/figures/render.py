"""Fast rendering for the explorers: redraw only what moved.

A full matplotlib draw of a two-panel figure takes tens of milliseconds
(ticks and text dominate); an explorer must answer a slider in well under
50 ms. :class:`FastRenderer` draws the static parts (axes, ticks, labels)
once, keeps that picture, and on each update pastes it back and draws only
the artists that change (blitting), then encodes the PNG. The website's
precomputed explorers (:mod:`lnlib.book.explorers.web`) use the same two layers:
:meth:`FastRenderer.layers` gives the static picture and the finished frame.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ..tools.notebooks import website_build

__all__ = ["LIVE_DPI", "FastRenderer", "encode_png", "overlay"]

#: Pixels per inch of an explorer's figure in a live kernel. JupyterLab shows the figure at its
#: natural size, where 110 dpi puts 9 pt text at about 14 px; fewer pixels make every update cheaper
#: to draw, encode, send and decode (chapters 08 and 12: median 40 -> 31 ms and 35 -> 29 ms from
#: input to figure, BENCHMARKS.md, "Explorers in JupyterLab"). The website's precomputed explorers
#: keep the page figures' 150 dpi, since the page shrinks them to its column
#: (:mod:`lnlib.book.figures.style`).
LIVE_DPI = 110

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def overlay(background: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The pixels of `frame` that differ from `background`, on a transparent canvas: laid over the
    background, the frame.

    Both are (height, width, 4) uint8 RGBA arrays, C-contiguous (:meth:`FastRenderer.layers`). The
    explorers send only this moving layer per update, in JupyterLab and on the website.
    """
    # One uint32 per pixel: a single comparison and a single select, 20-30 times faster than
    # comparing the four channels and indexing with a boolean mask (6-25 ms per update, the largest
    # part of the Python side).
    pixels, still = frame.view(np.uint32), background.view(np.uint32)
    return np.where(pixels != still, pixels, 0).view(np.uint8)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(rgba: np.ndarray) -> bytes:
    """RGBA pixels (height, width, 4) uint8 as PNG bytes, encoded for speed.

    Every row unfiltered (PNG filter type 0) and deflated at zlib level 1. Pillow's encoder tries a
    filter per row, which makes it 1.5-2.5 times slower on the explorers' mostly transparent moving
    layers (2.5-7 ms instead of 3-11 ms per update, quiet machine, BENCHMARKS.md) and its output no
    smaller.
    """
    height, width, _ = rgba.shape
    rows = np.zeros((height, width * 4 + 1), np.uint8)  # a leading 0 per row: no filter
    rows[:, 1:] = rgba.reshape(height, -1)
    header = struct.pack(
        ">IIBBBBB", width, height, 8, 6, 0, 0, 0
    )  # 8 bits per channel, RGBA, no interlace
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + _chunk(b"IEND", b"")
    )


class FastRenderer:
    """Render `figure` to PNG, redrawing only `dynamic` artists between calls.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        A free-standing figure (``new_figure(managed=False)``). Its layout is
        computed once at the first render, then frozen. Drawn at :data:`LIVE_DPI`
        in a kernel, at its own dpi in the website build.
    dynamic : iterable of Artist
        The artists an update changes. Anything else (limits, ticks, titles)
        is treated as static: after changing it, call :meth:`invalidate`.
    """

    def __init__(self, figure, dynamic):
        if not website_build():
            figure.set_dpi(LIVE_DPI)
        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.dynamic = list(dynamic)
        for artist in self.dynamic:
            artist.set_animated(True)
        self._background = None
        self._static = None  # the background as an array, made once per background

    def invalidate(self) -> None:
        """Redraw the static parts at the next render (after changing limits, ticks or titles)."""
        self._background = None

    def _restore_background(self) -> None:
        if self._background is None:
            self.canvas.draw()
            self.figure.set_layout_engine("none")
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            self._static = np.array(self.canvas.buffer_rgba())
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
        """The static background and the finished frame, as two (height, width, 4) uint8 RGBA
        arrays.

        Where the two differ, the dynamic artists drew (:func:`overlay`); the explorers send only
        those pixels per update. The background is the same array, not to be modified, until
        :meth:`invalidate`.
        """
        self._restore_background()
        self._draw_dynamic()
        return self._static, np.array(self.canvas.buffer_rgba())
