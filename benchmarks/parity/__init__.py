"""Our numbers against a reference implementation or a paper table (``python -m benchmarks.parity.<script>``)."""
