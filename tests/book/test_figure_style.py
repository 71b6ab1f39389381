"""The book's figure style (lnlib.book.figures.style): legible on the website's column, one look for
every figure."""

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


def _phone_figures():
    """The figures of chapters 05 and 12 that a phone showed at about 5 px (below the website's
    legibility rule, style.phone_text_px), built as the chapters build them."""
    import numpy as np

    from lnlib.book.figures import after_2020, epsilon
    from lnlib.book.models.dyt import fit_tanh, heavy_tailed_tokens, s_curve
    from lnlib.book.models.placements import logit_statistics, profile_table
    from lnlib.book.models.transformer import init_layer
    from lnlib.variants import FRAMEWORK_EPS, sample_variance

    pattern = np.array([0.0, 1.0, -1.0, 0.0])
    rng = np.random.default_rng(0)
    w, x = init_layer(rng, 64), rng.normal(size=(2, 16, 64))
    scales = [1, 2, 4, 8, 16, 32]
    runs = [
        [
            logit_statistics(x, {**w, "Wq": w["Wq"] * s, "Wk": w["Wk"] * s}, qk_norm=q)
            for s in scales
        ]
        for q in (False, True)
    ]
    heavy = s_curve(heavy_tailed_tokens(256, 64, df=2.0, seed=0))
    normal = s_curve(heavy_tailed_tokens(256, 64, df=np.inf, seed=0))
    return {
        "05 output variance": lambda: epsilon.output_variance_figure(FRAMEWORK_EPS),
        "05 companion": lambda: epsilon.epsilon_companion(
            {f"δ = {s:g}": float(sample_variance(1.0 + s * pattern)) for s in (1.0, 1e-3)},
            framework_eps=FRAMEWORK_EPS,
        ),
        "05 explorer": lambda: epsilon.epsilon_figure(pattern, framework_eps=FRAMEWORK_EPS)[0],
        "12 placements": lambda: after_2020.placements_figure(profile_table(4, 8, seeds=2)),
        "12 summary": lambda: after_2020.summary_figure(profile_table(4, 8, seeds=2)),
        "12 norms": lambda: after_2020.summary_figure(
            profile_table(4, 8, seeds=2),
            rms=profile_table(4, 8, seeds=2, norm="rms"),
            measures=("top", "slope", "grad_spread"),
        ),
        "12 qk": lambda: after_2020.qk_figure(scales, *runs, runs[0][0]["bound"], tokens=16),
        "12 dyt": lambda: after_2020.dyt_figure(
            heavy, fit_tanh(*heavy), normal, fit_tanh(*normal), width=64
        ),
    }


@pytest.mark.parametrize("name", list(_phone_figures()))
def test_figures_read_on_a_phone(name):
    """A phone shows a figure about 350 CSS px wide: its smallest text must still be
    PHONE_MIN_TEXT_PX."""
    from lnlib.book.figures.style import PHONE_MIN_TEXT_PX, layout_problems, phone_text_px

    fig = _phone_figures()[name]()
    try:
        assert fig.get_figwidth() <= COLUMN_WIDTH + 1e-9
        assert phone_text_px(fig) >= PHONE_MIN_TEXT_PX, name
        assert layout_problems(fig) == [], name
    finally:
        plt.close(fig)


def _luminance(hex_colour: str) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour ``#RRGGBB``."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_the_greys_read_apart_from_each_other_and_from_blue():
    """The greys (chapter 10's sharing grid: the two shades of the other sets; outside the batch is
    white, outlined) are told apart by lightness alone (a reader saw two old greys as one)."""
    from lnlib.book.figures.style import GREYS, PALETTE

    shades = [*GREYS, PALETTE["input"]]
    for lighter, darker in zip(shades, shades[1:]):
        contrast = (_luminance(lighter) + 0.05) / (_luminance(darker) + 0.05)
        assert contrast >= 1.4, (lighter, darker, contrast)
    assert abs(_luminance("#FFFFFF") - 1) < 1e-12 and _luminance("#000000") == 0
