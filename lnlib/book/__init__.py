"""Everything in lnlib that exists for the chapters of the LayerNorm book, not for an engineer's
code.

``models`` (the networks the chapters train and measure), ``experiments`` (one module per chapter,
named by its slug), ``factcheck`` (the claims registry and its measurements), ``figures`` (pure:
data in, Figure out), ``explorers`` (ipywidgets) and ``tools`` (prose numbers, exercises, PyTorch's
stored outputs, notebook and website helpers). The library (``lnlib``'s top-level modules) never
imports this package.
"""
