# One job per experiment × dataset × selector × classifier × repeat × fold.


rule run_fold:
    """Fit scale -> select -> classify on the fold's training bags, score its test bags."""
    input:
        bags=lambda wc: bags_of(wc.dataset),
        folds="results/{experiment}/folds/{dataset}.parquet",
    output:
        "results/{experiment}/runs/{dataset}/{selector}/{classifier}/r{repeat}_f{fold}.parquet",
    params:
        method=run_method,
        experiment_cfg=run_settings,
        code=code_version,
    wildcard_constraints:
        repeat=r"\d+",
        fold=r"\d+",
    threads: config.get("threads", {}).get("run", 1)
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/runs/{dataset}/{selector}/{classifier}/r{repeat}_f{fold}.log",
    benchmark:
        "results/benchmarks/{experiment}/runs/{dataset}/{selector}/{classifier}/r{repeat}_f{fold}.tsv"
    group:
        "runs"
    resources:
        mem_mb=2000,
        runtime=lambda wc: EXPERIMENTS[wc.experiment].get("runtime", 60),
    script:
        "../scripts/run_fold.py"
