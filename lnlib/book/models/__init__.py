"""The networks the chapters build, train and measure: a deep random stack, a tiny transformer and
its LayerNorm placements, DyT, and the training runs."""
