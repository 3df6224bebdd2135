"""Provenance names the code: the commit, what differed from it, a hash of any code difference; and a
result is judged clean, explained (a legacy '-dirty' result the history explains) or untraceable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

import infra_helpers as ih
from conftest import tiny_mlt
from memcap import provenance, results


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def repo(tmp_path) -> Path:
    """A repository with code, params, a lock file and docs, all committed."""
    for rel, text in {"src/pkg/model.py": "W = 1\n", "params.yaml": "lr: 0.1\n", "dvc.lock": "a\n",
                      "README.md": "hi\n", "workflow/rules/a.smk": "rule a:\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c1")
    return tmp_path


def commit(root: Path, message: str) -> str:
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", message)
    return git(root, "rev-parse", "HEAD")


def test_a_clean_tree_records_its_commit_and_no_difference(repo):
    state = provenance.code_state(repo)
    assert state["commit"] == git(repo, "rev-parse", "HEAD")
    assert state["differs"] == [] and state["code_differs"] == [] and state["code_diff_sha256"] is None
    assert provenance.commit_label(state) == state["commit"]


def test_an_uncommitted_code_change_is_dirty_with_the_files_and_a_hash_of_the_diff(repo):
    (repo / "src/pkg/model.py").write_text("W = 2\n")
    (repo / "src/pkg/new.py").write_text("X = 1\n")          # untracked, importable
    state = provenance.code_state(repo)
    assert state["code_differs"] == ["src/pkg/model.py", "src/pkg/new.py"]
    assert provenance.commit_label(state).endswith("-dirty")
    first = state["code_diff_sha256"]
    (repo / "src/pkg/model.py").write_text("W = 3\n")          # another change, another hash
    assert provenance.code_state(repo)["code_diff_sha256"] not in (None, first)


def test_a_change_only_in_dvc_lock_docs_or_params_is_named_but_not_dirty(repo):
    (repo / "dvc.lock").write_text("b\n")
    (repo / "README.md").write_text("hello\n")
    (repo / "params.yaml").write_text("lr: 0.2\n")             # recorded in full in every Parquet
    state = provenance.code_state(repo)
    assert state["differs"] == ["README.md", "dvc.lock", "params.yaml"]
    assert state["code_differs"] == [] and state["code_diff_sha256"] is None
    assert provenance.commit_label(state) == state["commit"]


@pytest.mark.parametrize("path, kind", [("dvc.lock", "neutral"), ("docs/a.md", "neutral"), ("tests/t.py", "neutral"),
                                        ("results/report/metrics.json", "neutral"), ("params.yaml", "params"),
                                        ("config/published.yaml", "params"), ("src/memcap/mlt_synthetic/train.py", "code"),
                                        ("workflow/rules/mlt.smk", "code"), ("Snakefile", "code"), ("dvc.yaml", "code")])
def test_what_can_change_a_result(path, kind):
    assert provenance.kind(path) == kind


def _result(repo: Path, name: str, meta: dict) -> str:
    results.write_parquet(pd.DataFrame({"x": [1]}), repo / name, meta)
    return name


def test_judge_clean_explained_and_untraceable(repo):
    head = git(repo, "rev-parse", "HEAD")
    clean = _result(repo, "clean.parquet", {"git_commit": head, "code": provenance.code_state(repo)})
    (repo / "src/pkg/model.py").write_text("W = 2\n")
    dirty = _result(repo, "dirty.parquet", {"git_commit": f"{head}-dirty", "code": provenance.code_state(repo)})
    stranger = _result(repo, "stranger.parquet", {"git_commit": "f" * 40})
    legacy = _result(repo, "legacy.parquet", {"git_commit": f"{head}-dirty"})
    notes = {legacy: {"sha256": provenance.file_sha256(repo / legacy), "note": "the history says so"},
             dirty: {"sha256": "0" * 64, "note": "an entry for other bytes explains nothing"}}
    judged = {p: provenance.judge(p, results.read_provenance(repo / p), notes, repo)
              for p in (clean, dirty, stranger, legacy)}
    assert judged[clean][0] == "clean"
    assert judged[dirty][0] == "untraceable" and "src/pkg/model.py" in judged[dirty][1]
    assert judged[stranger][0] == "untraceable" and "not in this repository's history" in judged[stranger][1]
    assert judged[legacy] == ("explained", "the history says so")


def test_a_result_made_by_a_later_commits_code_in_an_older_checkout_is_clean(repo, tmp_path_factory):
    """A GPU machine that gets a copy of the working tree on an older checkout records that checkout's
    commit plus a difference. When the difference (changed files, new
    modules, their hash) is exactly a later commit's, that commit made it; one byte more is untraceable."""
    base = git(repo, "rev-parse", "HEAD")
    elsewhere = tmp_path_factory.mktemp("device")
    git(elsewhere, "clone", "-q", str(repo), ".")                     # the machine's copy, HEAD = base
    (repo / "src/pkg/model.py").write_text("W = 2\n")
    (repo / "src/pkg/new.py").write_text("X = 1\n")
    git(repo, "add", "-A")
    later = commit(repo, "the code the machine ran")
    for rel in ("src/pkg/model.py", "src/pkg/new.py"):                # the work tree travels, not the history
        (elsewhere / rel).write_text((repo / rel).read_text())
    ran = _result(repo, "ran.parquet", {"git_commit": f"{base}-dirty", "code": provenance.code_state(elsewhere)})
    (elsewhere / "src/pkg/new.py").write_text("X = 2\n")           # other code than any commit's
    other = _result(repo, "other.parquet", {"git_commit": f"{base}-dirty", "code": provenance.code_state(elsewhere)})
    assert provenance.judge(ran, results.read_provenance(repo / ran), {}, repo) == \
        ("clean", f"made by the code of commit {later[:12]} (in a checkout of {base[:12]})")
    assert provenance.judge(other, results.read_provenance(repo / other), {}, repo)[0] == "untraceable"


