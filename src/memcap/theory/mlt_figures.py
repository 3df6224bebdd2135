"""Figures and the markdown summary of the MLT theory family, drawn only from its Parquet tables.

  figures/theory_construct.*     rank(Z) of CONSTRUCT against H(r−1)+1, and cond(Z) against T
  figures/theory_capacity.*      construction vs gradient descent vs the bound (examples fit, MSE)
  figures/theory_rank_bounds.*   rank(Z) under random / trained / constructed weights vs Props 2 and 5
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from memcap import results  # noqa: E402


def save_figure(fig, stem: str | Path) -> list[Path]:
    """PNG and PDF, each written atomically; PDFs without a timestamp so reruns give the same bytes."""
    paths = []
    for ext in ("png", "pdf"):
        path = Path(f"{stem}.{ext}")
        with results.atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata={"CreationDate": None} if ext == "pdf" else None)
        paths.append(path)
    plt.close(fig)
    return paths


def _title(fig, text: str, label: str) -> None:
    fig.suptitle(text + (f"\n{label}" if label else ""), fontsize=10)


def draw_construct(con: pd.DataFrame, stem, label: str = "") -> list[Path]:
    ok = con[con["status"] == "ok"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    top = max(int(con["bound"].max()), 1)
    a.plot([0, top], [0, top], color="grey", ls="--", lw=1, label="rank = H(r−1)+1")
    sns.scatterplot(data=ok, x="bound", y="rank", hue="context", style="context", ax=a, s=40)
    failed = con[con["status"] != "ok"]
    if len(failed):
        a.scatter(failed["bound"], np.zeros(len(failed)), marker="x", color="red", label=f"failed ({len(failed)})")
    a.set(xlabel="H(min(n, d_h) − 1) + 1", ylabel="rank(Z) of the construction", title="CONSTRUCT: rank(Z)")
    a.legend(fontsize=8)
    sns.scatterplot(data=ok, x="bound", y="cond", hue="context", style="context", ax=b, s=40, legend=False)
    b.set(xscale="log", yscale="log", xlabel="T = H(r−1)+1", ylabel="cond(Z)",
          title=f"conditioning (max residual {ok['model_residual'].max():.1e} via MLTAttention)")
    _title(fig, "MLT Theorem 1 made executable: constructed capacity equals the bound", label)
    fig.tight_layout()
    return save_figure(fig, stem)


def draw_capacity(gd: pd.DataFrame, stem, label: str = "") -> list[Path]:
    """Examples fit within tolerance vs H: bound (line), construction, gradient descent per T/bound."""
    ok = gd[gd["status"] == "ok"].copy()
    ok["T / bound"] = ok["dataset_size_factor"].map(lambda f: f"{f:g}")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    bound = ok.groupby("heads")["bound"].first()
    a.plot(bound.index, bound.values, color="black", ls="--", lw=1.2, label="bound H(r−1)+1")
    sns.lineplot(data=ok, x="heads", y="memorized", hue="T / bound", style="method", markers=True, ax=a,
                 errorbar=("pi", 100))
    tol = ok["tolerance"].iloc[0] if len(ok) else np.nan
    a.set(xlabel="heads H", ylabel=f"examples fit (|ŷ − y| ≤ {tol:g})", title="construction vs gradient descent vs bound")
    sns.lineplot(data=ok, x="heads", y="mse", hue="T / bound", style="method", markers=True, ax=b,
                 errorbar=("pi", 100), legend=False)
    b.set(yscale="log", xlabel="heads H", ylabel="train MSE (all T examples)", title="train MSE")
    _title(fig, f"Regression, {ok['context'].iloc[0] if len(ok) else ''} context, d={ok['input_dim'].max()}, "
                f"n={ok['context_size'].max()}: GD with the spine's trainer", label)
    fig.tight_layout()
    return save_figure(fig, stem)


def draw_rank_bounds(bounds: pd.DataFrame, stem, label: str = "") -> list[Path]:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, prop, name in zip(axes, ("prop2", "prop5"), ("Prop 2: shared context, H(n−1)+1",
                                                        "Prop 5: constant token sum, H(d−1)+1")):
        g = bounds[bounds["proposition"] == prop].copy()
        if g.empty:
            ax.text(0.5, 0.5, f"SKIPPED: no {prop} rows in this preset", ha="center", transform=ax.transAxes)
            continue
        g["weights"] = np.where(g["weight_scale"].notna(), g["weights"] + " ×" + g["weight_scale"].map("{:g}".format),
                                g["weights"])
        lines = g.groupby("heads")[["bound", "input_dim"]].first()
        ax.plot(lines.index, lines["bound"], color="black", ls="--", label="bound")
        ax.plot(lines.index, lines.index * lines["input_dim"], color="grey", ls=":", label="H·d (no bound)")
        sns.stripplot(data=g, x="heads", y="rank", hue="weights", dodge=True, native_scale=True, ax=ax, size=5)
        ax.set(title=name, xlabel="heads H", ylabel="rank(Z)")
        ax.legend(fontsize=7)
    _title(fig, "Upper bounds on rank(Z): every point must lie on or below the dashed line", label)
    fig.tight_layout()
    return save_figure(fig, stem)


def _md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    fmt = lambda v: f"{v:.3g}" if isinstance(v, (float, np.floating)) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def summary_markdown(con: pd.DataFrame, gd: pd.DataFrame, bounds: pd.DataFrame, sat: pd.DataFrame,
                     label: str = "") -> str:
    """The family's table: one block per experiment, every number computed from the Parquets."""
    ok = con["status"] == "ok"
    largest = con[ok].sort_values("bound").tail(1)
    construct = con.groupby(["context"], as_index=False).agg(
        cases=("status", "size"), ok=("status", lambda s: int((s == "ok").sum())),
        rank_equals_bound=("rank", lambda r: int((r == con.loc[r.index, "bound"]).sum())),
        max_model_residual=("model_residual", "max"), max_cond=("cond", "max"),
        max_c=("c_max", "max"), max_time_s=("time_s", "max"))
    cap = gd.groupby(["method", "heads", "dataset_size_factor", "dataset_size", "bound"], as_index=False).agg(
        memorized_mean=("memorized", "mean"), mse_mean=("mse", "mean"))
    rb = bounds.groupby(["proposition", "weights"], as_index=False).agg(
        checks=("rank", "size"), violations=("holds", lambda h: int((~h).sum())),
        attains_bound=("attains", "sum"), max_rank=("rank", "max"))
    parts = [f"# MLT theory family{f' ({label})' if label else ''}", "",
             "## (a) CONSTRUCT: rank(Z) = H(min(n, d_h)−1)+1, residual through MLTAttention's forward pass", "",
             _md(construct), ""]
    if len(largest):
        r = largest.iloc[0]
        parts += [f"Largest case: d={r.input_dim}, n={r.context_size}, d_h={r.head_dim}, H={r.heads}, "
                  f"{r.context} context: T={r.bound}, rank {r['rank']}, cond {r.cond:.3g}, "
                  f"max|ŷ−y| {r.model_residual:.2g}, {r.time_s:.2f} s.", ""]
    failed = con[~ok]
    if len(failed):
        parts += ["Failures:", "", _md(failed[["input_dim", "context_size", "head_dim", "heads", "context",
                                               "seed", "reason"]]), ""]
    parts += ["## (b) construction vs gradient descent vs bound (examples fit within tolerance)", "", _md(cap), "",
              "## (c) rank(Z) upper bounds (Props 2, 5)", "", _md(rb), "",
              "## Fig 3: softmax saturation", ""]
    parts += [_md(sat) if len(sat) else "SKIPPED: no saturation runs in this preset", ""]
    return "\n".join(parts)
