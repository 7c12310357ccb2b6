# SNAP web-Reddit submissions -> 2-view bags `reddit` (cvfs-mil.txt §4.3).
# Settings: config `chains: reddit:` (defaults in common.smk).
#
#   source (reddit_synthetic | the user's SNAP csv) -> reddit_select -> reddit_bags
#     -> results/bags/reddit/

rule reddit_synthetic:
    """SYNTHETIC submissions in exactly SNAP's schema, with planted factor / title effects."""
    output:
        REDDIT_SYNTHETIC_CSV,
    params:
        cfg=REDDIT["synthetic"],
    conda:
        "../../envs/milbench.yaml"
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
    conda:
        "../../envs/milbench.yaml"
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
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/reddit.log",
    benchmark:
        "results/benchmarks/bags/reddit.tsv"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/reddit_bags.py"
