"""Send a Snakemake script's stdout/stderr and Python warnings to the rule's log file.

The log is appended to, each attempt under its own header (time, host, and the SLURM job id where
there is one): a job retried, cancelled and rerun, or rerun after a kill
keeps the log of every attempt (issue #29)."""
import datetime
import logging
import os
import socket
import sys


def setup(snakemake):
    if snakemake.log:
        f = open(snakemake.log[0], "a", buffering=1)
        slurm = os.environ.get("SLURM_JOB_ID")
        f.write(f"==== attempt started {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M:%S%z} "
                f"on {socket.gethostname()}" + (f", SLURM job {slurm}" if slurm else "")
                + " ====\n")
        sys.stdout = sys.stderr = f
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    logging.captureWarnings(True)
    return logging.getLogger(snakemake.rule)
