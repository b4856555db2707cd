"""t-SNE's perplexity rule: openTSNE's default, and the most ``n`` points allow.

Read by the kernel (a request that names no perplexity), the sampled and clustered fits, and
the parameter table (``projection/limits.py`` declares the limit from it), so the page, an
export and the API use one rule. No numpy: the server reads it before any compute library.
"""

from __future__ import annotations

DEFAULT_PERPLEXITY = 30.0  # openTSNE's; the one default of the API, the page and exports


def max_perplexity(n_points: int) -> float:
    """openTSNE uses 3 x perplexity neighbours, so it needs N - 1 >= 3 x perplexity."""
    return (n_points - 1) / 3


def default_perplexity(n_points: int) -> float:
    """The perplexity a request that names none gets: 30, lowered to what ``n_points``
    fitted points allow. The parameter table publishes it per embedding, so the page, an
    export and the API use this one rule (TensorBoard's sqrt(N) / 4 is not used)."""
    return min(DEFAULT_PERPLEXITY, max_perplexity(n_points))