def test_the_hash_of_a_code_difference_does_not_depend_on_how_git_abbreviates_ids(repo):
    """git shortens blob ids in a diff to a length that grows with the repository; the recorded hash must
    not change when the history grows (it did: 404 published results became untraceable)."""
    (repo / "src/pkg/model.py").write_text("W = 2\n")
    hashes = set()
    for n in (7, 12):
        git(repo, "config", "core.abbrev", str(n))
        hashes.add(provenance.code_state(repo)["code_diff_sha256"])
    assert len(hashes) == 1


def test_a_result_hashed_with_abbreviated_ids_in_a_smaller_repository_is_still_traced(repo, tmp_path_factory):
    """Results recorded before the ids were written in full hashed `git diff` with the length git chose
    then: the judge tries those lengths too; other code stays untraceable."""
    import hashlib
    base = git(repo, "rev-parse", "HEAD")
    (repo / "src/pkg/model.py").write_text("W = 2\n")
    later = commit(repo, "the code the machine ran")

    def legacy(code: str) -> dict:
        diff = subprocess.run(["git", "diff", base, later, "--binary", "--no-renames", "--abbrev=9", "--",
                               "src/pkg/model.py"], cwd=repo, check=True, capture_output=True).stdout
        digest = hashlib.sha256(diff.replace(b"W = 2", code.encode())).hexdigest()
        return {"git_commit": f"{base}-dirty", "code": {"commit": base, "code_differs": ["src/pkg/model.py"],
                                                        "code_diff_sha256": digest}}
    ran, other = _result(repo, "ran.parquet", legacy("W = 2")), _result(repo, "other.parquet", legacy("W = 3"))
    assert provenance.judge(ran, results.read_provenance(repo / ran), {}, repo)[0] == "clean"
    assert provenance.judge(other, results.read_provenance(repo / other), {}, repo)[0] == "untraceable"


def test_the_history_explains_a_dirty_result_only_if_no_code_changed_until_it_was_recorded(repo):
    c1 = git(repo, "rev-parse", "HEAD")
    (repo / "params.yaml").write_text("lr: 0.2\n")             # what a suite tool rewrites, no code
    commit(repo, "params")
    (repo / "dvc.lock").write_text("b\n")
    c3 = commit(repo, "record results")
    note = provenance.history_note(c1, ["src/pkg", "workflow/rules/a.smk"], repo)
    assert note and c3[:12] in note and "params.yaml" in note
    # a code change before the results were recorded: the job may have run either code
    (repo / "src/pkg/model.py").write_text("W = 5\n")
    commit(repo, "code")
    (repo / "dvc.lock").write_text("c\n")
    commit(repo, "record again")
    assert provenance.history_note(c3, ["src/pkg"], repo) is None
    assert provenance.history_note(c3, ["workflow/rules/a.smk"], repo)   # not a file this family depends on


def test_an_aggregated_table_records_what_its_inputs_came_from(tmp_path):
    a = results.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "a.parquet",
                              {"git_commit": "abc", "packages": {"torch": "2", "python": "3"}})
    b = results.write_parquet(pd.DataFrame({"x": [2]}), tmp_path / "b.parquet",
                              {"git_commit": "abc", "packages": {"torch": "2", "python": "3"}})
    c = results.write_parquet(pd.DataFrame({"x": [3]}), tmp_path / "c.parquet",
                              {"git_commit": "def-dirty", "packages": {"torch": "2", "python": "3"}})
    meta = results.provenance({}, inputs=[a, b, c])
    assert meta["sources"] == [{"git_commit": "abc", "torch": "2", "python": "3", "files": 2},
                               {"git_commit": "def-dirty", "torch": "2", "python": "3", "files": 1}]
    t = results.write_parquet(pd.DataFrame({"x": [4]}), tmp_path / "t.parquet", meta)
    assert results.sources([results.read_provenance(t)]) == meta["sources"]   # a table of tables: the runs


