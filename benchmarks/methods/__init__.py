"""A method's cost against a peer, its own options or the paper (``python -m benchmarks.methods.<script>``)."""
