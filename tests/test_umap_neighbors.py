"""UMAP's neighbours come from our own indexes: umap-learn's NN-descent (pynndescent, whose
import alone compiles for about 12 s on an empty numba cache) is never imported, neither by a
job nor by the server's warm-up."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.manifold import trustworthiness

from projector_core.kernels.umap import SMALL_DATA, umap

JOB_AND_WARM_UP = """
import sys
import numpy as np
from projector_core.projection import warmup
from projector_core.kernels.umap import umap

warmup.start_warm_up(delay=0)  # importing and compiling while the job below does too
data = np.random.default_rng(0).normal(size=(4200, 8)).astype(np.float32)
result = umap(data, n_epochs=3)
assert warmup.ready.wait(300)
import umap as umap_learn  # the package is whole: its estimator is still there
print(result.neighbors, "pynndescent" in sys.modules, hasattr(umap_learn, "UMAP"))
"""


def test_a_job_beside_the_warm_up_never_imports_nndescent(tmp_path):
    """Also: both import the compute libraries at once without meeting a half-imported
    numba module (they take turns)."""
    result = subprocess.run([sys.executable, "-c", JOB_AND_WARM_UP], capture_output=True,
                            text=True, timeout=600, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["approximate", "False", "True"]


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")
def test_large_data_uses_the_approximate_index_and_stays_trustworthy():
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=8, size=(6, 16))
    data = (centres[rng.integers(0, 6, SMALL_DATA + 200)] + rng.normal(size=(SMALL_DATA + 200, 16))
            ).astype(np.float32)
    result = umap(data, n_epochs=60, seed=0)
    assert result.neighbors == "approximate"
    assert trustworthiness(data[::4], result.coordinates[::4], n_neighbors=10) > 0.9

