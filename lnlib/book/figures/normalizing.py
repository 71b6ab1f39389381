"""Figures for the chapter "Normalizing": the plane x + y + z = 0 seen face on, and the circle of
radius √3 in it.

For H = 3 the normalized vector lies in the plane orthogonal to (1, 1, 1). Drawn in the
orthonormal basis of :func:`lnlib.book.experiments.normalizing.plane_basis`, that plane is an
ordinary 2-D picture: looking down the all-ones direction, an input x and its centred version x - μ1
are the same point, and x̂ is that point pushed (or pulled) along its ray onto the circle of radius
√3.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Circle

from ...forward import layer_norm
from ..experiments.normalizing import plane_basis, plane_coordinates
from .style import PALETTE, new_figure

__all__ = [
    "PlaneView",
    "EntriesView",
    "plane_limit",
    "normalizing_figure",
    "sphere_figure",
    "normalizing_companion",
]

SIZE = 3
RADIUS = np.sqrt(SIZE)
AXIS_LABELS = ("$x_1$", "$x_2$", "$x_3$")


def plane_limit(low: float, high: float) -> float:
    """Half-width of a plane view that holds the projection of every x in the cube [low, high]³, and
    the circle (chapter "Normalizing").

    The longest projection of a cube point is at a corner such as (high, low, low): its centred
    vector is (2d, -d, -d)/3 with d = high - low, of length d·√(2/3).
    """
    return 1.1 * max(RADIUS, (high - low) * np.sqrt(2.0 / 3.0))


class PlaneView:
    """The plane x + y + z = 0 face on, with the circle of radius √3, redrawn in place for each
    input (chapter "Normalizing").

    Static: the circle, and the directions of the three coordinate axes as seen in the plane
    (the projections of e1, e2, e3, 120° apart). Dynamic: the projection of x (a blue dot),
    its normalized image x̂ (an orange star) and the ray from the origin through both.

    Parameters
    ----------
    ax : matplotlib Axes
    limit : float
        Half-width of the square view; fixed, so only the data moves.
    """

    def __init__(self, ax, limit: float):
        self.ax = ax
        ax.add_patch(
            Circle(
                (0, 0),
                RADIUS,
                fill=False,
                ls="--",
                lw=1.5,
                color=PALETTE["neutral"],
                label="circle of radius √3",
            )
        )
        for direction, label in zip(plane_coordinates(np.eye(SIZE)), AXIS_LABELS):
            tip = direction / np.linalg.norm(direction) * 0.92 * limit
            ax.plot(
                [-tip[0], tip[0]], [-tip[1], tip[1]], color=PALETTE["reference"], lw=0.8, alpha=0.7
            )
            ax.annotate(
                f"+{label}", tip, color=PALETTE["reference"], ha="center", va="center", fontsize=9
            )
        (self.ray,) = ax.plot([], [], ":", color=PALETTE["neutral"], lw=1)
        (self.projection,) = ax.plot(
            [], [], "o", color=PALETTE["input"], ms=8, label="projection of x (= x − μ1)"
        )
        (self.xhat,) = ax.plot(
            [], [], "*", color=PALETTE["output"], ms=14, mec=PALETTE["neutral"], mew=0.5, label="x̂"
        )
        ax.set(
            xlim=(-limit, limit),
            ylim=(-limit, limit),
            aspect="equal",
            xlabel="coordinate along $u_1$",
            ylabel="coordinate along $u_2$",
        )
        ax.grid(False)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [self.ray, self.projection, self.xhat]

    def update(self, x, eps: float) -> None:
        """Show the projection of `x` and, when it is defined, its normalized image; a constant x
        with eps = 0 shows only the origin."""
        x = np.asarray(x, dtype=float)
        point = plane_coordinates(x)
        self.projection.set_data([point[0]], [point[1]])
        if np.ptp(x) == 0 and eps == 0:
            self.xhat.set_data([], [])
            self.ray.set_data([], [])
            return
        image = plane_coordinates(layer_norm(x, eps=eps))
        far = point if np.linalg.norm(point) > np.linalg.norm(image) else image
        self.xhat.set_data([image[0]], [image[1]])
        self.ray.set_data([0, far[0]], [0, far[1]])


class EntriesView:
    """The entries of x and of x̂ side by side as bars, with fixed limits, redrawn in place (chapter
    "Normalizing").

    Parameters
    ----------
    ax : matplotlib Axes
    value_range : (float, float)
        The range of the entries of x (an explorer's slider range).
    """

    def __init__(self, ax, value_range):
        index = np.arange(1, SIZE + 1)
        self.x_bars = ax.bar(
            index - 0.2, np.zeros(SIZE), width=0.4, color=PALETTE["input"], label="$x_i$"
        )
        self.xhat_bars = ax.bar(
            index + 0.2, np.zeros(SIZE), width=0.4, color=PALETTE["output"], label="$\\hat x_i$"
        )
        ax.axhline(0.0, color=PALETTE["neutral"], lw=1)
        low, high = min(value_range[0], -RADIUS), max(value_range[1], RADIUS)
        pad = 0.08 * (high - low)
        ax.set(
            xticks=index,
            xticklabels=AXIS_LABELS,
            xlabel="feature",
            ylabel="value",
            ylim=(low - pad, high + pad),
        )
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2)

    @property
    def artists(self) -> list:
        """The artists :meth:`update` changes."""
        return [*self.x_bars, *self.xhat_bars]

    def update(self, x, xhat) -> None:
        """Set the bar heights; `xhat` None (undefined) shows no x̂ bars."""
        xhat = np.zeros(SIZE) if xhat is None else xhat
        for bar, height in zip(self.x_bars, x):
            bar.set_height(height)
        for bar, height in zip(self.xhat_bars, xhat):
            bar.set_height(height)


def normalizing_figure(x, eps: float = 0.0, *, value_range=(-3.0, 3.0), managed: bool = True):
    """The plane view of one input of three features, and its entries before and after normalizing
    (chapter "Normalizing").

    Parameters
    ----------
    x : array_like of 3 floats
    eps : float, default 0
    value_range : (float, float)
        The range the entries may take; it fixes the axes.
    managed : bool
        As in :func:`lnlib.book.figures.style.new_figure`.

    Returns
    -------
    (Figure, (PlaneView, EntriesView))
    """
    fig, (left, right) = new_figure(
        1, 2, figsize=(5.4, 3.0), managed=managed, width_ratios=(1.5, 1.0)
    )
    plane = PlaneView(left, plane_limit(*value_range))
    left.set_title("plane x₁ + x₂ + x₃ = 0, seen along (1, 1, 1)")
    left.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, fontsize=7
    )  # outside: the moving dot would cover it
    entries = EntriesView(right, value_range)
    x = np.asarray(x, dtype=float)
    plane.update(x, eps)
    entries.update(x, None if np.ptp(x) == 0 and eps == 0 else layer_norm(x, eps=eps))
    return fig, (plane, entries)


def sphere_figure(inputs, eps: float = 0.0):
    """Many inputs in R³ and their normalized images: in 3-D, and in the plane x + y + z = 0
    (chapter "Normalizing").

    Left: the inputs (blue), the direction (1, 1, 1) that centring removes, the plane through the
    origin orthogonal to it, and the images x̂ (orange), all on the circle of radius √3 in that
    plane. Right: the same plane face on, each input's projection joined to its image by a segment
    along its ray.

    Parameters
    ----------
    inputs : array_like of shape (n, 3)
        Inputs, none of them constant when ``eps=0``.
    eps : float, default 0
    """
    inputs = np.asarray(inputs, dtype=float)
    images = layer_norm(inputs, eps=eps)
    fig, axes = new_figure(1, 2, figsize=(5.4, 3.8))
    axes[0].remove()
    ax3d = fig.add_subplot(1, 2, 1, projection="3d")
    fig.set_layout_engine("none")  # placed by hand: the constrained layout clips a 3-D z label
    ax3d.set_position((0.13, 0.2, 0.42, 0.72))
    axes[1].set_position((0.66, 0.3, 0.31, 0.56))
    _draw_sphere_3d(ax3d, inputs, images)
    points, targets = plane_coordinates(inputs), plane_coordinates(images)
    limit = 1.1 * max(RADIUS, np.abs(points).max())
    plane = PlaneView(axes[1], limit)
    for start, end in zip(points, targets):
        axes[1].plot(
            [start[0], end[0]], [start[1], end[1]], color=PALETTE["neutral"], lw=0.5, alpha=0.4
        )
    plane.projection.set_data(points[:, 0], points[:, 1])
    plane.projection.set_markersize(5)
    plane.projection.set_markerfacecolor(
        "none"
    )  # hollow: the legend tells projections from the inputs' dots
    plane.xhat.set_data(targets[:, 0], targets[:, 1])
    plane.xhat.set_markersize(9)
    axes[1].set_title("the plane, face on:\nevery x̂ is on the circle")
    # One legend for both panels, below them: inside the 3-D box it would cover points.
    handles_3d, labels_3d = ax3d.get_legend_handles_labels()
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(
        handles_3d[:2] + handles, labels_3d[:2] + labels, loc="lower center", ncols=3, fontsize=8
    )
    return fig


def _draw_sphere_3d(ax, inputs, images) -> None:
    angle = np.linspace(0, 2 * np.pi, 121)
    basis_u, basis_v = plane_basis(SIZE)
    circle = RADIUS * (np.outer(np.cos(angle), basis_u) + np.outer(np.sin(angle), basis_v))
    reach = 1.05 * np.abs(inputs).max()
    ax.plot_trisurf(
        *_disk(basis_u, basis_v, 0.9 * reach).T, color=PALETTE["reference"], alpha=0.15, linewidth=0
    )
    ax.plot(*circle.T, "--", color=PALETTE["neutral"], lw=1.2)
    ax.plot(
        *(np.outer([-1, 1], np.ones(SIZE)) * reach / np.sqrt(SIZE)).T,
        color=PALETTE["mean"],
        lw=1.5,
        label="direction (1, 1, 1)",
    )
    ax.scatter(*inputs.T, color=PALETTE["input"], s=14, depthshade=False, label="inputs x")
    ax.scatter(
        *images.T, color=PALETTE["output"], s=30, marker="*", depthshade=False, label="images x̂"
    )
    ax.set(xlabel="$x_1$", ylabel="$x_2$", title="inputs in R³ and their images x̂")
    ax.zaxis.set_rotate_label(False)  # upright: rotated, the subscript 3 reads like an ε
    ax.set_zlabel("$x_3$", rotation=0)
    ax.view_init(elev=25, azim=-135)
    ax.locator_params(nbins=4)


def _disk(u, v, radius):
    angle = np.linspace(0, 2 * np.pi, 41)
    rim = radius * (np.outer(np.cos(angle), u) + np.outer(np.sin(angle), v))
    return np.vstack([np.zeros(SIZE), rim])


def normalizing_companion(examples: dict, *, ncols: int = 3):
    """Small multiples of the plane view, one per example: the static stand-in for the explorer
    (chapter "Normalizing").

    Parameters
    ----------
    examples : dict of str to (array_like of 3 floats, float)
        Title of each panel, and the input x and eps it shows; a title "what: why" is set on two
        lines.
    ncols : int, default 3
    """
    nrows = -(-len(examples) // ncols)
    fig, axes = new_figure(nrows, ncols, figsize=(1.8 * ncols, 2.1 * nrows + 0.6))
    axes = np.atleast_1d(axes).ravel()
    limit = 1.1 * max(
        RADIUS, max(np.linalg.norm(plane_coordinates(x)) for x, _ in examples.values())
    )
    for ax, (title, (x, eps)) in zip(axes, examples.items()):
        PlaneView(ax, limit).update(x, eps)
        ax.set_title(
            title.replace(": ", ":\n", 1), fontsize=9
        )  # "what: why" on two lines fits a third of the column
        ax.set(xlabel="", ylabel="")
    for ax in axes[len(examples) :]:
        ax.remove()
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=3, fontsize=9
    )
    fig.supxlabel("coordinate along $u_1$ in the plane $x_1 + x_2 + x_3 = 0$")
    fig.supylabel("coordinate along $u_2$")
    return fig
