"""A progress bar for the computations a reader waits for in JupyterLab.

Any cell that takes more than a few seconds says what it is doing while it runs: tqdm's notebook bar
in a reader's kernel. The website build and the tests (``LNBOOK_WEBSITE=1``) get the plain iterable,
so their outputs stay what the committed notebooks hold.
"""

from __future__ import annotations

from collections.abc import Iterable

from lnlib.book.tools.notebooks import website_build

__all__ = ["progress"]


def progress(items: Iterable, description: str, total: int | None = None, unit: str = "it"):
    """`items`, with a bar that names `description` in a live notebook; `items` itself in the
    website build.

    Parameters
    ----------
    items : iterable
        What the computation loops over.
    description : str
        What the loop computes, in a few words (shown beside the bar).
    total : int, optional
        The number of items, when ``len(items)`` cannot tell.
    unit : str, default "it"
        What one item is called ("run", "profile").

    Examples
    --------
    >>> import os
    >>> os.environ["LNBOOK_WEBSITE"] = "1"
    >>> progress([1, 2, 3], "adding") == [1, 2, 3]
    True
    >>> del os.environ["LNBOOK_WEBSITE"]
    """
    if website_build():
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=description, total=total, unit=unit)
