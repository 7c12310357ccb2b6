# Per-fold rows -> scores, summary, statistics, figures, reproduction table, report.


# reading the method files back is light: on a cluster it runs where Snakemake runs, not as a job
localrules:
    check_runs,


rule check_runs:
    """Every method file of an experiment reads back whole. A job of its own, because Snakemake
    removes a job's old outputs when it starts: a corrupt run file stops the workflow here,
    naming the file, and the previous good scores.parquet and summary.csv stay."""
    input:
        experiment_runs,
    output:
        "results/{experiment}/runs.tsv",
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/check_runs.log",
    benchmark:
        "results/benchmarks/{experiment}/check_runs.tsv"
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/check_runs.py"


rule scores:
    """All per-fold rows of one experiment -> scores.parquet and summary.csv (mean ± std).
    The report shows summary.csv; the Parquet file stays out of it (binary, not readable)."""
    input:
        checked="results/{experiment}/runs.tsv",
        runs=experiment_runs,
    output:
        scores="results/{experiment}/scores.parquet",
        summary=report("results/{experiment}/summary.csv", caption="../report/summary.rst",
                       category="{experiment}", subcategory="tables"),
    params:
        metrics=lambda wc: EXPERIMENTS[wc.experiment]["metrics"],
        labels=lambda wc: method_labels(EXPERIMENTS[wc.experiment]),
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/scores.log",
    benchmark:
        "results/benchmarks/{experiment}/scores.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/scores.py"


rule stats:
    """Significance tests configured under the experiment's `stats:` (plus defaults)."""
    input:
        "results/{experiment}/scores.parquet",
    output:
        report(directory("results/{experiment}/stats"), patterns=["{name}.csv"],
               caption="../report/stats.rst", category="{experiment}", subcategory="statistics"),
    params:
        entries=lambda wc: EXPERIMENTS[wc.experiment]["stats"],
        metrics=lambda wc: EXPERIMENTS[wc.experiment]["metrics"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/stats.log",
    benchmark:
        "results/benchmarks/{experiment}/stats.tsv"
    resources:
        runtime=30,
    script:
        "../scripts/stats.py"


rule figures:
    """Figures configured under `figures:` (or the automatic default set over the experiment's
    metrics), PNG and SVG."""
    input:
        "results/{experiment}/scores.parquet",
    output:
        report(directory("results/{experiment}/figures"), patterns=["{name}.png"],
               caption="../report/figures.rst", category="{experiment}", subcategory="figures"),
    params:
        entries=lambda wc: EXPERIMENTS[wc.experiment]["figures"],
        metrics=lambda wc: EXPERIMENTS[wc.experiment]["metrics"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/figures.log",
    benchmark:
        "results/benchmarks/{experiment}/figures.tsv"
    resources:
        runtime=30,
    script:
        "../scripts/figures.py"


rule feature_coverage:
    """Bag coverage of selected features (cvfs-mil.txt Fig. 8), configured under `coverage:`."""
    input:
        coverage_bags,
    output:
        report(directory("results/{experiment}/coverage"), patterns=["{name}.png"],
               caption="../report/coverage.rst", category="{experiment}", subcategory="figures"),
    params:
        entries=lambda wc: EXPERIMENTS[wc.experiment]["coverage"],
        scale=lambda wc: EXPERIMENTS[wc.experiment]["scale"],
        seed=lambda wc: EXPERIMENTS[wc.experiment]["protocol"]["seed"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/coverage.log",
    benchmark:
        "results/benchmarks/{experiment}/coverage.tsv"
    resources:
        runtime=30,
    script:
        "../scripts/coverage.py"


rule reproduction:
    """Our figures next to the paper's targets (resources/targets: an edit reruns it)."""
    input:
        "results/{experiment}/summary.csv",
        targets=sorted(str(p) for p in (Path(workflow.basedir) / "resources/targets").iterdir()),
    output:
        report("results/{experiment}/reproduction.csv", caption="../report/reproduction.rst",
               category="{experiment}", subcategory="tables"),
    params:
        mapping=lambda wc: EXPERIMENTS[wc.experiment]["reproduction_map"],
    conda:
        "../../envs/milbench.yaml"
    log:
        "results/logs/{experiment}/reproduction.log",
    benchmark:
        "results/benchmarks/{experiment}/reproduction.tsv"
    resources:
        runtime=10,
    script:
        "../scripts/reproduction.py"
