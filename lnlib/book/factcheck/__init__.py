"""The fact-check chapter: ``claims`` is the registry (statements, sources, verdicts),
``measurements`` computes the evidence for each."""
