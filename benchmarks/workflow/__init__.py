"""The workflow's own cost and scale (``python -m benchmarks.workflow.<script>``)."""
