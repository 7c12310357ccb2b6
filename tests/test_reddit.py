"""Reddit chain: SNAP schema, bag labelling, title TF-IDF view, 55-factor view."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from milbench.chains import reddit as rd
from milbench.chains.synthetic_reddit import HEADER, make_synthetic_reddit


def frame(rows):
    """Minimal SNAP-schema frame from (image_id, rawtime, unixtime, subreddit, score, title)."""
    df = pd.DataFrame(rows, columns=["image_id", "rawtime", "unixtime", "subreddit", "score", "title"])
    for c in rd.COLUMNS:
        if c not in df:
            df[c] = 0
    df["image_id"] = df["image_id"].astype(str)
    return df[list(rd.COLUMNS)]


# (rawtime, unixtime, month, weekday, day part) — 2012-03-31 was a Saturday
TIMES = [
    ("2012-03-31T05:59:59-07:00", 0, "Mar", "Sat", "night"),       # wrap-around, before 6
    ("2012-03-31T06:00:00-07:00", 0, "Mar", "Sat", "morning"),
    ("2012-03-31T08:59:00-07:00", 0, "Mar", "Sat", "morning"),
    ("2012-04-02T09:00:00-07:00", 0, "Apr", "Mon", "forenoon"),
    ("2012-04-02T11:59:00-07:00", 0, "Apr", "Mon", "forenoon"),
    ("2012-12-25T12:00:00-08:00", 0, "Dec", "Tue", "noon"),
    ("2012-12-25T12:59:59-08:00", 0, "Dec", "Tue", "noon"),
    ("2011-07-14T13:00:00-07:00", 0, "Jul", "Thu", "afternoon"),
    ("2011-07-14T17:59:59-07:00", 0, "Jul", "Thu", "afternoon"),
    ("2011-07-14T18:00:00-07:00", 0, "Jul", "Thu", "night"),
    ("2011-01-01T23:30:00-08:00", 0, "Jan", "Sat", "night"),
    ("2011-01-02T00:10:00-08:00", 0, "Jan", "Sun", "night"),       # wrap-around, after 0
    # unparseable rawtime -> unixtime in UTC: 1333172439 = 2012-03-31 05:40:39 UTC (Sat)
    ("garbage", 1333172439, "Mar", "Sat", "night"),
]


def test_factor_encoding_table():
    rows = [(i, raw, unix, "pics", 1, "t") for i, (raw, unix, *_rest) in enumerate(TIMES)]
    X, names = rd.factor_view(frame(rows), subreddits=["pics"])
    assert X.shape == (len(TIMES), 55) and len(names) == 55
    for i, (_, _, month, wday, part) in enumerate(TIMES):
        on = {names[j] for j in np.flatnonzero(X[i])}
        assert {f"month:{month}", f"weekday:{wday}", f"daypart:{part}"} <= on, (TIMES[i], on)
        assert X[i, :12].sum() == 1 and X[i, 12:19].sum() == 1 and X[i, 19:24].sum() == 1


@pytest.mark.parametrize("hour,part", [(0, 4), (5, 4), (6, 0), (8, 0), (9, 1), (11, 1), (12, 2),
                                       (13, 3), (17, 3), (18, 4), (23, 4)])
def test_day_part_boundaries(hour, part):
    assert rd.day_part(np.array([hour]))[0] == part


def test_subreddit_and_order_factors():
    subs = ["pics"] * 5 + ["funny"] * 3 + ["WTF"] * 2 + ["rare"]
    rows = [(0 if i < 7 else 1, "2012-01-01T10:00:00-08:00", 0, s, 1, "t")
            for i, s in enumerate(subs)]
    df = frame(rows)
    top = rd.top_subreddits(df["subreddit"], k=3)
    assert top == ["pics", "funny", "WTF"]
    X, names = rd.factor_view(df, subreddits=top)
    sr = X[:, 24:52]
    assert names[24:27] == ["subreddit:pics", "subreddit:funny", "subreddit:WTF"]
    assert names[27] == "subreddit:<unused-0>" and sr[:, 3:].sum() == 0
    assert sr[-1].sum() == 0                                  # "rare" is not in the top list
    order = X[:, 52:]
    # item 0 has 7 submissions: first three, one "other", last three
    np.testing.assert_array_equal(order[:7], [[1, 0, 0]] * 3 + [[0, 0, 1]] + [[0, 1, 0]] * 3)
    # item 1 has 4: positions 0..3 -> first-3 for 0..2, last-3 for 1..3 (binary factors)
    np.testing.assert_array_equal(order[7:], [[1, 0, 0], [1, 1, 0], [1, 1, 0], [0, 1, 0]])


def test_read_and_label_snap_csv(tmp_path):
    path = make_synthetic_reddit(tmp_path / "synthetic-redditSubmissions.csv", n_pos=20,
                                 n_neg=20, n_mid=10, seed=1)
    assert path.read_text().splitlines()[0] == ",".join(HEADER)
    with open(path, "a") as f:
        f.write('this,line,is,"broken\n')                    # malformed tail line is skipped
    df = rd.read_submissions(path)
    assert list(df.columns) == list(rd.COLUMNS)
    lab = rd.bag_labels(df)
    mx = df.groupby("image_id")["score"].max()
    assert (mx[lab.index[lab == 1]] >= 2000).all() and (mx[lab.index[lab == 0]] < 100).all()
    assert len(lab) == 40                                     # the 10 middle items are dropped
    sub, labels, info = rd.select_bags(df, n_pos=8, n_neg=6, seed=0)
    assert info["n_positive"] == 8 and info["n_negative"] == 6
    sub2, _, _ = rd.select_bags(df, n_pos=8, n_neg=6, seed=0)
    pd.testing.assert_frame_equal(sub, sub2)
    # submissions of one item are contiguous and in time order
    ids = sub["image_id"].to_numpy()
    assert len(np.unique(ids)) == np.sum(np.r_[True, ids[1:] != ids[:-1]])
    assert (sub.groupby("image_id", sort=False)["unixtime"].apply(lambda t: t.is_monotonic_increasing)).all()


def test_wrong_schema_names_missing_columns(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("image_id,title\n1,a\n")
    with pytest.raises(ValueError, match="missing column"):
        rd.read_submissions(p)


def test_build_reddit_bags_views(tmp_path):
    path = make_synthetic_reddit(tmp_path / "s.csv", n_pos=30, n_neg=30, n_mid=5, seed=2)
    sub, labels, info = rd.select_bags(rd.read_submissions(path), n_pos=25, n_neg=25, seed=0)
    bags = rd.build_reddit_bags(sub, labels, meta={"synthetic": True})
    assert bags.views == {"title": (0, 200), "factor": (200, 255)}
    assert len(bags) == 50 and len(bags.instances) == info["n_instances"]
    assert bags.labels.sum() == 25
    T, F = bags.view("title").instances, bags.view("factor").instances
    norms = np.linalg.norm(T, axis=1)
    assert np.all((np.abs(norms - 1) < 1e-5) | (norms == 0))
    assert set(np.unique(F).tolist()) <= {0.0, 1.0}
    assert (F[:, :12].sum(1) == 1).all() and (F[:, 12:19].sum(1) == 1).all()
    assert (F[:, 19:24].sum(1) == 1).all() and (F[:, 24:52].sum(1) <= 1).all()
    assert (F[:, 52:].sum(1) >= 1).all()
    names = bags.meta["feature_names"]
    assert len(names["title"]) == 200 and len(names["factor"]) == 55
    assert "reddit" in names["title"]                         # planted word survives stop words


def test_tfidf_title_view_unescapes_and_pads():
    X, terms = rd.title_view(["&quot;Cats&quot; are great", "the cats", "dogs"], n_terms=10)
    assert X.shape == (3, 10) and "quot" not in terms and terms[0] == "cats"
    assert terms[-1].startswith("<unused")


def test_cvfs_finds_planted_factors_on_synthetic_reddit(tmp_path):
    from milbench.selectors.cvfs import CVFS

    path = make_synthetic_reddit(tmp_path / "s.csv", n_pos=80, n_neg=80, n_mid=0, seed=3)
    sub, labels, _ = rd.select_bags(rd.read_submissions(path), n_pos=80, n_neg=80, seed=0)
    bags = rd.build_reddit_bags(sub, labels)
    sel = CVFS(m=10).fit(bags, bags.labels)
    names = bags.meta["feature_names"]["title"] + bags.meta["feature_names"]["factor"]
    top = [names[j] for j in sel.support_]
    planted = {"month:Oct", "month:Nov", "month:Aug", "month:Sep", "daypart:afternoon",
               "daypart:night", "subreddit:pics", "subreddit:funny", "subreddit:aww",
               "subreddit:WTF", "subreddit:GifSound", "subreddit:reddit.com", "reddit",
               "upvote", "karma", "repost", "order:first-3", "order:last-3"}
    assert len(planted & set(top[:5])) >= 3, top
