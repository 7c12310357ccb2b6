# milbench: multi-instance learning pipeline. Run `snakemake --cores N`.
import sys

from snakemake.utils import min_version, validate

min_version("9.0")


# the embedded default; a --configfile (e.g. config/paper/midr.yaml) replaces it instead of
# adding its experiments to the quick-start ones
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# a wrong key or value stops here with a short message naming the experiment and the key
# (a checked copy; Snakemake's validate below fills config itself)
sys.path.insert(0, f"{workflow.basedir}/workflow")  # the library, as in rules/common.smk
from milbench.experiment.config import with_defaults

with_defaults(config, ", ".join(map(str, workflow.overwrite_configfiles)) or "config/config.yaml")

# fills in every default the schema gives (chains, threads, experiments)
validate(config, "workflow/schemas/config.schema.yaml", set_default=True)


# `snakemake --report report.html` opens on this page: its title and what to look at first
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/images.smk"
include: "workflow/rules/reddit.smk"
include: "workflow/rules/graphs.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/aggregate.smk"


rule all:
    input:
        all_targets(),
    default_target: True


# a failed run ends with each failed job's own error (the end of its log), not only its log's path
onerror:
    from milbench.utils.runlog import print_job_errors

    print_job_errors(log)
