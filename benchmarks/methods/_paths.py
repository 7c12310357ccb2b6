"""Paths for the scripts of this folder, run as ``python benchmarks/<folder>/<script>.py``: puts
benchmarks/ (the shared ``_timing`` helper) and workflow/ (milbench) on ``sys.path``.  The same
file sits in benchmarks/methods, benchmarks/workflow and benchmarks/parity (a script's own folder
is the only one Python adds by itself)."""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"      # the data sets beside the checkout, as tests/conftest.py
for _path in (REPO / "benchmarks", REPO / "workflow"):
    if str(_path) not in sys.path:
        sys.path.insert(1, str(_path))
