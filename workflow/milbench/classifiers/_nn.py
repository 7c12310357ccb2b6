"""Numpy building blocks of the deep MIL networks (:mod:`milbench.classifiers.deep_mil`): a
ReLU feature network, MIL pooling over the bag segments of a stacked instance matrix, segment
softmax, binary cross-entropy, and the optimisers — each forward with its analytic backward.

Rows ``offsets[i]:offsets[i + 1]`` of an (N, k) array belong to bag i (every bag non-empty).
No function loops over bags or instances: segment reductions are ``ufunc.reduceat``.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

from milbench.utils.segments import segment_arg, segment_mean

POOLINGS = ("max", "mean", "lse")
OPTIMIZERS = ("sgd", "nesterov", "adam")
_EPS = 1e-7          # Keras' clip of probabilities inside binary cross-entropy


def glorot(rng, n_in, n_out):
    """Glorot & Bengio (2010) uniform initialisation, U(±√(6 / (n_in + n_out))), shape
    (n_in, n_out) — Keras' default kernel initialiser."""
    limit = np.sqrt(6.0 / (n_in + n_out))
    return rng.uniform(-limit, limit, size=(n_in, n_out))


def spread(V, offsets):
    """Bag rows (n_bags, ...) repeated onto their instances (N, ...)."""
    return np.repeat(V, np.diff(offsets), axis=0)


def segment_sum(V, offsets):
    return np.add.reduceat(V, offsets[:-1], axis=0)


def pool(V, offsets, kind):
    """MIL pooling of instance rows ``V`` (N, k) into bag rows (n_bags, k) (Wang et al. 2018,
    Pattern Recognition 74): ``max``, ``mean`` or ``lse`` (log of the mean of
    exp, the official code's LSE with r = 1).  Returns (pooled, cache for :func:`pool_grad`)."""
    if kind == "max":
        red, arg = segment_arg(V, offsets, np.maximum)
        return red, arg
    if kind == "mean":
        return segment_mean(V, offsets), None
    if kind == "lse":
        m = np.maximum.reduceat(V, offsets[:-1], axis=0)
        e = np.exp(V - spread(m, offsets))
        s = segment_sum(e, offsets)
        return m + np.log(s / np.diff(offsets)[:, None]), e / spread(s, offsets)
    raise ValueError(f"pooling must be one of {POOLINGS}, got {kind!r}")


def pool_grad(dP, offsets, kind, cache, n_rows):
    """Gradient w.r.t. the instance rows of :func:`pool`, given ``dP`` w.r.t. the bag rows
    (max: to the first maximal instance of each bag and column)."""
    if kind == "max":
        dV = np.zeros((n_rows, dP.shape[1]))
        dV[cache, np.arange(dP.shape[1])] = dP
        return dV
    if kind == "mean":
        return spread(dP / np.diff(offsets)[:, None], offsets)
    return cache * spread(dP, offsets)


def segment_softmax(s, offsets):
    """Softmax of the 1-d scores ``s`` within every bag (stable: bag maximum subtracted)."""
    e = np.exp(s - spread(np.maximum.reduceat(s, offsets[:-1]), offsets))
    return e / spread(segment_sum(e, offsets), offsets)


def segment_softmax_grad(a, da, offsets):
    """Gradient w.r.t. the scores of :func:`segment_softmax` with output ``a``, given ``da``."""
    return a * (da - spread(segment_sum(a * da, offsets), offsets))


def mlp_forward(params, X, n_layers, dropout, drop_layers, rng):
    """ReLU layers h_l = relu(h_{l−1} W_l + b_l) (params ``W{l}``, ``b{l}``), inverted dropout
    with rate ``dropout`` on the layers in ``drop_layers`` when ``rng`` is given (training).
    Returns (outputs [X, h_1, ..., h_L], dropout masks or None per layer)."""
    hs, masks = [X], []
    for layer in range(n_layers):
        h = np.maximum(hs[-1] @ params[f"W{layer}"] + params[f"b{layer}"], 0.0)
        mask = None
        if rng is not None and dropout > 0 and layer in drop_layers:
            mask = (rng.random(h.shape) >= dropout) / (1.0 - dropout)
            h = h * mask
        hs.append(h)
        masks.append(mask)
    return hs, masks


def mlp_backward(params, hs, masks, dhs, grads):
    """Backward of :func:`mlp_forward`: ``dhs[l]`` is the gradient flowing into h_{l+1} from
    outside the chain (None: nothing); writes ``W{l}``/``b{l}`` gradients into ``grads``."""
    g = None
    for layer in reversed(range(len(masks))):
        d = dhs[layer] if g is None else (g if dhs[layer] is None else g + dhs[layer])
        if masks[layer] is not None:
            d = d * masks[layer]
        d = d * (hs[layer + 1] > 0)
        grads[f"W{layer}"] = hs[layer].T @ d
        grads[f"b{layer}"] = d.sum(axis=0)
        g = d @ params[f"W{layer}"].T if layer > 0 else None


def bce_logits(t, y):
    """Mean binary cross-entropy of bag logits ``t`` and 0/1 labels, and its gradient."""
    loss = np.mean(np.logaddexp(0.0, t) - y * t)
    return loss, (expit(t) - y) / len(t)


def logit(P):
    """Bag scores log P − log(1 − P) of probabilities clipped to [1e-7, 1 − 1e-7]."""
    Pc = np.clip(P, _EPS, 1 - _EPS)
    return np.log(Pc) - np.log1p(-Pc)


def bce_proba(P, y):
    """Mean binary cross-entropy of bag probabilities ``P`` (clipped to [1e-7, 1 − 1e-7], as
    Keras does) and 0/1 labels, and its gradient w.r.t. P."""
    Pc = np.clip(P, _EPS, 1 - _EPS)
    loss = -np.mean(y * np.log(Pc) + (1 - y) * np.log1p(-Pc))
    return loss, (Pc - y) / (Pc * (1 - Pc)) / len(P)


class Optimizer:
    """In-place updates of a dict of parameter arrays.  ``sgd``: momentum; ``nesterov``: Keras'
    Nesterov momentum (v ← μv − η_t g; θ ← θ + μv − η_t g); ``adam``: Kingma & Ba (2015, ICLR,
    Algorithm 1; β = (0.9, 0.999), ε = 1e-8).  The step size decays as η_t = η / (1 + decay·t)
    with t the number of updates done (Keras' ``decay``)."""

    def __init__(self, kind, params, learning_rate, momentum=0.9, decay=0.0):
        self.kind, self.lr, self.momentum, self.decay, self.t = kind, learning_rate, momentum, \
            decay, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()} if kind == "adam" else None

    def step(self, params, grads):
        lr = self.lr / (1.0 + self.decay * self.t)
        self.t += 1
        mu = self.momentum
        if self.kind == "adam":
            b1, b2 = 0.9, 0.999
            c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for k, p in params.items():
            g, m = grads[k], self.m[k]
            if self.kind == "adam":
                m *= b1
                m += (1 - b1) * g
                v = self.v[k]
                v *= b2
                v += (1 - b2) * g * g
                p -= lr * (m / c1) / (np.sqrt(v / c2) + 1e-8)
            else:
                m *= mu
                m -= lr * g
                p += mu * m - lr * g if self.kind == "nesterov" else m
