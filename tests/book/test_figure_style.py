"""The book's figure style (lnlib.book.figures.style): legible on the website's column, one look for every figure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lnlib.book.figures.style import COLUMN_WIDTH, DPI, new_figure, panel_grid  # noqa: E402


def test_figures_are_sharp_opaque_and_no_wider_than_the_column():
    fig, _ = new_figure(1, 2)
    assert fig.dpi >= 150 and DPI >= 150
    assert (
        fig.get_figwidth() <= COLUMN_WIDTH and fig.get_facecolor()[3] == 1.0
    )  # opaque: readable in dark mode
    plt.close(fig)
    with pytest.raises(ValueError, match="lay the panels out in more rows"):
        new_figure(1, 5, figsize=(10.0, 2.6))


def test_panel_grid_reflows_small_multiples_into_rows():
    fig, axes = panel_grid(5, ncols=2, panel=(3.0, 2.0))
    assert len(axes) == 5 and len(fig.axes) == 5  # the sixth cell is removed
    assert fig.get_figwidth() <= COLUMN_WIDTH and fig.get_figheight() == pytest.approx(6.0)
    plt.close(fig)
    fig, axes = panel_grid(1, ncols=3)
    assert len(axes) == 1 and fig.get_figwidth() <= COLUMN_WIDTH
    plt.close(fig)
