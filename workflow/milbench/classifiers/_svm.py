"""The SVM C of the SVM-based MIL classifiers (set kernel SVM, mi-SVM, MI-SVM): the scaling
rules a config chooses between."""
from __future__ import annotations

C_SCALINGS = ("none", "n_bags", "n_instances", "n_examples")


def scaled_C(C, C_scaling, *, n_bags, n_instances, n_examples):
    """Effective SVC C under an explicit scaling rule (never a hidden division); ``C`` and
    ``C_scaling`` are an estimator's validated parameters.

    "none": C; "n_bags": C / n_bags; "n_instances": C / n_instances; "n_examples": C / number
    of examples the SVM is trained on (bags for set kernels, instances for mi-SVM, negative
    instances + positive witnesses for MI-SVM — the convention of the misvm package).
    """
    n = {"none": 1, "n_bags": n_bags, "n_instances": n_instances, "n_examples": n_examples}
    return float(C) / n[C_scaling]
