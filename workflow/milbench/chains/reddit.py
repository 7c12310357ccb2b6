"""SNAP web-Reddit submissions -> 2-view bags (CVFS-MIL, Wu et al. 2014, §4.3).

Input: the SNAP ``redditSubmissions.csv`` (header ``#image_id,unixtime,rawtime,title,
total_votes,reddit_id,number_of_upvotes,subreddit,number_of_downvotes,localtime,score,
number_of_comments,username``; the leading ``#`` is optional).  Bag = one submitted item
(``image_id``) over all its resubmissions, instance = one submission (ordered by time).

* Labels: positive if any submission's ``score`` (up − down votes) ≥ 2000, negative if every
  score < 100, other items dropped; a seeded sample of ``n_pos`` + ``n_neg`` bags (paper:
  300 + 300).
* Title view: TF-IDF of the title over the ``n_terms`` = 200 most frequent terms (English stop
  words removed, HTML entities unescaped, tokens of ≥ 2 letters).
* Factor view, 55 binary factors: month (12), weekday (7), day part (5: morning 6–9,
  forenoon 9–12, noon 12–13, afternoon 13–18, night 18–6, hour intervals half-open
  [start, end)), community = one of the 28 most frequent subreddits (28), and the
  submission's order among its item's resubmissions (3: first-3 = one of the first three,
  last-3 = one of the last three, others = neither; a submission of an item with ≤ 5
  submissions can be both first-3 and last-3 — they are binary factors, not one-hot).

Time of day / weekday / month are read from ``rawtime`` (ISO 8601 with the poster-side UTC
offset, e.g. ``2012-03-31T12:40:39.590113-07:00``) as wall-clock time in that offset;
rows whose ``rawtime`` does not parse fall back to ``unixtime`` in UTC
(``time_column="unixtime"`` forces UTC everywhere).

Leakage choice: the title vocabulary and IDF weights and the 28 subreddits are fitted on the
titles / subreddits of all *selected* bags before cross-validation, without labels
(unsupervised and transductive, as the paper converts titles once before its 10-fold CV).
No label information enters the views; selectors and classifiers only see training folds.
"""
from __future__ import annotations

import html

import numpy as np
import pandas as pd

from milbench.data.bags import Bags

COLUMNS = ("image_id", "unixtime", "rawtime", "title", "total_votes", "reddit_id",
           "number_of_upvotes", "subreddit", "number_of_downvotes", "localtime", "score",
           "number_of_comments", "username")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DAY_PARTS = ("morning", "forenoon", "noon", "afternoon", "night")
ORDER = ("first-3", "last-3", "others")
N_SUBREDDITS = 28


