"""Pinned real-data figures: 10-fold CV accuracy of mi-SVM, MI-SVM, set-kernel SVM, Citation-kNN.

Protocol (all rows): StratifiedKFold(10, shuffle=True, random_state=0) over bags; scaling fitted
on the training bags' instances only; accuracy pooled over all test predictions.  Fixed
hyper-parameters per dataset family (no tuning on test folds):

* musk1/musk2: z-score, RBF γ = 1/166, C = 10 (no C scaling) for mi-SVM, MI-SVM and NSK.
* elephant/fox/tiger: mi-SVM and MI-SVM linear, C = 1, raw features (as distributed; the
  linear kernel is Andrews et al.'s best Corel column); NSK z-score, RBF γ = 1/230, C = 10.
* Citation-kNN: R = 2, C = 4, minimal Hausdorff, z-score.

Published figures: mi-SVM / MI-SVM from Andrews et al. (2003) Tables 1–2, MI-kernel from
Gärtner et al. (2002) as quoted there; Citation-kNN from miordm.txt Table 3 (a different
protocol: 80/20 balanced splits × 50, parameters tuned by inner CV — shown for orientation,
tolerance 0.06).  Each row pins our own figure (±0.015, i.e. about one bag) and checks the gap
to the published one (≤ 0.05), except MI-SVM on musk1, where our figure is 0.08 *above*
Andrews et al.'s 0.779 (documented gap, see ``GAPS``).

The musk1 rows run in about a second each; the others are ``slow`` (pytest -m slow).
"""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline

from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers.misvm import MISVM, MiSVM
from milbench.classifiers.set_kernel import SetKernelSVM
from milbench.preprocessing import BagScaler

from conftest import DATA

DATASETS = ("musk1", "musk2", "elephant", "fox", "tiger")

PUBLISHED = {
    "mi-svm": (0.874, 0.836, 0.822, 0.582, 0.789),
    "MI-svm": (0.779, 0.843, 0.814, 0.594, 0.840),
    "mi-kernel-svm": (0.880, 0.893, 0.843, 0.603, 0.842),
    "citation-knn": (0.873, 0.814, 0.784, 0.594, 0.748),     # miordm.txt, other protocol
}
OURS = {   # measured with this file's protocol (seed 0)
    "mi-svm": (0.859, 0.814, 0.795, 0.555, 0.770),
    "MI-svm": (0.859, 0.873, 0.810, 0.565, 0.820),
    "mi-kernel-svm": (0.870, 0.922, 0.820, 0.580, 0.845),
    "citation-knn": (0.891, 0.824, 0.840, 0.555, 0.735),
}
TOLERANCE = {"citation-knn": 0.06}
GAPS = {("MI-svm", "musk1")}   # ours 0.859 vs Andrews 0.779: reported, not asserted


def model(method, dataset):
    musk = dataset.startswith("musk")
    if method == "mi-svm":
        return ("zscore", MiSVM(kernel="rbf", C=10.0)) if musk else \
            ("none", MiSVM(kernel="linear", C=1.0))
    if method == "MI-svm":
        return ("zscore", MISVM(kernel="rbf", C=10.0)) if musk else \
            ("none", MISVM(kernel="linear", C=1.0))
    if method == "mi-kernel-svm":
        return "zscore", SetKernelSVM(instance_kernel="rbf", normalize="featurespace", C=10.0)
    return "zscore", CitationKNN(references=2, citers=4)


def cv_accuracy(method, dataset, seed=0):
    from milbench.data.sources import load_dataset
    bags = load_dataset(dataset, DATA)
    y = bags.labels.astype(int)
    scale, est = model(method, dataset)
    correct = 0
    for tr, te in StratifiedKFold(10, shuffle=True, random_state=seed).split(np.zeros(len(y)), y):
        m = make_pipeline(BagScaler(scale), est).fit(bags.subset(tr), y[tr])
        correct += int((m.predict(bags.subset(te)) == y[te]).sum())
    return correct / len(y)


CASES = [pytest.param(m, d, marks=() if d == "musk1" else pytest.mark.slow, id=f"{m}-{d}")
         for m in PUBLISHED for d in DATASETS]


@pytest.mark.parametrize("method,dataset", CASES)
def test_pinned_10fold_accuracy(method, dataset, shared_data):
    i = DATASETS.index(dataset)
    acc = cv_accuracy(method, dataset)
    assert acc == pytest.approx(OURS[method][i], abs=0.015), acc
    if (method, dataset) not in GAPS:
        assert abs(acc - PUBLISHED[method][i]) <= TOLERANCE.get(method, 0.05), \
            (acc, PUBLISHED[method][i])
