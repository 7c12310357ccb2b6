"""Send a Snakemake script's stdout/stderr and Python warnings (each text once) to the rule's
log file.

The log is appended to, each attempt under its own header (time, host, and the SLURM job id where
there is one): a job retried, cancelled and rerun, or rerun after a kill
keeps the log of every attempt (issue #29)."""
import datetime
import logging
import os
import socket
import sys


class RepeatFilter(logging.Filter):
    """Lets each warning text through once in this process (forked workers: once each).  An
    inner CV repeats its fits' warnings, which scikit-learn re-arms at every fit: one MIORDM
    job logged the same ConvergenceWarning 4,568 times.  The folds whose final fit stopped at
    its cap are counted in the method log (milbench.experiment.scoring.method_warnings)."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record):
        text = record.getMessage()
        if text in self.seen:
            return False
        self.seen.add(text)
        return True


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
    warned = logging.getLogger("py.warnings")
    if not any(isinstance(f, RepeatFilter) for f in warned.filters):
        warned.addFilter(RepeatFilter())
    return logging.getLogger(snakemake.rule)