def _train_one(project, out: str):
    return project.run("python", "-m", "memcap", "mlt_synthetic", "train", "--sweep", "scale_head_shared", "--value", "2",
                       "--dataset-size", "16", "--device", "cpu", "--out", out, env=ih.code_env(project.root))


@pytest.mark.e2e
def test_a_job_records_the_code_it_ran_and_publishing_refuses_a_code_change(project):
    """A real training job in a repository copy: with only dvc.lock changed its result is traceable to
    the commit; with an uncommitted change to the trainer it names the file, hashes the change, and
    `memcap provenance check` refuses it."""
    project.edit_params(tiny_mlt)
    ih.git_commit_all(project)
    head = project.run("git", "rev-parse", "HEAD").stdout.strip()
    with open(project.root / "dvc.lock", "a") as f:
        f.write("# a lock file rewritten by dvc repro\n")
    _train_one(project, "lock_only.parquet")
    with open(project.root / "src/memcap/mlt_synthetic/train.py", "a") as f:
        f.write("# an uncommitted edit\n")
    _train_one(project, "code_change.parquet")

    lock_only = results.read_provenance(project.root / "lock_only.parquet")
    assert lock_only["git_commit"] == head and lock_only["code"]["differs"] == ["dvc.lock"]
    assert lock_only["code"]["code_diff_sha256"] is None
    changed = results.read_provenance(project.root / "code_change.parquet")
    assert changed["git_commit"] == f"{head}-dirty"
    assert changed["code"]["code_differs"] == ["src/memcap/mlt_synthetic/train.py"]
    assert len(changed["code"]["code_diff_sha256"]) == 64

    ok = project.run("python", "-m", "memcap", "provenance", "check", "lock_only.parquet", env=ih.code_env(project.root))
    assert "1 clean" in ok.stdout
    refused = project.run("python", "-m", "memcap", "provenance", "check", "lock_only.parquet", "code_change.parquet",
                          check=False, env=ih.code_env(project.root))
    assert refused.returncode == 1 and "src/memcap/mlt_synthetic/train.py" in refused.stdout
    assert "Nothing was published" in refused.stderr


def test_the_report_table_names_each_familys_commits_and_whether_the_code_differed(tmp_path):
    from memcap.report import provenance_table

    pk = {"torch": "2.13.0", "python": "3.12"}
    run_a = results.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "a.parquet", {"git_commit": "a" * 40, "packages": pk})
    run_b = results.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "b.parquet",
                                  {"git_commit": "b" * 40 + "-dirty", "packages": pk})
    run_c = results.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "c.parquet",
                                  {"git_commit": "c" * 40 + "-dirty", "packages": pk})
    table = results.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "t.parquet",
                                  {"git_commit": "d" * 40, "packages": pk,
                                   "sources": results.sources([results.read_provenance(p) for p in (run_a, run_b, run_c)])})
    notes = {"results/x/b.parquet": {"commit": "b" * 40, "sha256": "0", "note": "history"}}
    df = provenance_table.table({"dpc_runs": str(table)}, {"dpc_runs": "dpc"}, notes)
    code = dict(zip(df.commit, df.code))
    assert set(df.family) == {"dpc"} and df.files.sum() == 4
    assert code["a" * 12] == "as committed" and code["d" * 12] == "as committed"
    assert code["b" * 12 + "-dirty"].startswith("differed; explained")
    assert code["c" * 12 + "-dirty"] == "differed; 1 of 1 files not explained"
    assert "| dpc" in provenance_table.markdown(df)


@pytest.mark.e2e
def test_a_job_keeps_the_code_it_started_with_and_resumes_only_its_own_checkpoints(project):
    """A job pins its code when it starts: an edit to the checkout while it trains does not change what
    it records. A checkpoint made by one version of the code is not resumed by another (the job starts
    afresh), and is resumed again once the code is back, also after a commit of docs only."""
    ih.git_commit_all(project)
    head = project.run("git", "rev-parse", "HEAD").stdout.strip()
    env = ih.code_env(project.root)
    started = ("from pathlib import Path; from memcap import checkpoint, provenance; provenance.pin(); "
               "Path('src/memcap/bounds.py').open('a').write('# edited while the job runs\\n'); "
               "s = provenance.code_state(); print(s['commit'], len(s['code_differs'])); "
               "checkpoint.save('ck.pt', {'step': 7}, {'run': 1})")
    out = project.run("python", "-c", started, env=env).stdout.split()
    assert out == [head, "0"]                                  # the code it started with: clean
    load = "from memcap import checkpoint; print(checkpoint.load('ck.pt', {'run': 1}))"
    other = project.run("python", "-c", load, env=env).stdout
    assert "other code" in other and other.strip().endswith("None")
    project.run("git", "checkout", "--", "src/memcap/bounds.py")
    assert project.run("python", "-c", load, env=env).stdout.strip().endswith("{'step': 7}")
    with open(project.root / "README.md", "a") as f:   # a commit of docs only: the same code
        f.write("a note\n")
    ih.git_commit_all(project)
    assert project.run("python", "-c", load, env=env).stdout.strip().endswith("{'step': 7}")
