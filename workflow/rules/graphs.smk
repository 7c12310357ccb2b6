# Graph feature chains (milsd.txt §3): WebKB pages -> `webkb-<task>` bags with a
# hyperlink graph, and Trx protein bags + similarity / kNN graph -> `protein-graph`.
# Settings: config `chains: webkb:` and `chains: protein_graph:` (defaults in common.smk).
#
#   source (webkb_synthetic | webkb_extract of the fetched archive | a user folder)
#     -> webkb_parse (pages + resolved links) -> webkb_bags (one per task)
#     -> results/bags/webkb-{course,faculty,student}/   (edges.parquet: bag + instance level)
#   protein raw (fetch_raw or the `mil` package offline) -> protein_graph
#     -> results/bags/protein-graph/

rule webkb_synthetic:
    """SYNTHETIC hyperlinked site in WebKB's layout (labelled synthetic downstream)."""
    output:
        directory("results/raw/synthetic-webkb"),
    params:
        cfg=WEBKB["synthetic"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/webkb_synthetic.log",
    benchmark:
        "results/benchmarks/chains/webkb_synthetic.tsv"
    resources:
        runtime=5,
    script:
        "../scripts/webkb_synthetic.py"


rule webkb_extract:
    """WebKB archive (fetched via the manifest / mirror, or a local path) -> folder, safely."""
    input:
        webkb_raw_files(),
    output:
        directory("results/raw/webkb-site"),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/webkb_extract.log",
    benchmark:
        "results/benchmarks/chains/webkb_extract.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/webkb_extract.py"


rule webkb_parse:
    """Pages: MIME header stripped, markup removed, stop words, Porter stems; hrefs resolved."""
    input:
        webkb_site_dir(),
    output:
        pages=f"{WEBKB_CHAIN}/pages.parquet",
        links=f"{WEBKB_CHAIN}/links.parquet",
        info=f"{WEBKB_CHAIN}/site.json",
    params:
        synthetic=WEBKB["source"] == "synthetic",
        source=str(WEBKB["source"]),
        raw_files=webkb_raw_files(),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/chains/webkb_parse.log",
    benchmark:
        "results/benchmarks/chains/webkb_parse.tsv"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/webkb_parse.py"


rule webkb_bags:
    """Task `webkb-<task>`: all pages of the class vs an equal seeded sample of the others."""
    input:
        pages=f"{WEBKB_CHAIN}/pages.parquet",
        links=f"{WEBKB_CHAIN}/links.parquet",
        info=f"{WEBKB_CHAIN}/site.json",
    output:
        [f"results/bags/webkb-{{task}}@{WEBKB_TAG}/{f}"
         for f in ("instances.parquet", "bags.parquet", "meta.json", "edges.parquet")],
    params:
        cfg={k: v for k, v in WEBKB.items() if k not in ("synthetic", "source")},
    wildcard_constraints:
        task="|".join(WEBKB_TASKS),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/webkb-{task}.log",
    benchmark:
        "results/benchmarks/bags/webkb-{task}.tsv"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/webkb_bags.py"


rule protein_graph:
    """Trx bags + bag graph: user score table > threshold, else the kNN substitute (labelled)."""
    input:
        raw=[] if config["offline"] else
            [f"results/raw/{f['path']}" for f in MANIFEST["protein"]["files"]],
        table=[PROTEIN_GRAPH["table"]] if PROTEIN_GRAPH["table"] else [],
    output:
        bags_of("protein-graph") + ["results/bags/protein-graph/edges.parquet"],
    params:
        cfg=PROTEIN_GRAPH,
        offline=config["offline"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/protein-graph.log",
    benchmark:
        "results/benchmarks/bags/protein-graph.tsv"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/protein_graph.py"
