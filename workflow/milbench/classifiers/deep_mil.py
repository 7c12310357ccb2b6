"""Deep MIL networks in numpy: mi-Net and MI-Net with deep supervision or residual connections
(Wang, Yan, Tang, Bai & Liu 2018, Pattern Recognition 74), attention and gated-attention pooling
(Ilse, Tomczak & Welling 2018, ICML) and dual-stream pooling (Li, Li & Eliceiri 2021, CVPR)
[mi-net, MI-net, attention-mil, gated-attention-mil, dsmil].

Each class documents its model; :class:`MiNet`'s docstring holds what they share (feature
network, loss, optimisers, training loop, parameters, fitted attributes, departures).  The
numpy layers and their backward passes are :mod:`milbench.classifiers._nn`.
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import expit
from sklearn.utils._param_validation import Interval

from milbench.base import COUNT, NON_NEGATIVE, POSITIVE, SEED, MILClassifier, options
from milbench.classifiers._nn import (
    OPTIMIZERS,
    POOLINGS,
    Optimizer,
    bce_logits,
    bce_proba,
    glorot,
    logit,
    mlp_backward,
    mlp_forward,
    pool,
    pool_grad,
    segment_softmax,
    segment_softmax_grad,
    segment_sum,
    spread,
)
from milbench.utils.segments import segment_argmax

VARIANTS = ("plain", "ds", "rc")


def gather_bags(X, offsets, order):
    """Instances and offsets of the bags ``order`` (indices), stacked in that order."""
    sizes = np.diff(offsets)[order]
    new = np.concatenate([[0], np.cumsum(sizes)])
    rows = np.arange(new[-1]) + np.repeat(offsets[:-1][order] - new[:-1], sizes)
    return X[rows], new


def stratified_holdout(y, fraction, rng):
    """Boolean mask of a validation split: ``fraction`` of each class's bags (at least one),
    leaving at least one bag of each class for training."""
    val = np.zeros(len(y), dtype=bool)
    for c in (0, 1):
        idx = np.flatnonzero(y == c)
        k = min(max(1, int(round(fraction * len(idx)))), len(idx) - 1)
        if k < 1:
            raise ValueError("early_stopping needs at least 2 training bags of each class for a "
                             f"validation split; class {c} has {len(idx)}")
        val[rng.permutation(idx)[:k]] = True
    return val


class DeepMIL(MILClassifier):
    """Shared trainer of the deep MIL networks (documented on :class:`MiNet`).  Subclasses
    define ``_init_params(rng, d)``, ``_loss_grad(params, X, offsets, y, rng)`` (objective
    without weight decay and its gradient; ``rng`` None = dropout off) and
    ``_bag_logit(params, X, offsets)``."""

    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like"],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "optimizer": options(OPTIMIZERS),
        "learning_rate": POSITIVE,
        "momentum": [Interval(Real, 0, 1, closed="left")],
        "lr_decay": NON_NEGATIVE,
        "weight_decay": NON_NEGATIVE,
        "epochs": COUNT,
        "batch_size": COUNT,
        "standardize": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "random_state": SEED,
        "epoch_callback": [callable, None],
    }

    def __init__(self, hidden_layer_sizes, dropout, optimizer, learning_rate, momentum, lr_decay,
                 weight_decay, epochs, batch_size, standardize, early_stopping,
                 validation_fraction, random_state, epoch_callback):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.dropout = dropout
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.lr_decay = lr_decay
        self.weight_decay = weight_decay
        self.epochs = epochs
        self.batch_size = batch_size
        self.standardize = standardize
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.epoch_callback = epoch_callback

    def _check_parameter_rules(self):
        sizes = np.asarray(self.hidden_layer_sizes)
        if (sizes.ndim != 1 or len(sizes) == 0 or sizes.dtype.kind not in "iu"
                or (sizes < 1).any()):
            raise ValueError(f"{type(self).__name__}: hidden_layer_sizes must be a non-empty list "
                             f"of positive integers, got {self.hidden_layer_sizes!r}")

    # -- the network ------------------------------------------------------------------------
    def _init_mlp(self, rng, d):
        params, n_in = {}, d
        for layer, n_out in enumerate(int(s) for s in self.hidden_layer_sizes):
            params[f"W{layer}"] = glorot(rng, n_in, n_out)
            params[f"b{layer}"] = np.zeros(n_out)
            n_in = n_out
        return params, n_in

    def _features(self, params, X, rng, every_layer=False):
        n = len(self.hidden_layer_sizes)
        drop = range(n) if every_layer else (n - 1,)
        return mlp_forward(params, X, n, self.dropout, drop, rng)

    def _objective(self, params, X, offsets, y, rng):
        """Training objective (with weight decay) and its gradient."""
        loss, grads = self._loss_grad(params, X, offsets, y, rng)
        lam = self.weight_decay
        if lam > 0:
            for k, p in params.items():
                if k.startswith("W"):
                    loss += lam * np.sum(p * p)
                    grads[k] = grads[k] + 2 * lam * p
        return loss, grads

    # -- fit / predict ----------------------------------------------------------------------
    def _fit(self, X, offsets, y):
        rng = np.random.default_rng(self.random_state)
        y = y.astype(float)
        if self.standardize:
            self.mean_ = X.mean(axis=0)
            sd = X.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
            X = (X - self.mean_) / self.scale_
        train = np.arange(len(y))
        if self.early_stopping:
            val = stratified_holdout(y, self.validation_fraction, rng)
            Xv, ov = gather_bags(X, offsets, np.flatnonzero(val))
            yv, train = y[val], np.flatnonzero(~val)
        params = self._init_params(rng, X.shape[1])
        opt = Optimizer(self.optimizer, params, self.learning_rate, self.momentum, self.lr_decay)
        self.params_ = params
        self.loss_curve_, self.validation_loss_ = [], []
        best, best_loss = None, np.inf
        bs = int(self.batch_size)
        for epoch in range(int(self.epochs)):
            order = rng.permutation(train)
            Xp, op = gather_bags(X, offsets, order)
            yp, total = y[order], 0.0
            for s in range(0, len(order), bs):
                e = min(s + bs, len(order))
                ob = op[s:e + 1]
                loss, grads = self._objective(params, Xp[ob[0]:ob[-1]], ob - ob[0], yp[s:e], rng)
                opt.step(params, grads)
                total += loss * (e - s)
            self.loss_curve_.append(total / len(order))
            if self.early_stopping:
                vloss = self._loss_grad(params, Xv, ov, yv, None)[0]
                self.validation_loss_.append(vloss)
                if vloss < best_loss:
                    best_loss, best = vloss, (epoch, {k: v.copy() for k, v in params.items()})
            if self.epoch_callback is not None:
                self.epoch_callback(self, epoch)
        self.n_iter_ = int(self.epochs)
        self.best_epoch_ = self.n_iter_ - 1
        if best is not None:
            self.best_epoch_, self.params_ = best
        self.diagnostics_ = {"n_iter": self.n_iter_, "best_epoch": self.best_epoch_,
                             "final_loss": float(self.loss_curve_[-1])}

    def _decision(self, X, offsets):
        if self.standardize:
            X = (X - self.mean_) / self.scale_
        return self._bag_logit(self.params_, X, offsets)


class MiNet(DeepMIL):
    """mi-Net (Wang et al. 2018): instance probabilities p_ij = σ(wᵀh_ij + b) of a ReLU
    feature network h = f(x), pooled into the bag probability P_i = pool_j p_ij.

    Shared by the four deep networks (``MI-net``, ``attention-mil``, ``gated-attention-mil``):

    * Feature network: fully connected ReLU layers ``hidden_layer_sizes``, Keras'
      Glorot-uniform weights and zero biases (also for the attention networks, whose PyTorch
      code uses PyTorch's default initialisation); inverted ``dropout`` after the last hidden
      layer, or after every hidden layer whose output is pooled (MI-Net ``ds`` / ``rc``), as
      in Wang et al.'s official code.  ``standardize``: features z-scored on the training
      instances (as Wang et al. do), the same shift and scale applied to new bags.
    * Pooling (Wang et al.'s MIL pooling): ``max``, ``mean`` or ``lse`` — log of the mean of
      exp, the official code's LSE (r = 1).
    * Loss: mean binary cross-entropy over the bags of a step (probabilities clipped to
      [1e-7, 1 − 1e-7] as Keras does where the model outputs probabilities) plus
      ``weight_decay``·Σ‖W‖² over the weight matrices — Keras' ``l2(weight_decay)`` on the
      kernels, as Wang et al.'s code.  PyTorch's ``weight_decay=w`` (Ilse et al.) adds w·θ to
      every gradient, i.e. ``weight_decay=w/2`` here, but biases are not penalised here.
    * Optimisers: ``sgd`` (momentum), ``nesterov`` (Keras' Nesterov momentum: v ← μv − η_t g,
      θ ← θ + μv − η_t g) and ``adam`` (Kingma & Ba 2015, Algorithm 1, β = (0.9, 0.999),
      ε = 1e-8); step size η_t = ``learning_rate`` / (1 + ``lr_decay``·t) after t updates
      (Keras' ``decay``; Wang et al. use 1e-4).
    * Training: ``epochs`` passes over the training bags in an order reshuffled every epoch,
      ``batch_size`` whole bags a step (Wang et al. and Ilse et al.: one); a step's bags are one
      stacked instance matrix pooled by segment reductions.  Analytic gradients (finite
      differences in the tests).  ``random_state`` fixes the weights, the bag order and the
      dropout masks.
    * Model kept: the last epoch's; with ``early_stopping``, the epoch of lowest loss on a
      stratified ``validation_fraction`` of the *training* bags (at least one bag of each
      class), trained on the rest.  Nothing is chosen on test data:
      ``epoch_callback(estimator, epoch)``, called after every epoch with that epoch's weights
      in place (``decision_function`` works), lets a benchmark score each epoch itself
      (benchmarks/methods/bench_deep.py ``--inflation`` measures a "best test epoch" figure
      that way).
    * Bag score (``decision_function``): the logit of the bag probability.

    Fitted: ``loss_curve_`` (mean training objective per epoch), ``validation_loss_`` (per
    epoch, early stopping only), ``best_epoch_`` (the epoch kept, from 0), ``n_iter_`` (epochs
    run), ``params_`` (name → array), ``mean_`` / ``scale_`` (``standardize``),
    ``diagnostics_`` {n_iter, best_epoch, final_loss} — no ``converged``: the epoch budget is
    the stopping rule, as in both papers' code.

    Defaults: Wang et al.'s official settings (fc 256-128-64, dropout .5, max pooling, SGD with
    Nesterov momentum .9, lr 5e-4 decayed by 1e-4 per step, weight decay 5e-3, 50 epochs, one
    bag a step, z-scored features); their per-data-set learning rates and weight decays are in
    config/deep.yaml.
    """

    _parameter_constraints = {**DeepMIL._parameter_constraints, "pooling": options(POOLINGS)}

    def __init__(self, hidden_layer_sizes=(256, 128, 64), pooling="max", dropout=0.5,
                 optimizer="nesterov", learning_rate=5e-4, momentum=0.9, lr_decay=1e-4,
                 weight_decay=5e-3, epochs=50, batch_size=1, standardize=True,
                 early_stopping=False, validation_fraction=0.1, random_state=None,
                 epoch_callback=None):
        super().__init__(hidden_layer_sizes, dropout, optimizer, learning_rate, momentum, lr_decay,
                         weight_decay, epochs, batch_size, standardize, early_stopping,
                         validation_fraction, random_state, epoch_callback)
        self.pooling = pooling

    def _init_params(self, rng, d):
        params, k = self._init_mlp(rng, d)
        params["Wout"], params["bout"] = glorot(rng, k, 1)[:, 0], np.zeros(1)
        return params

    def _forward(self, params, X, offsets, rng):
        hs, masks = self._features(params, X, rng)
        p = expit(hs[-1] @ params["Wout"] + params["bout"])
        P, cache = pool(p[:, None], offsets, self.pooling)
        return P[:, 0], (hs, masks, p, cache)

    def _loss_grad(self, params, X, offsets, y, rng):
        P, (hs, masks, p, cache) = self._forward(params, X, offsets, rng)
        loss, dP = bce_proba(P, y)
        ds = pool_grad(dP[:, None], offsets, self.pooling, cache, len(p))[:, 0] * p * (1 - p)
        grads = {"Wout": hs[-1].T @ ds, "bout": np.array([ds.sum()])}
        mlp_backward(params, hs, masks, [None] * (len(hs) - 2) + [np.outer(ds, params["Wout"])],
                     grads)
        return loss, grads

    def _bag_logit(self, params, X, offsets):
        return logit(self._forward(params, X, offsets, None)[0])


class MINet(MiNet):
    """MI-Net (Wang et al. 2018): bag representation z_i = pool_j h_ij of the feature
    network's last layer, P_i = σ(wᵀz_i + b).  ``variant="ds"`` (deep supervision): every
    hidden layer l's pooled output has its own classifier P_i^l = σ(w_lᵀ pool_j h^l_ij + b_l);
    the loss is Σ_l BCE(P^l) and the bag probability mean_l P_i^l (the official code's loss
    weights 1, 1, 1 and averaged score).  ``variant="rc"`` (residual connections):
    z_i = Σ_l pool_j h^l_ij, so every hidden layer has the same width (the official code: fc
    128-128-128).  Parameters, training and defaults as ``mi-net``."""

    _parameter_constraints = {**MiNet._parameter_constraints, "variant": options(VARIANTS)}

    def __init__(self, hidden_layer_sizes=(256, 128, 64), pooling="max", variant="plain",
                 dropout=0.5, optimizer="nesterov", learning_rate=5e-4, momentum=0.9,
                 lr_decay=1e-4, weight_decay=5e-3, epochs=50, batch_size=1, standardize=True,
                 early_stopping=False, validation_fraction=0.1, random_state=None,
                 epoch_callback=None):
        super().__init__(hidden_layer_sizes, pooling, dropout, optimizer, learning_rate,
                         momentum, lr_decay, weight_decay, epochs, batch_size, standardize,
                         early_stopping, validation_fraction, random_state, epoch_callback)
        self.variant = variant

    def _check_parameter_rules(self):
        super()._check_parameter_rules()
        if self.variant == "rc" and len(set(np.asarray(self.hidden_layer_sizes).tolist())) > 1:
            raise ValueError("MINet: variant 'rc' adds every layer's pooled output, so "
                             "hidden_layer_sizes must all be equal, got "
                             f"{self.hidden_layer_sizes!r}")

    def _heads(self):
        """Hidden layers (indices) whose pooled outputs get a classifier."""
        return range(len(self.hidden_layer_sizes)) if self.variant == "ds" else (0,)

    def _init_params(self, rng, d):
        params, k = self._init_mlp(rng, d)
        sizes = [int(s) for s in self.hidden_layer_sizes]
        for h in self._heads():
            width = sizes[h] if self.variant == "ds" else k
            params[f"Wout{h}"], params[f"bout{h}"] = glorot(rng, width, 1)[:, 0], np.zeros(1)
        return params

    def _forward(self, params, X, offsets, rng):
        """Bag logits, one array per head, and the cache of the backward pass."""
        hs, masks = self._features(params, X, rng, every_layer=self.variant != "plain")
        n = len(self.hidden_layer_sizes)
        pooled = [pool(hs[layer + 1], offsets, self.pooling)
                  for layer in (range(n) if self.variant != "plain" else (n - 1,))]
        if self.variant == "ds":
            zs = [z for z, _ in pooled]
        else:
            zs = [sum(z for z, _ in pooled)]
        logits = [zs[i] @ params[f"Wout{h}"] + params[f"bout{h}"]
                  for i, h in enumerate(self._heads())]
        return logits, (hs, masks, pooled, zs)

    def _loss_grad(self, params, X, offsets, y, rng):
        logits, (hs, masks, pooled, zs) = self._forward(params, X, offsets, rng)
        n = len(self.hidden_layer_sizes)
        grads, loss, dzs = {}, 0.0, []
        for i, h in enumerate(self._heads()):
            li, dt = bce_logits(logits[i], y)
            loss += li
            grads[f"Wout{h}"], grads[f"bout{h}"] = zs[i].T @ dt, np.array([dt.sum()])
            dzs.append(np.outer(dt, params[f"Wout{h}"]))
        if self.variant == "ds":
            dz_layer = dzs
        else:                                    # one head on the (summed) pooled layers
            dz_layer = dzs * len(pooled)
        pooled_layers = range(n) if self.variant != "plain" else (n - 1,)
        dhs = [None] * n
        for (_, cache), layer, dz in zip(pooled, pooled_layers, dz_layer):
            dhs[layer] = pool_grad(dz, offsets, self.pooling, cache, len(X))
        mlp_backward(params, hs, masks, dhs, grads)
        return loss, grads

    def _bag_logit(self, params, X, offsets):
        logits = self._forward(params, X, offsets, None)[0]
        if len(logits) == 1:
            return logits[0]
        return logit(np.mean([expit(t) for t in logits], axis=0))


class AttentionMIL(DeepMIL):
    """Attention-based MIL pooling (Ilse, Tomczak & Welling 2018, ICML): the bag
    representation z = Σ_k a_k h_k of the feature network's outputs h_k with
    a_k = exp(wᵀ tanh(V h_k)) / Σ_j exp(wᵀ tanh(V h_j)) (Eq. 8) or, ``gated``,
    a_k ∝ exp(wᵀ(tanh(V h_k) ⊙ σ(U h_k))) (Eq. 9), V, U of ``attention_dim`` (L) rows, with
    biases as PyTorch's ``nn.Linear``; P = σ(w_cᵀz + b_c).  ``attention_weights(X)`` returns
    every instance's a_k.  Parameters and training as ``mi-net`` (no ``pooling``).

    Defaults: Ilse et al.'s optimiser for the classic data sets (Adam, lr 5e-4, PyTorch weight
    decay 1e-4 = ``weight_decay=5e-5`` here, one bag a step); the feature network is MI-Net's
    (fc 256-128-64, dropout .5 after its last layer), 50 epochs, z-scored features — Ilse et
    al.'s own network and epoch budget for these data sets are not transcribed here.
    """

    _parameter_constraints = {**DeepMIL._parameter_constraints, "attention_dim": COUNT,
                              "gated": ["boolean"]}

    def __init__(self, hidden_layer_sizes=(256, 128, 64), attention_dim=64, gated=False,
                 dropout=0.5, optimizer="adam", learning_rate=5e-4, momentum=0.9, lr_decay=0.0,
                 weight_decay=5e-5, epochs=50, batch_size=1, standardize=True,
                 early_stopping=False, validation_fraction=0.1, random_state=None,
                 epoch_callback=None):
        super().__init__(hidden_layer_sizes, dropout, optimizer, learning_rate, momentum, lr_decay,
                         weight_decay, epochs, batch_size, standardize, early_stopping,
                         validation_fraction, random_state, epoch_callback)
        self.attention_dim = attention_dim
        self.gated = gated

    def _init_params(self, rng, d):
        params, k = self._init_mlp(rng, d)
        L = int(self.attention_dim)
        params["WV"], params["bV"] = glorot(rng, k, L), np.zeros(L)
        if self.gated:
            params["WU"], params["bU"] = glorot(rng, k, L), np.zeros(L)
        params["Ww"] = glorot(rng, L, 1)[:, 0]
        params["Wout"], params["bout"] = glorot(rng, k, 1)[:, 0], np.zeros(1)
        return params

    def _forward(self, params, X, offsets, rng):
        hs, masks = self._features(params, X, rng)
        H = hs[-1]
        A = np.tanh(H @ params["WV"] + params["bV"])
        G = expit(H @ params["WU"] + params["bU"]) if self.gated else None
        a = segment_softmax((A * G if self.gated else A) @ params["Ww"], offsets)
        z = segment_sum(a[:, None] * H, offsets)
        return z @ params["Wout"] + params["bout"], (hs, masks, A, G, a, z)

    def attention_weights(self, X):
        """The attention weight a_k of every instance (stacked by bag; each bag's sum to 1)."""
        Xs, offsets = self._check_predict_input(X)
        if self.standardize:
            Xs = (Xs - self.mean_) / self.scale_
        return self._forward(self.params_, Xs, offsets, None)[1][4]

    def _loss_grad(self, params, X, offsets, y, rng):
        t, (hs, masks, A, G, a, z) = self._forward(params, X, offsets, rng)
        H = hs[-1]
        loss, dt = bce_logits(t, y)
        grads = {"Wout": z.T @ dt, "bout": np.array([dt.sum()])}
        dz = spread(np.outer(dt, params["Wout"]), offsets)
        dH = a[:, None] * dz
        ds = segment_softmax_grad(a, (H * dz).sum(axis=1), offsets)
        AG = A * G if self.gated else A
        grads["Ww"] = AG.T @ ds
        dAG = np.outer(ds, params["Ww"])
        dA = (dAG * G if self.gated else dAG) * (1 - A * A)
        grads["WV"], grads["bV"] = H.T @ dA, dA.sum(axis=0)
        dH += dA @ params["WV"].T
        if self.gated:
            dG = dAG * A * G * (1 - G)
            grads["WU"], grads["bU"] = H.T @ dG, dG.sum(axis=0)
            dH += dG @ params["WU"].T
        mlp_backward(params, hs, masks, [None] * (len(hs) - 2) + [dH], grads)
        return loss, grads

    def _bag_logit(self, params, X, offsets):
        return self._forward(params, X, offsets, None)[0]


class GatedAttentionMIL(AttentionMIL):
    """Gated attention pooling (Ilse et al. 2018, Eq. 9): :class:`AttentionMIL` with
    ``gated=True`` by default."""

    def __init__(self, hidden_layer_sizes=(256, 128, 64), attention_dim=64, gated=True,
                 dropout=0.5, optimizer="adam", learning_rate=5e-4, momentum=0.9, lr_decay=0.0,
                 weight_decay=5e-5, epochs=50, batch_size=1, standardize=True,
                 early_stopping=False, validation_fraction=0.1, random_state=None,
                 epoch_callback=None):
        super().__init__(hidden_layer_sizes, attention_dim, gated, dropout, optimizer,
                         learning_rate, momentum, lr_decay, weight_decay, epochs, batch_size,
                         standardize, early_stopping, validation_fraction, random_state,
                         epoch_callback)


class DSMIL(DeepMIL):
    """Dual-stream MIL (Li, Li & Eliceiri 2021, CVPR), on the feature network h = f(x).
    Instance stream: scores c_i = w_0ᵀh_i + b_0, max-pooled: the bag's critical instance m and
    c_m = max_i c_i.  Bag stream: queries q_i = W_q h_i + b_q (``query_dim`` rows), values
    v_i = W_v h_i + b_v, attention U_i = softmax_i(⟨q_i, q_m⟩ / √query_dim) within the bag
    (the paper's distance to the critical instance; the √ scaling is the official code's),
    b = Σ_i U_i v_i and c_b = w_bᵀb + b_b.  The bag score is ½(c_m + c_b) (the paper's average
    of the two streams, taken on the logits); the loss ½BCE(c_m) + ½BCE(c_b), as the official
    code.  The query is a linear map (the official code's later versions add a hidden layer and
    tanh); the critical instance is chosen by the forward pass and no gradient flows through
    that choice.  ``attention_weights(X)`` returns every U_i.  Parameters and training as
    ``mi-net`` (no ``pooling``); defaults as ``attention-mil`` (DSMIL's own optimiser settings
    are not transcribed here).
    """

    _parameter_constraints = {**DeepMIL._parameter_constraints, "query_dim": COUNT}

    def __init__(self, hidden_layer_sizes=(256, 128, 64), query_dim=128, dropout=0.5,
                 optimizer="adam", learning_rate=5e-4, momentum=0.9, lr_decay=0.0,
                 weight_decay=5e-5, epochs=50, batch_size=1, standardize=True,
                 early_stopping=False, validation_fraction=0.1, random_state=None,
                 epoch_callback=None):
        super().__init__(hidden_layer_sizes, dropout, optimizer, learning_rate, momentum, lr_decay,
                         weight_decay, epochs, batch_size, standardize, early_stopping,
                         validation_fraction, random_state, epoch_callback)
        self.query_dim = query_dim

    def _init_params(self, rng, d):
        params, k = self._init_mlp(rng, d)
        dq = int(self.query_dim)
        params["Winst"], params["binst"] = glorot(rng, k, 1)[:, 0], np.zeros(1)
        params["Wq"], params["bq"] = glorot(rng, k, dq), np.zeros(dq)
        params["Wv"], params["bv"] = glorot(rng, k, k), np.zeros(k)
        params["Wbag"], params["bbag"] = glorot(rng, k, 1)[:, 0], np.zeros(1)
        return params

    def _forward(self, params, X, offsets, rng):
        """(instance-stream logits c_m, bag-stream logits c_b) and the backward cache."""
        hs, masks = self._features(params, X, rng)
        H = hs[-1]
        c = H @ params["Winst"] + params["binst"]
        crit = segment_argmax(c, offsets)
        Q = H @ params["Wq"] + params["bq"]
        root = np.sqrt(Q.shape[1])
        U = segment_softmax((Q * spread(Q[crit], offsets)).sum(axis=1) / root, offsets)
        V = H @ params["Wv"] + params["bv"]
        b = segment_sum(U[:, None] * V, offsets)
        return (c[crit], b @ params["Wbag"] + params["bbag"]), (hs, masks, crit, Q, root, U, V, b)

    def attention_weights(self, X):
        """The bag stream's weight U_i of every instance (stacked by bag; each bag's sum to 1)."""
        Xs, offsets = self._check_predict_input(X)
        if self.standardize:
            Xs = (Xs - self.mean_) / self.scale_
        return self._forward(self.params_, Xs, offsets, None)[1][5]

    def _loss_grad(self, params, X, offsets, y, rng):
        (cm, cb), (hs, masks, crit, Q, root, U, V, b) = self._forward(params, X, offsets, rng)
        H = hs[-1]
        loss_m, dcm = bce_logits(cm, y)
        loss_b, dcb = bce_logits(cb, y)
        dcm, dcb = dcm / 2, dcb / 2
        grads = {"Wbag": b.T @ dcb, "bbag": np.array([dcb.sum()])}
        db = spread(np.outer(dcb, params["Wbag"]), offsets)
        dV = U[:, None] * db
        de = segment_softmax_grad(U, (V * db).sum(axis=1), offsets) / root
        dQ = de[:, None] * spread(Q[crit], offsets)
        dQ[crit] += segment_sum(de[:, None] * Q, offsets)
        dc = np.zeros(len(H))
        dc[crit] = dcm
        grads["Winst"], grads["binst"] = H.T @ dc, np.array([dcm.sum()])
        grads["Wq"], grads["bq"] = H.T @ dQ, dQ.sum(axis=0)
        grads["Wv"], grads["bv"] = H.T @ dV, dV.sum(axis=0)
        dH = dV @ params["Wv"].T + dQ @ params["Wq"].T + np.outer(dc, params["Winst"])
        mlp_backward(params, hs, masks, [None] * (len(hs) - 2) + [dH], grads)
        return (loss_m + loss_b) / 2, grads

    def _bag_logit(self, params, X, offsets):
        cm, cb = self._forward(params, X, offsets, None)[0]
        return (cm + cb) / 2
