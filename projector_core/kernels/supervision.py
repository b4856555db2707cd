"""Supervised t-SNE: a label column pulls same-label neighbours together.

TensorBoard's t-SNE panel has a "supervise" slider: with labels, the input affinities are
reweighted before the optimisation, so the layout keeps the data's neighbourhoods yet groups
points that share a label. Our rule, on openTSNE's symmetric sparse P (only neighbour pairs
are stored, so only neighbours are reweighted), with weight ``w`` in [0, 1]:

- both points labelled, same label: ``P_ij * (1 + w)``
- both points labelled, different labels: ``P_ij * (1 - w)`` (dropped at ``w = 1``)
- either label missing: ``P_ij`` unchanged (an unlabelled point is neither pulled nor pushed)

then P is renormalised to sum 1 (openTSNE's convention). ``w = 0`` leaves P as it was. The
rule keeps P symmetric, because each factor depends on the pair only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa
    import scipy.sparse as sp

MISSING = -1


def label_codes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """int64 code per row, equal codes for equal labels, MISSING for an empty cell."""
    import pyarrow as pa  # on first use: the server starts without it
    import pyarrow.compute as pc

    trimmed = pc.utf8_trim_whitespace(values)
    encoded = pc.dictionary_encode(pc.if_else(pc.equal(trimmed, ""), None, trimmed))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    return np.where(np.isnan(codes.astype(np.float64)), MISSING, codes).astype(np.int64)


def supervise_affinities(P: sp.spmatrix, labels: np.ndarray, weight: float) -> sp.csr_matrix:
    """``P`` reweighted by ``labels`` (codes, MISSING = unlabelled) as the module says."""
    import scipy.sparse as sp  # only with openTSNE's P in hand: scipy is loaded by then

    if not 0 <= weight <= 1:
        raise ValueError(f"supervise weight must be in [0, 1], got {weight:g}")
    if labels.shape[0] != P.shape[0]:
        raise ValueError(f"{labels.shape[0]} labels for {P.shape[0]} points")
    coo = sp.coo_matrix(P)
    left, right = labels[coo.row], labels[coo.col]
    labelled = (left != MISSING) & (right != MISSING)
    factor = np.ones(coo.data.shape[0])
    factor[labelled & (left == right)] = 1.0 + weight
    factor[labelled & (left != right)] = 1.0 - weight
    data = coo.data * factor
    total = data.sum()
    if total <= 0:  # every neighbour pair had two different labels: keep the unsupervised P
        return sp.csr_matrix(P)
    out = sp.csr_matrix((data / total, (coo.row, coo.col)), shape=P.shape)
    out.eliminate_zeros()
    return out
