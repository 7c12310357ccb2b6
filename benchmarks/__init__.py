"""Benchmark scripts, run as modules from the repository root:
``python -m benchmarks.<folder>.<script>`` (folders ``methods``, ``workflow``, ``parity``).
milbench comes from the environment (the README's ``pip install -e .``), so no script changes
``sys.path``.  ``REPO`` is the checkout and ``DATA`` the data sets beside it (as tests/conftest.py)."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
