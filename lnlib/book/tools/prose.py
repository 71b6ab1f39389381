"""Numbers in prose: one formatter, and the markers that carry a computed number in a markdown cell.

A chapter writes a computed number into its prose as a literal between two HTML comments that name
its glue key, ``<!--glue:mean_sample1-->2.5<!--/glue-->``. JupyterLab (with or without
jupyterlab-myst) hides the comments, so the notebook reads right before any cell runs; the website
build replaces the whole marker by myst-nb's ``glue:text`` role for that key
(``_ext/prose_markers.py``), so the site always shows the number of its own execution. The code cell
glues the value already formatted by :func:`number`, so the glued text is exactly what the prose
shows; ``python -m lnlib.book.tools.prose chapters/*.ipynb`` (run by ``make notebooks``) copies each
glued text into its markers, and ``tests/book/test_prose.py`` fails if a literal and its glued text
differ. See CONTRIBUTING.md.
"""

from __future__ import annotations

import ast
import math
import re
import sys

import numpy as np

from .notebooks import read_notebook, write_notebook

__all__ = [
    "ProseNumber",
    "Spread",
    "number",
    "significant",
    "span",
    "mean_sd",
    "glue",
    "glue_all",
    "MARKER",
    "PLUS_MINUS",
    "glued_texts",
    "fill_markers",
    "fill_notebook",
]

MARKER = re.compile(r"<!--glue:([\w-]+)-->(.*?)<!--/glue-->")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MINUS = "\u2212"
#: "±" between no-break spaces (U+00A0), so "31 ± 1" never wraps across lines.
PLUS_MINUS = "\u00a0±\u00a0"


class ProseNumber:
    """A number already written for prose: ``str`` is the text, ``repr`` (what glue stores) the text
    quoted.

    myst-nb's glue:text role passes text/plain through ``ast.literal_eval`` before printing it,
    which would turn ``13.50`` into ``13.5`` and ``38,400`` into ``(38, 400)``; a quoted string
    comes back exactly as written.

    Parameters
    ----------
    text : str
        The number as a sentence shows it, e.g. ``"8.99 × 10⁶"``.
    value : float
        The number itself, kept for code that wants to compute with it.
    """

    def __init__(self, text: str, value: float):
        self.text = text
        self.value = value

    def __repr__(self) -> str:
        return repr(self.text)

    def __str__(self) -> str:
        return self.text

    def __float__(self) -> float:
        return float(self.value)


def _power_of_ten(mantissa: str, exponent: int) -> str:
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    if exponent == 0:
        return mantissa
    return power if mantissa in ("1", "1.") else f"{mantissa} × {power}"


