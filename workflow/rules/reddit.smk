# SNAP web-Reddit submissions -> 2-view bags `reddit` (SPEC §5, cvfs-mil.txt §4.3).
# Settings: config `chains: reddit:` (defaults below).
#
#   source (reddit_synthetic | the user's SNAP csv) -> reddit_select -> reddit_bags
#     -> results/bags/reddit/

import copy

REDDIT_DEFAULTS = {
    "source": "synthetic",        # synthetic | <path to SNAP redditSubmissions.csv>
    "n_pos": 300,
    "n_neg": 300,
    "pos_threshold": 2000,
    "neg_threshold": 100,
    "seed": 0,
    "n_terms": 200,
    "subreddits": None,           # 28 community names, or None = the 28 most frequent
    "time_column": "rawtime",     # rawtime (poster wall clock) | unixtime (UTC) | localtime
    "synthetic": {"n_pos": 120, "n_neg": 120, "n_mid": 40, "seed": 0},
}
REDDIT = copy.deepcopy(REDDIT_DEFAULTS)
REDDIT.update({k: v for k, v in config.get("chains", {}).get("reddit", {}).items() if k != "synthetic"})
REDDIT["synthetic"].update(config.get("chains", {}).get("reddit", {}).get("synthetic", {}))
REDDIT_CHAIN = "results/chains/reddit"
REDDIT_SYNTHETIC_CSV = "results/raw/synthetic-reddit/synthetic-redditSubmissions.csv"


def reddit_csv():
    return REDDIT_SYNTHETIC_CSV if REDDIT["source"] == "synthetic" else str(REDDIT["source"])


rule reddit_synthetic:
    """SYNTHETIC submissions in exactly SNAP's schema, with planted factor / title effects."""
    output:
        REDDIT_SYNTHETIC_CSV,
    params:
        cfg=REDDIT["synthetic"],
    log:
        "results/logs/chains/reddit_synthetic.log",
    benchmark:
        "results/benchmarks/chains/reddit_synthetic.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/reddit_synthetic.py"


rule reddit_select:
    """Bags by image_id: positive if any score >= 2000, negative if all < 100; seeded sample."""
    input:
        csv=reddit_csv(),
    output:
        submissions=f"{REDDIT_CHAIN}/submissions.parquet",
        info=f"{REDDIT_CHAIN}/selection.json",
    params:
        cfg={k: REDDIT[k] for k in ("n_pos", "n_neg", "pos_threshold", "neg_threshold", "seed")},
        source_label=REDDIT["source"],
        synthetic=REDDIT["source"] == "synthetic",
    log:
        "results/logs/chains/reddit_select.log",
    benchmark:
        "results/benchmarks/chains/reddit_select.tsv"
    resources:
        mem_mb=8000,
        runtime=20,
    script:
        "../scripts/reddit_select.py"


rule reddit_bags:
    """Title view (TF-IDF, top-200 terms) + factor view (55 binary factors) -> `reddit`."""
    input:
        submissions=f"{REDDIT_CHAIN}/submissions.parquet",
        info=f"{REDDIT_CHAIN}/selection.json",
    output:
        bags_of("reddit"),
    params:
        cfg={k: v for k, v in REDDIT.items() if k != "synthetic"},
    log:
        "results/logs/bags/reddit.log",
    benchmark:
        "results/benchmarks/bags/reddit.tsv"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/reddit_bags.py"
