"""Deep MIL networks (milbench.classifiers.deep_mil): analytic gradients against finite
differences, the one-instance-bag reductions to an MLP (and DSMIL's to its two heads),
determinism, the MIL estimator contract, early stopping on training bags only, and learning a
synthetic MIL problem."""
import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from milbench.classifiers._nn import POOLINGS, segment_softmax
from milbench.classifiers.deep_mil import (
    VARIANTS,
    DSMIL,
    AttentionMIL,
    GatedAttentionMIL,
    MiNet,
    MINet,
    gather_bags,
)
from milbench.data.bags import check_bags
from milbench.registry import make
from milbench.testing import check_mil_estimator

from conftest import toy_bags

SMALL = {"hidden_layer_sizes": (5, 4, 3)}
MODELS = ([MiNet(pooling=p, **SMALL) for p in POOLINGS]
          + [MINet(pooling=p, variant=v, **({"hidden_layer_sizes": (4, 4, 4)} if v == "rc"
                                            else SMALL))
             for p in POOLINGS for v in VARIANTS]
          + [AttentionMIL(attention_dim=3, **SMALL), GatedAttentionMIL(attention_dim=3, **SMALL),
             DSMIL(query_dim=3, **SMALL)])
IDS = [f"{type(m).__name__}-{m.get_params().get('pooling', 'att')}-"
       f"{m.get_params().get('variant', '')}" for m in MODELS]
FAST = {"hidden_layer_sizes": (8, 6), "epochs": 3}


def _stacked(n_bags=7, seed=0):
    bags, y = toy_bags(n_bags=n_bags, d=3, max_size=4, seed=seed)
    X, offsets, y01, _ = check_bags(bags, y)
    return X, offsets, y01.astype(float)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_gradient_matches_finite_differences(model):
    """Every parameter's analytic gradient (weight decay included, dropout off)."""
    X, offsets, y = _stacked()
    rng = np.random.default_rng(0)
    params = model._init_params(rng, X.shape[1])
    for k in params:                    # biases off zero, so every ReLU / max path is exercised
        params[k] = params[k] + 0.1 * rng.normal(size=params[k].shape)
    _, grads = model._objective(params, X, offsets, y, None)
    assert grads.keys() == params.keys()
    h = 1e-6
    for k, p in params.items():
        flat, num = p.reshape(-1), np.zeros(p.size)
        for i in range(p.size):
            old = flat[i]
            flat[i] = old + h
            up = model._objective(params, X, offsets, y, None)[0]
            flat[i] = old - h
            down = model._objective(params, X, offsets, y, None)[0]
            flat[i] = old
            num[i] = (up - down) / (2 * h)
        np.testing.assert_allclose(grads[k].reshape(-1), num, rtol=1e-5, atol=1e-7,
                                   err_msg=f"gradient of {k}")


def _mlp(params, X, n_layers):
    """A plain MLP forward of the fitted feature network, written out here."""
    h = X
    for layer in range(n_layers):
        h = np.maximum(h @ params[f"W{layer}"] + params[f"b{layer}"], 0.0)
    return h


@pytest.mark.parametrize("pooling", POOLINGS)
def test_one_instance_bags_are_an_mlp_on_instances(pooling):
    """On one-instance bags every pooling is the identity: mi-Net and MI-Net score a bag by the
    MLP's output on its instance, and attention's single weight is 1."""
    bags, y = toy_bags(n_bags=40, d=3, singletons=True)
    X = np.vstack(bags)
    kw = {**FAST, "random_state": 0, "standardize": False}
    for est in (MiNet(pooling=pooling, **kw), MINet(pooling=pooling, **kw),
                AttentionMIL(**kw), GatedAttentionMIL(**kw)):
        est.fit(bags, y)
        p = est.params_
        out = "Wout0" if isinstance(est, MINet) else "Wout"
        t = _mlp(p, X, 2) @ p[out] + p[out.replace("W", "b")]
        s = est.decision_function(bags)
        if isinstance(est, MINet) or not isinstance(est, MiNet):
            np.testing.assert_allclose(s, t, rtol=1e-12, atol=1e-12)
        else:                          # the logit of the clipped probability σ(t)
            np.testing.assert_allclose(expit(s), expit(t), rtol=1e-12, atol=1e-12)
        if isinstance(est, AttentionMIL):
            np.testing.assert_array_equal(est.attention_weights(bags), 1.0)


def test_one_instance_bags_make_dsmil_the_mean_of_its_two_heads():
    """On one-instance bags DSMIL's critical instance is the instance and its weight 1: the bag
    score is ½(instance head + bag head on the value of the MLP's output)."""
    bags, y = toy_bags(n_bags=40, d=3, singletons=True)
    est = DSMIL(**FAST, random_state=0, standardize=False).fit(bags, y)
    p = est.params_
    h = _mlp(p, np.vstack(bags), 2)
    t = (h @ p["Winst"] + p["binst"] + (h @ p["Wv"] + p["bv"]) @ p["Wbag"] + p["bbag"]) / 2
    np.testing.assert_allclose(est.decision_function(bags), t, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.attention_weights(bags), 1.0)


