"""Does a MIL classifier respect the MIL assumption? The three "algorithmic unit tests" of Raff &
Holt (NeurIPS 2023, "Reproducibility in multiple instance learning: a case for algorithmic unit
tests", Algorithms 1-3), for any estimator (an instance, a registry name or a user's
``module:Class``), beside :func:`milbench.testing.check_mil_estimator`:

    from milbench.mil_assumption import check_mil_assumption
    check_mil_assumption("milr")           # one row per test: AUCs, threshold, verdict

    python -m milbench.mil_assumption milr mi-simple mymodule:MyMIL --code src
    python -m milbench.mil_assumption --all --markdown > docs/mil-assumption.md

Each test trains on bags in which an *invalid* signal separates the classes as well as the valid
one, and scores bags in which the invalid signal is reversed. A model that only follows the
assumption cannot use the invalid signal, so the reversal cannot push its AUC below chance; a
model that learnt it ranks the shifted bags worse than chance (typically near 0).

1. ``single-concept`` (Algorithm 1, standard MIL: a bag is positive iff it holds a positive
   instance): positive bags hold 1-3 instances of concept A; every training negative bag holds
   one "poison" instance that no training positive holds; in the test bags the poison is in every
   positive bag and in no negative bag. Under the standard assumption a negative bag's instances
   are never evidence for the negative class (the score of a bag is the max of its instances'),
   so the poison cannot be used; a model that learnt "no poison means positive" fails.
2. ``two-concept`` (Algorithm 2, the presence-based "threshold" assumption, Weidmann, Frank &
   Pfahringer 2003: positive iff the bag holds both concept A and concept B): positive bags hold
   k of each (k = 1-3), negative bags one instance of A or of B; the poison moves from the
   training negatives to the test positives as in test 1. A standard-MIL model cannot express
   "A and B" (a detector of one concept ranks about 3/4 of the pairs: AUC .5 to about .8), a
   threshold-MIL model can (near 1); neither may use the poison.
3. ``false-frequency`` (Algorithm 3): positive bags hold one A and one B, training negatives one
   instance of A or of B, test negatives 35-44 copies of it. Counting concept instances
   separates the training bags; it is not the concept (test negatives still lack one of the two),
   so a model that relies on how often a concept occurs (mean or attention pooling, bag
   statistics) ranks the test negatives above the positives.

Every bag also holds 1-9 background instances ~ N(0, I_d); concepts are tight clusters,
A ~ N(2·1, 0.1² I), B ~ N(3·1, 0.1² I), the poison ~ N(-10·1, 0.1² I); instances are shuffled
within each bag and half the bags are positive.

**Our reading.** We did not have the paper's text when writing this: the three constructions
follow its Algorithms 1-3 as torchmil implements them (Castro-Macías, Sáez-Maldonado,
Morales-Álvarez & Molina 2025, arXiv:2509.08129: ``SCStandardMILDataset``,
``MCStandardMILDataset``, ``FalseFrequencyMILDataset``), with that implementation's
distribution parameters and counts above and three choices of ours: test 1's positive concept
is the tight cluster A (torchmil draws it from N(0, 9 I) or N(1, I), which overlaps the
background so a linear instance model cannot find it; the test is about the poison, not about a
hard concept); the background count varies per bag (1-9) in every test; test 3's negative
concept is drawn from A and B (torchmil always takes A). Bag counts, dimension and the pass rule
below are ours too.

**Verdict.** ``auc_same`` is the AUC on fresh bags of the training distribution (did the model
learn the task?), ``auc_shifted`` on the test construction. Under a model whose scores carry no
information about the labels, the AUC of n+ positive and n- negative bags has mean .5 and
standard error sqrt((n+ + n- + 1) / (12 n+ n-)) (the Mann-Whitney statistic's null variance);
``threshold`` = .5 - 3 of those (.41 at the default 200 + 200 bags). A test *fails* when
``auc_shifted`` < ``threshold`` (significantly worse than chance: the model used the invalid
signal), *passes* when it does not and ``auc_same`` > .5 + 3 standard errors, and shows *no
signal* when the model did not learn the training task at all (then the test cannot tell).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from milbench.data.bags import Bags
from milbench.registry import CLASSIFIERS, add_code_dirs, make, resolve
from milbench.testing import _scores, _seeded

# instance roles, and the (centre along 1, spread) of each role's Gaussian
BACKGROUND, CONCEPT_A, CONCEPT_B, POISON = 0, 1, 2, 3
CENTRE = np.array([0.0, 2.0, 3.0, -10.0])
SPREAD = np.array([1.0, 0.1, 0.1, 0.1])
BACKGROUND_COUNT = (1, 9)          # inclusive range of background instances per bag

#: test name -> Raff & Holt's algorithm, the assumption, the training and the test bags, and
#: the shortcut a failing model uses (the table of docs/mil-assumption.md)
TESTS = {
    "single-concept": (1, "standard: positive iff a positive instance",
                       "positives hold 1-3 instances of concept A; negatives a *poison* instance",
                       "the poison is in the positives",
                       "the poison as evidence for the negative class"),
    "two-concept": (2, "threshold: positive iff concept A *and* concept B",
                    "positives hold k of each (k = 1-3), negatives one of A or B and the poison",
                    "the poison is in the positives", "the poison"),
    "false-frequency": (3, "threshold, as above",
                        "positives hold one A and one B, negatives one of them",
                        "negatives hold 35-44 copies of it", "how often a concept occurs"),
}
SPLITS = ("train", "same", "shifted")    # training bags, fresh bags like them, the test bags

#: the data of a check: bags per split and the instance dimension
DEFAULTS = {"n_train": 100, "n_test": 400, "d": 4}
Z = 3.0                            # standard errors below chance that count as a failure


def _counts(test, split, y, rng):
    """(n_bags, 4) instances of each role per bag for ``test``'s construction."""
    n = len(y)
    pos, neg = y == 1, y == 0
    counts = np.zeros((n, 4), dtype=np.int64)
    counts[:, BACKGROUND] = rng.integers(BACKGROUND_COUNT[0], BACKGROUND_COUNT[1] + 1, n)
    shifted = split == "shifted"
    one_of = np.where(rng.random(n) < 0.5, CONCEPT_A, CONCEPT_B)   # a negative's concept
    if test == "single-concept":
        counts[pos, CONCEPT_A] = rng.integers(1, 4, n)[pos]
        counts[pos if shifted else neg, POISON] = 1
    elif test == "two-concept":
        k = rng.integers(1, 4, n)
        counts[pos, CONCEPT_A] = counts[pos, CONCEPT_B] = k[pos]
        counts[neg, one_of[neg]] = 1
        counts[pos if shifted else neg, POISON] = 1
    else:                                                           # false-frequency
        counts[pos, CONCEPT_A] = counts[pos, CONCEPT_B] = 1
        counts[neg, one_of[neg]] = rng.integers(35, 45, n)[neg] if shifted else 1
    return counts