def read_submissions(path):
    """SNAP CSV -> DataFrame with the 13 SNAP columns (``image_id`` as str).  Malformed lines
    (the real dump has a few) are skipped; rows without image_id / score / unixtime dropped."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False, on_bad_lines="skip",
                     engine="python")
    df.columns = [c.strip().lstrip("#").strip() for c in df.columns]
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a SNAP web-Reddit CSV, missing column(s) {missing}; "
                         f"expected {list(COLUMNS)}")
    df = df[list(COLUMNS)].copy()
    for c in ("unixtime", "total_votes", "number_of_upvotes", "number_of_downvotes",
              "localtime", "score", "number_of_comments"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    iid = pd.to_numeric(df["image_id"], errors="coerce")
    keep = iid.notna() & df["score"].notna() & df["unixtime"].notna()
    df = df[keep].copy()
    df["image_id"] = iid[keep].astype(np.int64).astype(str)
    return df.reset_index(drop=True)


def bag_labels(df, pos_threshold=2000, neg_threshold=100):
    """Series image_id -> 1 (max score ≥ pos_threshold), 0 (all scores < neg_threshold);
    items in between are absent."""
    mx = df.groupby("image_id")["score"].max()
    lab = mx.map(lambda s: 1 if s >= pos_threshold else (0 if s < neg_threshold else -1))
    return lab[lab >= 0].astype(np.int8)


def select_bags(df, n_pos=300, n_neg=300, pos_threshold=2000, neg_threshold=100, seed=0):
    """Seeded sample of positive / negative items.  Returns (submissions of the chosen items
    sorted by (label desc, image_id, unixtime), labels Series image_id -> 0/1, info dict)."""
    lab = bag_labels(df, pos_threshold, neg_threshold)
    rng = np.random.default_rng(seed)

    def draw(ids, n):
        ids = np.sort(np.asarray(ids, dtype=str))
        if n is None or n >= len(ids):
            return ids
        return np.sort(rng.choice(ids, size=int(n), replace=False))

    pos, neg = draw(lab.index[lab == 1], n_pos), draw(lab.index[lab == 0], n_neg)
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError(f"reddit selection is empty: {len(pos)} positive items (score ≥ "
                         f"{pos_threshold}), {len(neg)} negative items (all < {neg_threshold})")
    chosen = np.r_[pos, neg]
    order = {k: i for i, k in enumerate(chosen)}
    sub = df[df["image_id"].isin(order)].copy()
    sub["_bag"] = sub["image_id"].map(order)
    sub = sub.sort_values(["_bag", "unixtime", "reddit_id"], kind="stable").drop(columns="_bag")
    info = {"available_positive": int((lab == 1).sum()), "available_negative": int((lab == 0).sum()),
            "n_positive": int(len(pos)), "n_negative": int(len(neg)),
            "n_instances": int(len(sub)),
            "n_instances_positive": int(sub["image_id"].isin(set(pos)).sum()),
            "n_instances_negative": int(sub["image_id"].isin(set(neg)).sum())}
    return sub.reset_index(drop=True), lab.loc[chosen], info


def submission_times(df, time_column="rawtime"):
    """Naive wall-clock timestamps of every submission (see module docstring)."""
    utc = pd.to_datetime(df["unixtime"].astype("float64"), unit="s")
    if time_column == "unixtime":
        return utc
    if time_column == "localtime":
        return pd.to_datetime(df["localtime"].astype("float64"), unit="s")
    if time_column != "rawtime":
        raise ValueError(f"time_column must be rawtime | unixtime | localtime, got {time_column!r}")
    wall = pd.to_datetime(df["rawtime"].astype(str).str.slice(0, 19), format="%Y-%m-%dT%H:%M:%S",
                          errors="coerce")
    return wall.fillna(utc)


def day_part(hour):
    """Day-part index (0 morning [6, 9), 1 forenoon [9, 12), 2 noon [12, 13),
    3 afternoon [13, 18), 4 night [18, 24) ∪ [0, 6)) of integer hours."""
    h = np.asarray(hour)
    return np.select([(h >= 6) & (h < 9), (h >= 9) & (h < 12), (h >= 12) & (h < 13),
                      (h >= 13) & (h < 18)], [0, 1, 2, 3], default=4)


def order_factors(image_ids, n_first=3, n_last=3):
    """(N, 3) {0,1}: first-3 / last-3 / others for submissions already sorted by time within
    each item (rows of one item contiguous)."""
    ids = np.asarray(image_ids)
    start = np.r_[True, ids[1:] != ids[:-1]]
    grp = np.cumsum(start) - 1
    first_row = np.flatnonzero(start)
    pos = np.arange(len(ids)) - first_row[grp]
    size = np.diff(np.r_[first_row, len(ids)])[grp]
    first = pos < n_first
    last = pos >= size - n_last
    return np.c_[first, last, ~(first | last)].astype(np.float32)


def top_subreddits(subreddits, k=N_SUBREDDITS):
    """The ``k`` most frequent subreddit names (ties broken by name)."""
    vc = pd.Series(subreddits).value_counts()
    vc = vc.reset_index()
    vc.columns = ["name", "n"]
    return vc.sort_values(["n", "name"], ascending=[False, True])["name"].head(k).tolist()


def factor_view(df, subreddits=None, time_column="rawtime"):
    """(N, 55) float32 binary factor matrix and its 55 column names.

    ``df`` holds the selected submissions sorted by item and time; ``subreddits`` the 28
    community names (default: the 28 most frequent in ``df``; fewer distinct names leave
    unused zero columns named ``subreddit:<unused-k>``)."""
    t = submission_times(df, time_column)
    n = len(df)
    month = np.zeros((n, 12), np.float32)
    month[np.arange(n), t.dt.month.to_numpy() - 1] = 1
    wday = np.zeros((n, 7), np.float32)
    wday[np.arange(n), t.dt.day_of_week.to_numpy()] = 1
    part = np.zeros((n, 5), np.float32)
    part[np.arange(n), day_part(t.dt.hour.to_numpy())] = 1
    if subreddits is None:
        subreddits = top_subreddits(df["subreddit"], N_SUBREDDITS)
    subreddits = list(subreddits)[:N_SUBREDDITS]
    names_sr = subreddits + [f"<unused-{i}>" for i in range(N_SUBREDDITS - len(subreddits))]
    col = {s: i for i, s in enumerate(subreddits)}
    sr = np.zeros((n, N_SUBREDDITS), np.float32)
    j = df["subreddit"].map(col)
    ok = j.notna().to_numpy()
    sr[np.flatnonzero(ok), j[ok].astype(int).to_numpy()] = 1
    order = order_factors(df["image_id"].to_numpy())
    X = np.hstack([month, wday, part, sr, order])
    names = ([f"month:{m}" for m in MONTHS] + [f"weekday:{d}" for d in WEEKDAYS]
             + [f"daypart:{p}" for p in DAY_PARTS] + [f"subreddit:{s}" for s in names_sr]
             + [f"order:{o}" for o in ORDER])
    return X, names


def title_view(titles, n_terms=200):
    """(N, n_terms) float32 TF-IDF (l2-normalised rows) over the ``n_terms`` most frequent
    terms, and the term list (padded with ``<unused-k>`` zero columns when the corpus has
    fewer terms)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # heavy: this step only

    docs = [html.unescape(str(t)) for t in titles]
    vec = TfidfVectorizer(max_features=n_terms, stop_words="english", lowercase=True,
                          token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b", dtype=np.float32)
    try:
        X = vec.fit_transform(docs).toarray()
        terms = vec.get_feature_names_out().tolist()
    except ValueError:                                   # empty vocabulary
        X, terms = np.zeros((len(docs), 0), np.float32), []
    if len(terms) < n_terms:
        X = np.hstack([X, np.zeros((len(docs), n_terms - len(terms)), np.float32)])
        terms += [f"<unused-{i}>" for i in range(n_terms - len(terms))]
    return X.astype(np.float32), terms


def build_reddit_bags(sub, labels, n_terms=200, subreddits=None, time_column="rawtime", meta=None):
    """Bags with views {"title": (0, n_terms), "factor": (n_terms, n_terms + 55)} from the
    selected submissions ``sub`` (sorted by item then time) and labels (image_id -> 0/1)."""
    Xt, terms = title_view(sub["title"], n_terms)
    Xf, fnames = factor_view(sub, subreddits, time_column)
    ids = sub["image_id"].to_numpy().astype(str)
    start = np.r_[True, ids[1:] != ids[:-1]]
    bag_ids = ids[start]
    if len(set(bag_ids)) != len(bag_ids):
        raise ValueError("submissions of one item are not contiguous; sort by item then time")
    offsets = np.r_[np.flatnonzero(start), len(ids)]
    y = labels.loc[bag_ids].to_numpy()
    first_title = sub["title"].to_numpy()[start]
    m = dict(meta or {})
    m["feature_names"] = {"title": terms, "factor": fnames}
    return Bags(np.hstack([Xt, Xf]), offsets, y, bag_ids,
                names=np.array([html.unescape(str(t))[:80] for t in first_title]),
                views={"title": (0, n_terms), "factor": (n_terms, n_terms + Xf.shape[1])},
                meta=m)
