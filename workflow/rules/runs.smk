# One job per experiment × dataset × selector × classifier (a method): it runs every
# (repeat, fold) cell of the method in one process, the cells spread over its threads.
# A selector state that several methods share (ReliefF-MI weights, rankings, PCA, ...) is a
# fold stage: computed once per (experiment, dataset, stage, repeat, fold) and read by them.


rule fold_stage:
    """A selector's classifier-independent state on every fold's scaled training bags."""
    input:
        bags=bag_store,
        folds="results/{experiment}/folds/{dataset}.parquet",
    output:
        "results/{experiment}/stages/{dataset}/{stage}.parquet",
    params:
        selector=stage_selector,
        experiment_cfg=stage_settings,
        cells=lambda wc: fold_keys(EXPERIMENTS[wc.experiment]["protocol"]),
        code=stage_code,
    threads: method_threads
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/stages/{dataset}/{stage}.log",
    benchmark:
        "results/benchmarks/{experiment}/stages/{dataset}/{stage}.tsv"
    resources:
        mem_mb=lambda wc, threads: job_mem_mb(threads),
        runtime=method_runtime,
    script:
        "../scripts/fold_stage.py"


rule run_method:
    """Fit scale -> select -> classify on every fold's training bags, score its test bags."""
    input:
        bags=bag_store,
        folds="results/{experiment}/folds/{dataset}.parquet",
        stage=method_stage,
    output:
        "results/{experiment}/runs/{dataset}/{selector}/{classifier}.parquet",
    params:
        method=run_method,
        experiment_cfg=run_settings,
        cells=lambda wc: fold_keys(EXPERIMENTS[wc.experiment]["protocol"]),
        cell_threads=THREADS["cell"],
        code=code_version,
    threads: method_threads
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/runs/{dataset}/{selector}/{classifier}.log",
    benchmark:
        "results/benchmarks/{experiment}/runs/{dataset}/{selector}/{classifier}.tsv"
    resources:
        mem_mb=lambda wc, threads: job_mem_mb(threads),
        runtime=method_runtime,
    script:
        "../scripts/run_method.py"