def assumption_bags(test, split="train", n_bags=100, *, seed=0, d=4):
    """The bags of one test: ``split`` is "train" (the training construction), "same" (fresh
    bags of it) or "shifted" (the test construction); half of the ``n_bags`` are positive.
    Seeded: the same arguments give the same bags. ``meta["roles"]`` holds every instance's
    role (0 background, 1 concept A, 2 concept B, 3 poison)."""
    if test not in TESTS:
        raise ValueError(f"unknown MIL-assumption test {test!r}; known: {list(TESTS)}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if n_bags < 2 or d < 1:
        raise ValueError(f"need n_bags >= 2 (got {n_bags}) and d >= 1 (got {d})")
    rng = np.random.default_rng([seed, list(TESTS).index(test), SPLITS.index(split)])
    y = rng.permutation(np.arange(n_bags) < n_bags // 2).astype(np.int8)
    counts = _counts(test, split, y, rng)
    sizes = counts.sum(1)
    roles = np.repeat(np.tile(np.arange(4), len(y)), counts.ravel())
    bag = np.repeat(np.arange(len(y)), sizes)
    roles = roles[np.lexsort((rng.random(len(roles)), bag))]       # shuffled within each bag
    X = CENTRE[roles, None] + SPREAD[roles, None] * rng.standard_normal((len(roles), d))
    return Bags(X, np.r_[0, np.cumsum(sizes)], y,
                np.char.add(f"{test}-{split}-", np.arange(len(y)).astype(str)),
                meta={"synthetic": True, "test": test, "split": split, "seed": seed,
                      "roles": roles.astype(np.int8)})


def null_se(n_pos, n_neg):
    """Standard error of the AUC of uninformative scores (Mann-Whitney null variance)."""
    return float(np.sqrt((n_pos + n_neg + 1) / (12.0 * n_pos * n_neg)))


def _estimator(est):
    """An unfitted estimator from an instance, a registry name / 'module:Class', or a config
    entry {name: ..., param: value}."""
    if isinstance(est, str):
        return make("classifier", {"name": est})
    if isinstance(est, dict):
        return make("classifier", est)
    if not hasattr(est, "fit"):
        raise TypeError(f"expected an estimator, a classifier name or a config entry, got "
                        f"{type(est).__name__}")
    return clone(est)


def check_mil_assumption(estimator, *, seed=0, tests=tuple(TESTS), n_train=DEFAULTS["n_train"],
                         n_test=DEFAULTS["n_test"], d=DEFAULTS["d"]):
    """Run ``estimator`` (an instance, a registry name, a 'module:Class' path or a config entry)
    through the tests: one fit per test on ``n_train`` training bags (with ``random_state=0``
    where it has one), scored on ``n_test`` fresh bags of the training distribution and
    ``n_test`` bags of the test construction. Returns one row per test: ``test``,
    ``algorithm`` (Raff & Holt's), ``auc_same``, ``auc_shifted``, ``threshold``, ``learned``,
    ``passed`` and ``verdict`` ("pass", "FAIL" or "no signal"; the module docstring says
    how they are decided)."""
    est = _estimator(estimator)
    rows = []
    for test in tests:
        train, same, shifted = (assumption_bags(test, split, n, seed=seed, d=d)
                                for split, n in zip(SPLITS, (n_train, n_test, n_test)))
        model = _seeded(est).fit(train, train.labels)
        auc = {split: float(roc_auc_score(b.labels, _scores(model, b)))
               for split, b in (("same", same), ("shifted", shifted))}
        n_pos = int(shifted.labels.sum())
        se = null_se(n_pos, len(shifted) - n_pos)
        threshold = 0.5 - Z * se
        learned = auc["same"] > 0.5 + Z * se
        passed = auc["shifted"] >= threshold
        rows.append({"test": test, "algorithm": TESTS[test][0], "auc_same": auc["same"],
                     "auc_shifted": auc["shifted"], "threshold": threshold, "learned": learned,
                     "passed": passed,
                     "verdict": "FAIL" if not passed else "pass" if learned else "no signal"})
    return pd.DataFrame(rows)


def assumption_table(names, *, seed=0, skip=None, **data):
    """{name: DataFrame of :func:`check_mil_assumption`, or why there is none} for every name;
    ``skip`` maps names to a reason not to run them. A method that cannot be imported (an
    optional dependency missing: "not run: ...") or raises on the tests' bags ("error: ...") is
    reported, not dropped."""
    out = {}
    for name in names:
        if skip and name in skip:
            out[name] = f"not run: {skip[name]}"
            continue
        try:
            out[name] = check_mil_assumption(name, seed=seed, **data)
        except KeyError as e:                  # registry: not importable / not a classifier
            out[name] = f"not run: {str(e.args[0] if e.args else e).strip()}"
        except Exception as e:                 # noqa: BLE001 - a method's crash is its result
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            out[name] = f"error: {type(e).__name__}: {first}"
    return out


def _cell(row):
    return f"{row.verdict} ({row.auc_same:.2f} / {row.auc_shifted:.2f})"


def text_table(results):
    """A plain-text table of :func:`assumption_table`'s results, one line per method."""
    lines = [f"{'method':<24}" + "".join(f"{t:<28}" for t in TESTS),
             "each cell: verdict (AUC on fresh bags like the training bags / on the test bags)"]
    for name, res in results.items():
        cells = [res] if isinstance(res, str) else \
            [_cell(r) for r in res.itertuples()]
        lines.append(f"{name:<24}" + "".join(f"{c:<28}" for c in cells))
    return "\n".join(line.rstrip() for line in lines)


HEADER = """# Which methods respect the MIL assumption

Generated by `python -m milbench.mil_assumption --all --markdown > docs/mil-assumption.md`
(`tests/test_mil_assumption.py` checks that every registered classifier has a row and that
some rows are current). Raff & Holt (NeurIPS 2023, "Reproducibility in multiple instance
learning: a case for algorithmic unit tests") built three synthetic data sets, their
"algorithmic unit tests", on which a method that follows the MIL assumption cannot do worse than
chance, and a method that takes a shortcut the assumption forbids does much worse: it is trained
on bags where the shortcut separates the classes, and tested on bags where it is reversed.

{tests}

Every bag also holds 1-9 background instances ~ N(0, I); A, B and the poison are tight clusters
at 2, 3 and -10 along the diagonal of R^{d}. Each method is fitted with its default parameters
on {n_train} training bags and scored on two sets of {n_test} bags (half positive, seed {seed}):
fresh bags like the training bags, and the test bags. Each cell reads *verdict (AUC on the
first set / AUC on the test bags)*:

- **FAIL**: the test-bag AUC is below {threshold:.2f}, chance (.5) less three standard errors of an
  uninformative score (Mann-Whitney null variance): the method learnt the forbidden shortcut;
- **pass**: it is not, and the method learnt the training task (the first AUC is above
  {learned:.2f});
- **no signal**: the method did not learn the training task, so the test cannot tell.

A standard-MIL method (max over instances) is expected to pass `single-concept` with both AUCs
near 1, and to pass the two threshold tests with AUCs from .5 to about .8 (it cannot express "A
and B", and cannot be fooled by the poison or by counts). In the two poisoned tests the shift
only adds an instance to the positive bags and takes one from the negative bags, which cannot
lower the expected AUC of a max-pooling score: a clear drop from the first AUC to the second
there, short of a failure, is partial use of the poison. In `false-frequency` the many copies
raise even a max-pooling score a little (the max of more noisy copies), so a drop to about .5
is expected. How the constructions were read from the paper, and which numbers are ours: the
docstring of `milbench/mil_assumption.py`. Run your own method through the same tests:
`check_mil_assumption("mymodule:MyMIL")` or `python -m milbench.mil_assumption mymodule:MyMIL
--code <dir>`.
"""


def markdown_page(results, *, seed=0, n_train=DEFAULTS["n_train"], n_test=DEFAULTS["n_test"],
                  d=DEFAULTS["d"]):
    """docs/mil-assumption.md from :func:`assumption_table`'s results (run with the same data
    arguments)."""
    se = null_se(n_test // 2, n_test - n_test // 2)
    tests = ["| test | Raff & Holt | assumption | training bags | test bags | "
             "a model fails when it uses |", "|---" * 6 + "|"]
    tests += [f"| `{name}` | Algorithm {algorithm} | " + " | ".join(words) + " |"
              for name, (algorithm, *words) in TESTS.items()]
    lines = [HEADER.format(n_train=n_train, n_test=n_test, seed=seed, d=d, tests="\n".join(tests),
                           threshold=0.5 - Z * se, learned=0.5 + Z * se),
             "| method | " + " | ".join(f"`{t}`" for t in TESTS) + " |",
             "|---" * (len(TESTS) + 1) + "|"]
    for name, res in results.items():
        cells = [res] + [""] * (len(TESTS) - 1) if isinstance(res, str) else \
            [_cell(r) for r in res.itertuples()]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: registry classifiers the docs table does not run, with the reason
NOT_RUN = {}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m milbench.mil_assumption",
                                description="Raff & Holt's (2023) MIL-assumption tests.")
    p.add_argument("names", nargs="*", help="registry classifier names or 'module:Class' paths")
    p.add_argument("--all", action="store_true", help="every registry classifier")
    p.add_argument("--markdown", action="store_true", help="the docs page, not a text table")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--code", nargs="*", default=[], help="directories holding your own modules")
    args = p.parse_args(argv)
    add_code_dirs(args.code)
    for name in args.names:               # a typo or an unimportable module fails here, named
        try:
            resolve("classifier", name)
        except KeyError as e:
            p.error(e.args[0])
    names = (list(CLASSIFIERS) if args.all else []) + \
        [n for n in args.names if not (args.all and n in CLASSIFIERS)]
    if not names:
        p.error("name at least one classifier, or --all")
    results = assumption_table(names, seed=args.seed, skip=NOT_RUN if args.all else None)
    print(markdown_page(results, seed=args.seed) if args.markdown else text_table(results),
          end="\n" if not args.markdown else "")


if __name__ == "__main__":
    main(sys.argv[1:])
