"""Send a Snakemake script's stdout/stderr and Python warnings (each text once) to the rule's
log file; end the job with one line on the console when the disk is full; and, for the
Snakefile's ``onerror``, print each failed job's own error from its log.

The log is appended to, each attempt under its own header (time, host, and the SLURM job id where
there is one): a job retried, cancelled and rerun, or rerun after a kill
keeps the log of every attempt."""
import datetime
import errno
import logging
import os
import re
import socket
import sys
import traceback

ATTEMPT = "==== attempt started "
#: the lines of a failed job's error :func:`job_error` prints at most
ERROR_LINES = 15
_reported = []   # the one console line this process printed about a failed write


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


#: a full disk, or a full quota (a cluster's home or project space)
FULL = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded"}


def write_failure(exc, path):
    """One line for a failed write: ``no space left on device writing <path>`` (or ``disk quota
    exceeded ...``), else ``cannot write <path>: <reason>``."""
    if exc.errno in FULL:
        return f"{FULL[exc.errno]} writing {path}"
    return f"cannot write {path}: {exc.strerror or exc}"


def _report(line):
    """Print ``line`` on the console (the stderr the job started with) once per process."""
    if not _reported:
        _reported.append(line)
        print(line, file=sys.__stderr__, flush=True)


class LogFile:
    """The rule's log as the job's stdout and stderr.  A write that fails (a full disk) ends the
    job: one line naming the log goes to the console and the job exits with status 1, instead of
    logging's ``--- Logging error ---`` traceback for every later message and a fatal error at
    interpreter exit.  Later writes (Python's own, on the way out) are dropped."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "a", buffering=1)
        self.broken = False

    def write(self, text):
        return self._do(self.file.write, text)

    def flush(self):
        self._do(self.file.flush)

    def _do(self, op, *args):
        if self.broken:
            return len(args[0]) if args else None
        try:
            return op(*args)
        except OSError as e:
            self.broken = True
            _report(write_failure(e, self.path))
            raise SystemExit(1) from None

    def __getattr__(self, name):          # encoding, fileno, isatty, ... of the file
        if name == "file":
            raise AttributeError(name)
        return getattr(self.file, name)


def _disk_full(exc):
    """The OSError of a full disk or quota in ``exc``'s chain (cause / context), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in FULL:
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _outputs(outputs):
    """The job's outputs as a path: the one file, or the folder several share (a bag store)."""
    if len(outputs) == 1:
        return str(outputs[0])
    common = os.path.commonpath(outputs) if outputs else ""
    return common + "/" if common else "the job's outputs"


def _excepthook(outputs):
    """An uncaught full-disk error: one console line naming the file (the job's outputs where
    the error names none); the traceback and that line also go to the log where it can."""
    def hook(kind, value, tb):
        full = _disk_full(value)
        try:
            if full is None:
                return sys.__excepthook__(kind, value, tb)
            line = write_failure(full, full.filename or _outputs(outputs))
            _report(line)
            if sys.stderr is not sys.__stderr__:
                traceback.print_exception(kind, value, tb, file=sys.stderr)
                print(line, file=sys.stderr, flush=True)
        except SystemExit:        # the log is on the full disk too: the console has its line
            pass
    return hook


def setup(snakemake):
    if snakemake.log:
        f = LogFile(snakemake.log[0])
        slurm = os.environ.get("SLURM_JOB_ID")
        f.write(f"{ATTEMPT}{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M:%S%z} "
                f"on {socket.gethostname()}" + (f", SLURM job {slurm}" if slurm else "")
                + " ====\n")
        sys.stdout = sys.stderr = f
    sys.excepthook = _excepthook(list(getattr(snakemake, "output", None) or []))
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    logging.captureWarnings(True)
    warned = logging.getLogger("py.warnings")
    if not any(isinstance(f, RepeatFilter) for f in warned.filters):
        warned.addFilter(RepeatFilter())
    return logging.getLogger(snakemake.rule)


# ---- the console side: what the Snakefile's onerror prints ------------------------------------

_ERROR_BLOCK = re.compile(r"^Error in rule (\S+):\n((?:[ \t]+.*(?:\n|$))*)", re.M)
_LOG_LINE = re.compile(r"^\s+log: (.*?)(?: \(check log file\(s\) for error details\))?\s*$", re.M)


def failed_jobs(main_logs):
    """(rule, [job logs]) of every failed job a Snakemake main log reports (its ``Error in
    rule`` blocks), each job once, in the order they failed."""
    jobs = {}
    for main in main_logs:
        try:
            text = open(main, errors="replace").read()
        except OSError:
            continue
        for m in _ERROR_BLOCK.finditer(text):
            logs = _LOG_LINE.search(m.group(2))
            key = (m.group(1), tuple(logs.group(1).split(", ")) if logs else ())
            jobs.setdefault(key, None)
    return [(rule, list(logs)) for rule, logs in jobs]


def job_error(path, max_lines=ERROR_LINES, tail_bytes=1 << 18):
    """The error of a job's last attempt in its log: the final exception (its type and
    message, not the frames of its traceback), or the attempt's last lines where it holds no
    traceback (a job killed, or a log cut short); at most ``max_lines`` lines."""
    with open(path, "rb") as f:
        f.seek(max(0, os.fstat(f.fileno()).st_size - tail_bytes))
        text = f.read().decode(errors="replace")
    lines = text[text.rfind(ATTEMPT):].splitlines()[1:] if ATTEMPT in text else text.splitlines()
    start = next((i for i in range(len(lines) - 1, -1, -1)
                  if lines[i].startswith("Traceback (most recent call last)")), None)
    if start is not None:
        rest = lines[start + 1:]
        body = next((i for i, ln in enumerate(rest) if ln and not ln[0].isspace()), len(rest))
        lines = rest[body:]
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    if lines and lines[-1].startswith(tuple(f"{what} writing " for what in FULL.values())):
        return lines[-1:]                 # the one line a full disk ends a job with
    return lines[:max_lines] if start is not None else lines[-max_lines:]


def print_job_errors(main_logs, stream=None):
    """For each job a failed Snakemake run reports, print the error its log ends with (once a
    job), so the console shows the job's own message, not only a pointer to its log."""
    stream = stream or sys.stderr
    if isinstance(main_logs, (str, os.PathLike)):
        main_logs = [main_logs]
    for rule, logs in failed_jobs(main_logs):
        for path in logs:
            try:
                lines = job_error(path)
            except OSError as e:
                lines = [f"(log unreadable: {e.strerror or e})"]
            if not lines:
                lines = ["(no error in its log, cut short or empty: see the job's output above)"]
            print(f"Error of rule {rule} (log {path}):", *("    " + ln for ln in lines),
                  sep="\n", file=stream, flush=True)
