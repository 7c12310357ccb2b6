"""A failed job's own error reaches the console: the Snakefile's ``onerror`` prints the final
exception of each failed job's log once (milbench.utils.runlog.print_job_errors), and a full
disk ends a job with one line naming the path instead of logging tracebacks."""
import os
import subprocess
import sys
import textwrap

import pytest
import yaml
from test_workflow_e2e import SNAKEMAKE

from conftest import REPO, tiny_config
from milbench.utils.runlog import failed_jobs, job_error, print_job_errors


@pytest.mark.parametrize("rows, message", [
    ("1,a,1,2\n1,a,3,4\n0,b,1,nan\n0,c,1,2\n", "mine.csv, line 3: feature 2 = nan: missing"),
    ("1,a,1,2\n1,b,1,3\n1,c,1,2\n",
     "data set mine (results/bags/mine/bags.parquet): need at least 2 bags of each class"),
])
def test_bad_input_error_is_on_the_console(tmp_path, rows, message):
    (tmp_path / "mine.csv").write_text(rows)
    cfg = tiny_config()
    cfg["datasets"] = {"mine": {"format": "csv", "path": "mine.csv"}}
    cfg["experiments"]["tiny"]["datasets"] = ["mine"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = subprocess.run(SNAKEMAKE + ["-d", str(tmp_path), "--configfile",
                                      str(tmp_path / "config.yaml"), "--cores", "1"],
                         capture_output=True, text=True, timeout=300)
    console = res.stdout + res.stderr
    assert res.returncode != 0
    assert console.count(message) == 1, console[-3000:]
    assert "Traceback" not in console


MAIN_LOG = """\
Error in rule bags_user:
    message: None
    jobid: 2
    log: results/logs/bags/a.log (check log file(s) for error details)
Error in rule folds:
    jobid: 3
    log: results/logs/x/folds/a.log (check log file(s) for error details)
Error in rule bags_user:
    jobid: 2
    log: results/logs/bags/a.log (check log file(s) for error details)
Shutting down, this might take some time.
"""

JOB_LOG = """\
==== attempt started 2026-01-01 00:00:00+0000 on a ====
Traceback (most recent call last):
  File "x.py", line 1, in <module>
ValueError: an earlier attempt's error
==== attempt started 2026-01-01 00:01:00+0000 on a ====
2026-01-01 00:01:01,000 INFO reading
Traceback (most recent call last):
  File "x.py", line 3, in read
    raise KeyError(1)
KeyError: 1

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "x.py", line 9, in <module>
    read()
milbench.data.sources.SourceError: d.csv, line 7: feature 1 = 'x'
  expected a number
"""


def test_each_failed_job_once_with_its_last_exception(tmp_path, capsys):
    (tmp_path / "main.log").write_text(MAIN_LOG)
    (tmp_path / "job.log").write_text(JOB_LOG)
    assert failed_jobs([tmp_path / "main.log"]) == [
        ("bags_user", ["results/logs/bags/a.log"]), ("folds", ["results/logs/x/folds/a.log"])]
    assert job_error(tmp_path / "job.log") == [
        "milbench.data.sources.SourceError: d.csv, line 7: feature 1 = 'x'", "  expected a number"]
    (tmp_path / "cut.log").write_text(JOB_LOG.split("Traceback")[0] + "".join(
        f"line {i}\n" for i in range(30)))
    assert job_error(tmp_path / "cut.log", max_lines=3) == ["line 27", "line 28", "line 29"]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        (tmp_path / "results/logs/bags").mkdir(parents=True)
        (tmp_path / "results/logs/bags/a.log").write_text(JOB_LOG)
        print_job_errors(str(tmp_path / "main.log"))
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert err.count("d.csv, line 7: feature 1 = 'x'") == 1
    assert "Error of rule folds (log results/logs/x/folds/a.log):\n    (log unreadable" in err


FULL_DISK = textwrap.dedent("""\
    import sys, types
    from milbench.utils import runlog
    log_file, output, fills = sys.argv[1:]
    sm = types.SimpleNamespace(log=[log_file], rule="folds", output=[output])
    log = runlog.setup(sm)
    if fills == "log-later":              # the disk fills up while the job runs
        sys.stderr.file = open("/dev/full", "a", buffering=1)
    for i in range(4):
        log.info("message %d", i)
    if fills == "output":
        import pandas as pd
        pd.DataFrame({"a": range(1000)}).to_parquet(output)
    print("done")
""")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full (writes fail ENOSPC)")
@pytest.mark.parametrize("fills", ["log", "log-later", "output"])
def test_full_disk_ends_the_job_with_one_line(tmp_path, fills):
    """A write to /dev/full fails with ENOSPC, as on a full disk: the job exits 1 with one line
    on stderr naming the file, not logging's tracebacks; the log, where writable, keeps it."""
    log = "/dev/full" if fills == "log" else str(tmp_path / "job.log")
    output = "/dev/full" if fills == "output" else str(tmp_path / "out.parquet")
    res = subprocess.run([sys.executable, "-c", FULL_DISK, log, output, fills],
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "workflow")})
    assert res.returncode == 1
    full = log if fills.startswith("log") else output
    assert res.stderr == f"no space left on device writing {full}\n"
    assert res.stdout == ""
    if fills == "output":
        text = (tmp_path / "job.log").read_text()
        assert "message 3" in text and text.endswith("no space left on device writing /dev/full\n")
        assert job_error(tmp_path / "job.log") == ["no space left on device writing /dev/full"]
