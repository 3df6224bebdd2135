"""The run summary the Snakefile writes when a run ends (logs/summary/latest.md)."""

import os
import time

from memcap import run_summary

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def test_summary_counts_jobs_and_lists_the_slowest_first(tmp_path):
    logs = tmp_path / "logs"
    started = time.time()
    for job, seconds in [("dpc/exp1/4", 12.5), ("dpc/exp5_mlp/13", 3600.0)]:
        path = logs / f"{job}.benchmark.tsv"
        path.parent.mkdir(parents=True)
        path.write_text(HEADER + f"{seconds}\t0:00:12\t400.0\t2000\t300\t350\t0\t0\t95\t{seconds * 0.9}\n")
    old = logs / "mlt/old.benchmark.tsv"            # from an earlier run: not this run's
    old.parent.mkdir(parents=True)
    old.write_text(HEADER + "99999\t0\t1\t1\t1\t1\t0\t0\t1\t1\n")
    os.utime(old, (started - 3600, started - 3600))
    smk_log = tmp_path / "run.log"
    smk_log.write_text("Finished jobid: 3 (Rule: dpc_train)\nFinished jobid: 4 (Rule: dpc_train)\n"
                       "Error in rule dpc_figures:\n")
    text = run_summary.write([str(smk_log)], started, ok=False, logs=logs).read_text()
    assert "FAILED" in text and "jobs finished: 2; failed rules: dpc_figures" in text
    assert "training jobs timed (benchmark files): 2" in text
    assert text.index("dpc/exp5_mlp/13") < text.index("dpc/exp1/4") and "old" not in text