def test_one_instance_bags_train_mi_net_and_mi_net_alike():
    """On one-instance bags mi-Net's and MI-Net's losses and gradients are the same function
    of the same initial weights, so their fits (same seed) agree."""
    bags, y = toy_bags(n_bags=30, d=3, singletons=True)
    kw = {**FAST, "random_state": 3}
    a = MiNet(pooling="max", **kw).fit(bags, y)
    b = MINet(pooling="mean", **kw).fit(bags, y)
    np.testing.assert_allclose(a.params_["Wout"], b.params_["Wout0"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(expit(a.decision_function(bags)), expit(b.decision_function(bags)),
                               rtol=1e-8, atol=1e-10)


def test_attention_weights_are_a_softmax_within_each_bag():
    X, offsets, _ = _stacked()
    a = segment_softmax(np.random.default_rng(0).normal(size=len(X)), offsets)
    np.testing.assert_allclose(np.add.reduceat(a, offsets[:-1]), 1.0)
    bags, y = toy_bags(n_bags=20, d=3)
    w = GatedAttentionMIL(**FAST, random_state=0).fit(bags, y).attention_weights(bags)
    assert (w > 0).all()
    np.testing.assert_allclose(np.add.reduceat(w, np.cumsum([0] + [len(b) for b in bags])[:-1]),
                               1.0)


@pytest.mark.parametrize("Est", [MiNet, MINet, AttentionMIL, DSMIL])
def test_seed_fixes_the_fit(Est):
    bags, y = toy_bags(n_bags=20, d=3)
    fit = lambda seed: Est(**FAST, random_state=seed).fit(bags, y)  # noqa: E731
    np.testing.assert_array_equal(fit(1).decision_function(bags), fit(1).decision_function(bags))
    assert not np.array_equal(fit(1).decision_function(bags), fit(2).decision_function(bags))


def test_standardize_makes_the_fit_invariant_to_feature_units():
    bags, y = toy_bags(n_bags=20, d=3)
    scale = np.array([10.0, 0.01, 3.0])
    moved = [b * scale + 5 for b in bags]
    a = MINet(**FAST, random_state=0).fit(bags, y).decision_function(bags)
    b = MINet(**FAST, random_state=0).fit(moved, y).decision_function(moved)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("spec", [
    {"name": "mi-net", "pooling": "lse"},
    {"name": "MI-net", "variant": "ds", "pooling": "mean"},
    {"name": "MI-net", "variant": "rc", "hidden_layer_sizes": [6, 6]},
    {"name": "attention-mil", "optimizer": "sgd", "batch_size": 4},
    {"name": "gated-attention-mil", "early_stopping": True, "validation_fraction": 0.2},
    {"name": "dsmil", "query_dim": 4},
], ids=lambda s: "-".join(str(v) for v in s.values()))
def test_mil_estimator_contract(spec):
    spec = {"hidden_layer_sizes": [8, 6], "epochs": 4, **spec}
    check_mil_estimator(make("classifier", spec))


def test_early_stopping_keeps_the_best_validation_epoch_and_the_callback_sees_each_epoch():
    bags, y = toy_bags(n_bags=40, d=3)
    seen = []

    def callback(est, epoch):
        seen.append((epoch, est.decision_function(bags)))

    est = AttentionMIL(hidden_layer_sizes=(8,), epochs=8, early_stopping=True,
                       validation_fraction=0.25, random_state=0, epoch_callback=callback)
    est.fit(bags, y)
    assert [e for e, _ in seen] == list(range(8)) and len(est.loss_curve_) == 8
    assert est.best_epoch_ == int(np.argmin(est.validation_loss_))
    np.testing.assert_array_equal(est.decision_function(bags), seen[est.best_epoch_][1])
    last = clone(est).set_params(early_stopping=False, epoch_callback=None).fit(bags, y)
    assert last.best_epoch_ == 7


def test_parameter_rules_name_the_parameter():
    bags, y = toy_bags(n_bags=10, d=3)
    with pytest.raises(ValueError, match="hidden_layer_sizes must all be equal"):
        MINet(variant="rc", hidden_layer_sizes=(8, 4)).fit(bags, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes must be a non-empty list"):
        MiNet(hidden_layer_sizes=(8, 0)).fit(bags, y)
    with pytest.raises(ValueError, match="early_stopping needs at least 2 training bags"):
        MiNet(early_stopping=True).fit(bags[:3], y[:3])


def test_gather_bags_stacks_bags_in_the_given_order():
    bags, _ = toy_bags(n_bags=6, d=2)
    X, offsets, _, _ = check_bags(bags, np.arange(6) % 2)
    order = np.array([4, 0, 5])
    Xg, og = gather_bags(X, offsets, order)
    np.testing.assert_array_equal(Xg, np.vstack([bags[i] for i in order]))
    np.testing.assert_array_equal(np.diff(og), [len(bags[i]) for i in order])


@pytest.mark.parametrize("Est, kw", [
    (MiNet, {}), (MINet, {}), (MINet, {"variant": "ds"}),
    (MINet, {"variant": "rc", "hidden_layer_sizes": (16, 16)}),
    (AttentionMIL, {}), (GatedAttentionMIL, {}), (DSMIL, {})])
def test_learns_a_synthetic_mil_problem(Est, kw):
    """Positive bags hold one shifted instance among 1-8 noise instances."""
    train, y = toy_bags(n_bags=120, d=4, max_size=8, seed=0)
    test, yt = toy_bags(n_bags=100, d=4, max_size=8, seed=1)
    est = Est(**{"hidden_layer_sizes": (16, 8), "epochs": 20, "optimizer": "adam",
                 "learning_rate": 3e-3, "weight_decay": 1e-4, "random_state": 0, **kw})
    est.fit(train, y)
    assert roc_auc_score(yt, est.decision_function(test)) > 0.9
