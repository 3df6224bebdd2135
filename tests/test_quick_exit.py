"""memcap.quick_exit: a job and every Snakemake start end without the interpreter's last collection."""

from __future__ import annotations

import subprocess
import sys

import pytest

# After the atexit handlers have run, how many objects the final collection would skip.
FROZEN_AT_EXIT = ("import atexit, gc, json{setup}; atexit._run_exitfuncs(); print(gc.get_freeze_count())")


def frozen_at_exit(setup: str) -> int:
    out = subprocess.run([sys.executable, "-c", FROZEN_AT_EXIT.format(setup=setup)], capture_output=True,
                         text=True, check=True).stdout
    return int(out.split()[-1])


@pytest.mark.parametrize("setup, skipped", [
    ("; from memcap.quick_exit import skip_final_collection; skip_final_collection()", True),
    ("", False),   # without it, every object is left for the final collection
])
def test_a_process_that_asks_skips_the_final_collection(setup, skipped):
    assert (frozen_at_exit(setup) > 1000) == skipped


def test_the_cli_and_the_snakefile_ask_for_it():
    from conftest import REPO

    assert "skip_final_collection()" in (REPO / "src/memcap/cli/__init__.py").read_text()
    assert "skip_final_collection()" in (REPO / "workflow/rules/common.smk").read_text()
