import http.server
import os
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


@pytest.fixture
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


def toy_bags(n_bags=30, d=4, seed=0, max_size=5, witness_shift=3.0):
    """Bags whose positives hold one shifted 'witness' instance (standard MI assumption)."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        b = rng.normal(size=(rng.integers(1, max_size + 1), d))
        label = i % 2
        if label:
            b[0, 0] += witness_shift
        bags.append(b)
        y.append(label)
    return bags, np.array(y)