def number(value, spec: str = "") -> ProseNumber:
    """Format a number for a sentence: 10⁻⁵ rather than 1e-05, 8.99 × 10⁶ rather than 8.99e+06.

    Used by every chapter's glued numbers (see the module docstring).

    Parameters
    ----------
    value : int, float or numpy scalar
        The computed number.
    spec : str
        A Python format spec. Fixed (``".3f"``), grouping (``","``) and integer specs are used as
        they are; scientific specs (``".2e"``, ``".0e"``) become a power of ten. With no spec, an
        integer prints whole and a float prints its shortest repr, as a power of ten when Python
        would use an exponent.

    Returns
    -------
    ProseNumber
        The text (with a true minus sign, U+2212) and the value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is not finite.

    Examples
    --------
    >>> str(number(-1.5e-5, ".1e")), str(number(38400, ",")), str(number(-0.004, ".2f"))
    ('−1.5 × 10⁻⁵', '38,400', '0.00')
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"prose.number needs a real number (int or float), got {type(value).__name__}: "
            f"{value!r}"
        )
    if not math.isfinite(float(value)):
        raise ValueError(
            f"prose.number needs a finite number, got {value!r}: say in words what happened instead"
        )
    if isinstance(value, (int, np.integer)):
        text = format(int(value), spec)
    else:
        value = float(value)
        text = format(value, spec) if spec else repr(value)
        if "e" in text:
            mantissa, exponent = text.split("e")
            text = _power_of_ten(mantissa, int(exponent))
    if text.startswith("-") and not any(digit in text for digit in "123456789"):
        text = text[1:]  # a negative number rounded to zero reads 0, not −0.0
    text = text.replace("-", _MINUS)
    return ProseNumber(text, value)


def significant(value, digits: int = 4) -> float:
    """`value` rounded to `digits` significant digits, before :func:`number` formats it.

    A glued number computed by a long chain of floating-point operations (a model at
    initialization, chapters "Pre-norm vs post-norm" and "After 2020") can differ in its last bits
    between machines; rounding to a few significant digits first keeps its glued text the same.

    Examples
    --------
    >>> significant(0.123456789), significant(-98765.4321, 2)
    (0.1235, -99000.0)
    """
    return float(f"{float(value):.{digits}g}")


def span(values, spec: str = "") -> ProseNumber:
    """The range of `values` for a sentence: "0.74 to 0.86", or one number when both ends read the
    same.

    A range over shapes or runs whose ends round to the same text would read "3.2 to 3.2"; it reads
    "3.2". Used by chapter "Memory and speed" for ranges over shapes.

    Parameters
    ----------
    values : sequence of real numbers
        One or more, all finite; integers stay integers (as in :func:`number`).
    spec : str
        The format spec of :func:`number`, applied to both ends.

    Returns
    -------
    ProseNumber
        The text, and the value of the range's low end (also when both ends read alike).

    Examples
    --------
    >>> str(span([0.86, 0.74, 0.8], ".2f"))
    '0.74 to 0.86'
    >>> str(span([3.21, 3.18], ".1f"))
    '3.2'
    >>> str(span([1234, 5678], ","))
    '1,234 to 5,678'
    >>> str(span([-2.0, 1.5], ".1f"))
    '−2.0 to 1.5'
    """
    values = list(values)
    if not values or not all(math.isfinite(float(v)) for v in values):
        raise ValueError(f"span needs one or more finite values; got {values!r}")
    low, high = number(min(values), spec), number(max(values), spec)
    text = low.text if low.text == high.text else f"{low.text} to {high.text}"
    return ProseNumber(text, low.value)


class Spread(ProseNumber):
    """A mean over seeds written with its standard deviation, ``"24 ± 2"`` (see :func:`mean_sd`).

    Attributes
    ----------
    value, sd : float
        The mean and the sample standard deviation (``ddof=1``) of the values.
    n : int
        How many values (seeds).
    """

    def __init__(self, text: str, value: float, sd: float, n: int):
        super().__init__(text, value)
        self.sd, self.n = sd, n

    @property
    def standard_error(self) -> float:
        """How far the mean moves between draws of `n` seeds: sd / √n."""
        return self.sd / math.sqrt(self.n)

    def agrees_with(self, other: "Spread", z: float = 4.0) -> bool:
        """Whether two means differ by at most `z` standard errors of their difference (a rerun's
        check)."""
        return abs(self.value - other.value) <= z * math.hypot(
            self.standard_error, other.standard_error
        )


def mean_sd(values) -> Spread:
    """Mean ± standard deviation over seeds, at the precision the seeds support (chapter "Pre-norm
    vs post-norm").

    The mean is rounded at the finest decimal place whose unit is at least its standard error
    (sd / √n), tens or hundreds included: another draw of seeds moves the mean by about one
    standard error, and so does another CPU's rounding in a chaotic run such as training (it acts
    like another draw), so a rerun changes the last digit given by about one unit at most, and no
    finer digit is given. The standard deviation is rounded at the same place, keeping at least
    one significant digit. Values that are all equal are given as they are, ``± 0``.
    The spaces around "±" are no-break spaces (:data:`PLUS_MINUS`), so a line never breaks
    inside "31 ± 1"; the doctests below show them as ``\\xa0``.

    Examples
    --------
    >>> str(mean_sd([30.0, 31.0, 32.0, 29.5, 31.5, 30.5, 32.5, 30.0]))  # 30.875, sd 1.06, se 0.37
    '31\\xa0±\\xa01'
    >>> str(mean_sd(12 + np.arange(64) / 640))  # 12.05, sd 0.029, se 0.0036
    '12.05\\xa0±\\xa00.03'
    >>> str(mean_sd([50.0, 70.0, 90.0, 60.0, 80.0, 55.0, 75.0, 48.0]))  # 66, sd 15, se 5.3
    '70\\xa0±\\xa020'
    >>> # mean -0.0014: reads 0.00
    >>> str(mean_sd([-0.02, 0.01, -0.01, 0.015, -0.005, 0.0, -0.012, 0.011]))
    '0.00\\xa0±\\xa00.01'
    """
    values = np.asarray(values, dtype=float).ravel()
    if values.size < 2 or not np.all(np.isfinite(values)):
        raise ValueError(
            f"mean_sd needs at least two finite values (one per seed); got {values.tolist()!r}"
        )
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    if sd == 0:
        return Spread(f"{mean:g}{PLUS_MINUS}0".replace("-", _MINUS), mean, sd, values.size)
    place = -math.ceil(math.log10(sd / math.sqrt(values.size)))  # decimals; negative: tens, ...
    sd_place = max(place, -math.floor(math.log10(float(f"{sd:.0e}"))))
    text = f"{_rounded(mean, place)}{PLUS_MINUS}{_rounded(sd, sd_place)}".replace("-", _MINUS)
    return Spread(text, mean, sd, values.size)


def _rounded(value: float, place: int) -> str:
    """`value` rounded at `place` decimals (a negative place rounds to tens, hundreds, ...); zero
    unsigned."""
    text = f"{round(value, place):.{max(place, 0)}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


#: The MIME-type prefix myst-nb 1.x gives a value glued with ``display=False``
#: (``myst_nb.ext.glue``).
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value, display: bool = True) -> None:
    """Glue `value` under `name` for the prose, exactly as ``myst_nb.glue`` does.

    The same display call as myst-nb 1.4's ``myst_nb.ext.glue.glue`` (``tests/book/test_prose.py``
    compares the two), without its import: that module imports nbformat, whose schema validation
    imports jsonschema's format checkers, about 1.5 s in every kernel that runs a chapter.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = dict(name=name, mime_prefix=prefix)
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def glue_all(numbers: dict) -> None:
    """Glue every ``{key: ProseNumber}`` of a result for the prose, shown nowhere (:func:`glue`)."""
    for key, value in numbers.items():
        glue(key, value, display=False)


