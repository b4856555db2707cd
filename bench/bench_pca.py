"""PCA of N x D float32 (10 components): ours vs scikit-learn in the same run.

scikit-learn's default solver for tall data of under 1000 features is the covariance
eigendecomposition, the method we use too; its randomized solver is shown beside it.
TensorBoard fits on 50,000 sampled points projected to 200 random dims in the browser.
Prints machine info, times, ratios, and each method's largest explained-variance-ratio
error against a float64 computation.

    python bench/bench_pca.py [--n 200000] [--d 768] [--repeats 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from harness import machine_info, timed_together
from sklearn import __version__ as sklearn_version
from sklearn.decomposition import PCA

from projector_core.kernels.pca import pca


def make_data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """A decaying spectrum (rank-50 signal plus noise), so the ratios mean something."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((50, d)).astype(np.float32)
    scales = (1.0 / np.arange(1, 51)).astype(np.float32)
    data = np.empty((n, d), np.float32)
    for start in range(0, n, 50_000):
        stop = min(n, start + 50_000)
        low = rng.standard_normal((stop - start, 50)).astype(np.float32) * scales
        data[start:stop] = low @ basis + 0.05 * rng.standard_normal((stop - start, d))
    return data + 3.0  # an offset, so centring matters


def float64_ratios(data: np.ndarray) -> np.ndarray:
    """The top 10 explained variance ratios computed in float64 throughout: the truth."""
    mean = data.mean(axis=0, dtype=np.float64)
    cov = np.zeros((data.shape[1], data.shape[1]))
    for start in range(0, data.shape[0], 20_000):
        centred = data[start : start + 20_000].astype(np.float64) - mean
        cov += centred.T @ centred
    eigvals = np.linalg.eigvalsh(cov)[::-1]
    return eigvals[:10] / eigvals.sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine_info('scikit-learn ' + sklearn_version)}")
    print(f"data: {args.n} x {args.d} float32, 10 components")
    data = make_data(args.n, args.d)

    models = {
        solver: PCA(n_components=10, svd_solver=solver, random_state=0) for solver in ("auto", "randomized")
    }
    got = timed_together(
        {
            "ours": lambda: pca(data, 10),
            "ours spherize": lambda: pca(data, 10, spherize=True),
            **{solver: (lambda m=model: m.fit_transform(data)) for solver, model in models.items()},
        },
        args.repeats,
    )
    exact = float64_ratios(data)
    ours = pca(data, 10)
    ours_error = np.abs(np.array(ours.explained_variance_ratio) - exact).max()
    print(
        f"ours (covariance + eigh, projection included)   {got['ours']:7.2f} s  ratio error {ours_error:.1e}"
    )
    for solver, model in models.items():
        error = np.abs(model.explained_variance_ratio_ - exact).max()
        print(
            f"sklearn PCA svd_solver={solver:10s} fit_transform  {got[solver]:7.2f} s  "
            f"ratio error {error:.1e}  ours/sklearn {got['ours'] / got[solver]:5.2f}"
        )
    print(f"ours with spherize                               {got['ours spherize']:7.2f} s")


if __name__ == "__main__":
    main()
