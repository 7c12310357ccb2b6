# Corel images -> 3-view bags `corel-cats` (cvfs-mil.txt §4.2).
# Settings: config `chains: corel:` (defaults in common.smk).  Every step is its own rule, so changing
# e.g. the codebook size reruns only corel_codebook and corel_bags.
#
#   source ──(corel_synthetic | corel_extract | a user folder)──> corel_select
#     -> corel_segment (region maps npz + overlay PNGs)
#     -> corel_codebook (k-means per view)               -> corel_bags -> results/bags/corel-cats/

rule corel_synthetic:
    """SYNTHETIC scenes in Corel-5k layout (striped / spotted cats among other animals)."""
    output:
        directory("results/raw/synthetic-scenes"),
    params:
        cfg=COREL["synthetic"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/corel_synthetic.log",
    benchmark:
        "results/benchmarks/chains/corel_synthetic.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/corel_synthetic.py"


rule corel_extract:
    """Corel archive (fetched via the mirror, or a local path) -> folder, safe extraction."""
    input:
        corel_source_file() or [],
    output:
        directory("results/raw/corel-images"),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/corel_extract.log",
    benchmark:
        "results/benchmarks/chains/corel_extract.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/corel_extract.py"


rule corel_select:
    """Keyword selection: positives (tiger/lion/leopard), seeded draw of other-animal negatives."""
    input:
        source=corel_source_dir(),
    output:
        table=f"{COREL_CHAIN}/images.csv",
        info=f"{COREL_CHAIN}/selection.json",
    params:
        cfg={k: COREL[k] for k in ("positive", "negative", "exclude", "n_pos", "n_neg", "seed")},
        source_label=COREL["source"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/corel_select.log",
    benchmark:
        "results/benchmarks/chains/corel_select.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/corel_select.py"


rule corel_segment:
    """SAS superpixel bipartite graph + Transfer cuts -> `regions` connected regions per image."""
    input:
        table=f"{COREL_CHAIN}/images.csv",
    output:
        segments=f"{COREL_CHAIN}/segments.npz",
        overlays=directory(f"{COREL_CHAIN}/overlays"),
    params:
        cfg={k: COREL[k] for k in ("regions", "oversegmentations", "alpha", "beta", "nb", "seed",
                                   "overlays")},
    threads: COREL["threads"]
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/corel_segment.log",
    benchmark:
        "results/benchmarks/chains/corel_segment.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    script:
        "../scripts/corel_segment.py"


rule corel_codebook:
    """k-means codebook per view (HSV, 16-d dense HOG, LBP bits) on a seeded pixel sample."""
    input:
        table=f"{COREL_CHAIN}/images.csv",
    output:
        f"{COREL_CHAIN}/codebooks.npz",
    params:
        cfg={k: COREL[k] for k in ("codebook", "pixels_per_image", "seed")},
    threads: COREL["threads"]
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/corel_codebook.log",
    benchmark:
        "results/benchmarks/chains/corel_codebook.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/corel_codebook.py"


rule corel_bags:
    """Region = normalised code histogram per view -> 3-view bags `corel-cats`."""
    input:
        table=f"{COREL_CHAIN}/images.csv",
        info=f"{COREL_CHAIN}/selection.json",
        segments=f"{COREL_CHAIN}/segments.npz",
        codebooks=f"{COREL_CHAIN}/codebooks.npz",
    output:
        bags_of("corel-cats"),
    params:
        cfg={k: v for k, v in COREL.items() if k != "threads"},
        source_file=corel_source_file(),
    threads: COREL["threads"]
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/corel-cats.log",
    benchmark:
        "results/benchmarks/bags/corel-cats.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/corel_bags.py"