def glued_texts(nb: dict) -> dict[str, str]:
    """Every key glued in an executed notebook, with the text it shows (its text/plain output)."""
    texts = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            record = out.get("metadata", {}).get("scrapbook", {})
            if "name" in record:
                stored = "".join(out["data"][record.get("mime_prefix", "") + "text/plain"])
                texts[record["name"]] = _unquoted(stored)
    return texts


def _unquoted(stored: str) -> str:
    """The text a glued ProseNumber shows (its repr is a quoted string); other values as stored."""
    try:
        value = ast.literal_eval(stored)
    except (ValueError, SyntaxError):
        return stored
    return value if isinstance(value, str) else stored


def fill_markers(markdown: str, texts: dict[str, str]) -> str:
    """Put each marker's glued text between its comments; a key that was never glued raises
    KeyError."""

    def fill(match: re.Match) -> str:
        key = match.group(1)
        if key not in texts:
            raise KeyError(f"the prose names glue key {key!r}, which no cell of the notebook glues")
        return f"<!--glue:{key}-->{texts[key]}<!--/glue-->"

    return MARKER.sub(fill, markdown)


def fill_notebook(path) -> bool:
    """Fill the markers of one executed notebook in place; return whether anything changed."""
    nb = read_notebook(path)
    texts = glued_texts(nb)
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        old = "".join(cell["source"])
        new = fill_markers(old, texts)
        if new != old:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    if changed:
        write_notebook(path, nb)
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        if fill_notebook(name):
            print(f"{name}: prose numbers updated")
