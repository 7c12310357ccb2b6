"""Send a Snakemake script's stdout/stderr and Python warnings to the rule's log file."""
import logging
import sys


def setup(snakemake):
    if snakemake.log:
        f = open(snakemake.log[0], "w", buffering=1)
        sys.stdout = sys.stderr = f
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    logging.captureWarnings(True)
    return logging.getLogger(snakemake.rule)
