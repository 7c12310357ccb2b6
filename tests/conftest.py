import http.server
import os
import shutil
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
from milbench.testing import toy_bags  # noqa: E402,F401 - the suite's bag generator

REPO = Path(__file__).resolve().parents[1]
#: the archived FULL run of MIDR's Table 1 the reproduction tests read (the earlier
#: configuration, five dimensions and fits capped at 100 iterations)
MIDR_RUN = "midr"
DATA = REPO.parent / "shared" / "data"

#: the files of whole Snakemake runs, longest first: collected first, so that each of the two
#: workers (pyproject's ``-n 2 --dist loadfile``) starts one at once instead of the SLURM run
#: being left for last
LONG_FILES = ("test_slurm.py", "test_reruns.py", "test_docs_commands.py", "test_own_method.py",
              "test_workflow_e2e.py", "test_report.py", "test_data_formats.py",
              "test_reproduction_parts.py", "test_console_errors.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: (LONG_FILES.index(item.path.name)
                                 if item.path.name in LONG_FILES else len(LONG_FILES)))


def tiny_config():
    """musk1 (offline copy), 2 folds, MILR + MI-Simple: 2 method jobs of 2 cells (reruns, SLURM tests)."""
    return {"offline": True, "experiments": {"tiny": {
        "datasets": ["musk1"],
        "protocol": {"kind": "kfold", "folds": 2, "repeats": 1, "seed": 0},
        "selectors": [{"name": "none"}],
        "classifiers": [{"name": "milr", "C": 1.0}, {"name": "mi-simple"}],
    }}}


def copy_workflow(root):
    """A copy of the workflow (Snakefile, workflow/, resources/, config/, envs/) in ``root``,
    whose library a test may edit; returns ``root``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    for d in ("workflow", "resources", "config", "envs"):
        if (REPO / d).exists():
            shutil.copytree(REPO / d, root / d, ignore=ignore)
    return root


@pytest.fixture(scope="session")
def shared_data():
    if not DATA.exists():
        pytest.skip("../shared/data absent (fresh clone): real-data test skipped")
    return DATA


@pytest.fixture
def http_mirror(shared_data):
    """../shared/data served over loopback HTTP (the download path's mirror)."""
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(shared_data))
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def poisoned_bags(n_bags=40, n_inst=6, d=4, a=3.0, seed=0):
    """Positive bags hold a witness near (a, a) (plus a companion at (−a, −a)); negative bags hold
    (a, −a) and (−a, a) instead.  Per-feature means, minima and maxima have the same distribution
    in both classes, so mean (or min/max) pooling carries no signal; only the witness does."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        pos = i % 2 == 0
        X = rng.normal(size=(n_inst, d))
        s = 1.0 if pos else -1.0
        X[0, :2] = [a, s * a]
        X[1, :2] = [-a, -s * a]
        X[:2, :2] += rng.normal(scale=0.3, size=(2, 2))
        bags.append(X)
        y.append(int(pos))
    return bags, np.array(y)


def synthetic_mil(seed=0, n_bags=40, d=5, bag_size=(3, 7)):
    """Bags of N(0, 0.5² I) instances; a positive bag holds ≥ 1 instance shifted by +3 in x0."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        k = int(rng.integers(*bag_size))
        B = 0.5 * rng.normal(size=(k, d))
        lab = i % 2
        if lab:
            B[: int(rng.integers(1, k)), 0] += 3.0
        bags.append(B)
        y.append(lab)
    return bags, np.array(y)


def witness_bags(n_bags=40, d=3, seed=0):
    """Positive bags contain one instance shifted by +3 on feature 0."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        X = rng.normal(size=(rng.integers(2, 7), d))
        if i % 2 == 0:
            X[0, 0] += 3.0
        bags.append(X)
        y.append(int(i % 2 == 0))
    return bags, np.array(y)


@pytest.fixture
def reuse_on():
    """Reuse of cached results on during the test, as in the workflow's cells
    (:func:`milbench.utils.cache.reuse`; outside them every fit computes afresh)."""
    from milbench.utils.cache import reuse
    with reuse():
        yield


@pytest.fixture
def fresh_cache():
    """The process-wide kernel cache, emptied (its counts too) before and after the test, with
    reuse on (as in the workflow's cells) during it."""
    from milbench.utils.cache import CACHE, reuse
    CACHE.clear()
    with reuse():
        yield CACHE
    CACHE.clear()
