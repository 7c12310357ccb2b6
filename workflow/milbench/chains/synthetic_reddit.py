"""SYNTHETIC stand-in for the SNAP web-Reddit dump (no copy is obtainable here), written in
exactly SNAP's schema (header ``#image_id,unixtime,rawtime,title,total_votes,reddit_id,
number_of_upvotes,subreddit,number_of_downvotes,localtime,score,number_of_comments,username``).

Each item (``image_id``) is submitted 2–8 times.  Planted effects (what CVFS should find):

* popular items (one submission scores ≥ 2000) have that submission posted more often in
  Oct/Nov, in the afternoon, in ``pics`` / ``funny`` / ``aww``, with title words from a
  "good" list (``finally``, ``cute``, ``dad``, ...);
* unpopular items (every score < 100) are posted more often in Aug/Sep, at night, in
  ``WTF`` / ``GifSound`` / ``reddit.com``, with titles containing ``reddit`` / ``upvote`` /
  ``karma``;
* everything else (months, weekdays, most subreddits, most words) is noise; middle items
  (best score 100–1999) are generated too and must be dropped by the bag labelling.

``rawtime`` carries a UTC offset of −07:00 or −08:00; the planted hour effect is in that
wall-clock time (what :mod:`milbench.chains.reddit` reads); ``localtime`` mimics SNAP's
``unixtime + 25200``.  A file header comment is impossible in CSV, so the synthetic nature is
recorded by the chain in meta.json (``synthetic: true``) and in the file name.
"""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

HEADER = ("#image_id", "unixtime", "rawtime", "title", "total_votes", "reddit_id",
          "number_of_upvotes", "subreddit", "number_of_downvotes", "localtime", "score",
          "number_of_comments", "username")
SUBREDDITS = ("pics", "funny", "aww", "WTF", "GifSound", "reddit.com", "gifs", "AdviceAnimals",
              "atheism", "gaming", "trees", "fffffffuuuuuuuuuuuu", "memes", "cats", "videos",
              "todayilearned", "AskReddit", "food", "EarthPorn", "wallpapers", "Music", "movies",
              "science", "politics", "technology", "sports", "comics", "lolcats", "photoshopbattles",
              "mildlyinteresting", "Pareidolia", "firstworldproblems")
GOOD_SR = ("pics", "funny", "aww")
BAD_SR = ("WTF", "GifSound", "reddit.com")
GOOD_WORDS = ("finally", "cute", "dad", "found", "little", "years", "friend", "today")
BAD_WORDS = ("reddit", "upvote", "karma", "repost")
NOISE_WORDS = ("look", "picture", "thing", "guy", "people", "time", "day", "cat", "dog", "car",
               "world", "best", "new", "old", "man", "girl", "work", "home", "night", "life",
               "game", "photo", "first", "way", "face", "love", "happy", "big", "small", "water",
               "street", "city", "tree", "sky", "moment", "fail", "win", "epic", "awesome", "random")


def _b36(n):
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + s
        if n == 0:
            return s


def _title(rng, kind):
    words = list(rng.choice(NOISE_WORDS, size=rng.integers(2, 6)))
    if kind == "good" and rng.random() < 0.7:
        words.insert(rng.integers(len(words) + 1), rng.choice(GOOD_WORDS))
    if kind == "bad" and rng.random() < 0.6:
        words.insert(rng.integers(len(words) + 1), rng.choice(BAD_WORDS))
    t = " ".join(words).capitalize()
    r = rng.random()
    if r < 0.1:
        t = f"&quot;{t}&quot;"                         # HTML entities as in the real dump
    elif r < 0.2:
        t = t + ", again"                              # commas need CSV quoting
    return t


def _wall_time(rng, kind):
    """(year, month, day, hour, minute, second) wall-clock with planted month / hour effects."""
    if kind == "good" and rng.random() < 0.6:
        month = int(rng.choice([10, 11]))
    elif kind == "bad" and rng.random() < 0.6:
        month = int(rng.choice([8, 9]))
    else:
        month = int(rng.integers(1, 13))
    if kind == "good" and rng.random() < 0.6:
        hour = int(rng.integers(13, 18))
    elif kind == "bad" and rng.random() < 0.6:
        hour = int(rng.choice([18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5]))
    else:
        hour = int(rng.integers(0, 24))
    return (int(rng.integers(2009, 2013)), month, int(rng.integers(1, 29)), hour,
            int(rng.integers(0, 60)), int(rng.integers(0, 60)))


def _subreddit(rng, kind):
    if kind == "good" and rng.random() < 0.6:
        return str(rng.choice(GOOD_SR))
    if kind == "bad" and rng.random() < 0.6:
        return str(rng.choice(BAD_SR))
    return str(rng.choice(SUBREDDITS))


def make_synthetic_reddit(path, n_pos=120, n_neg=120, n_mid=40, seed=0):
    """Write a SYNTHETIC SNAP-schema CSV (module docstring); returns the path."""
    rng = np.random.default_rng(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    kinds = ["pos"] * n_pos + ["neg"] * n_neg + ["mid"] * n_mid
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]
    rows, rid = [], 10_000_000
    for image_id, kind in enumerate(kinds):
        n = int(rng.integers(2, 9))
        key = int(rng.integers(n))                      # the submission that made it popular
        for j in range(n):
            if kind == "pos":
                flavour = "good" if j == key else str(rng.choice(["plain", "bad"], p=[0.8, 0.2]))
                score = int(rng.integers(2000, 9000)) if j == key else int(rng.integers(0, 1500))
            elif kind == "neg":
                flavour = "bad" if rng.random() < 0.5 else "plain"
                score = int(rng.integers(-5, 100))
            else:
                flavour = "plain"
                score = int(rng.integers(100, 2000)) if j == key else int(rng.integers(0, 100))
            y, mo, d, h, mi, s = _wall_time(rng, flavour)
            off = -7 if 3 <= mo <= 10 else -8
            wall = dt.datetime(y, mo, d, h, mi, s)
            unix = int((wall - dt.timedelta(hours=off) - dt.datetime(1970, 1, 1)).total_seconds())
            down = int(rng.integers(0, max(2, abs(score) // 3 + 2)))
            up = score + down
            if up < 0:
                up, down = 0, -score
            rid += int(rng.integers(1, 5000))
            rows.append((image_id, unix, wall.isoformat() + f"{off:+03d}:00", _title(rng, flavour),
                         up + down, _b36(rid), up, _subreddit(rng, flavour), down, unix + 25200,
                         score, int(rng.integers(0, 300)), f"user{int(rng.integers(0, 5000))}"))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    return path
