"""What a training run is told (TrainConfig) and what it reports of each model (RunResult); torch-free.

The settings a result depends on (SETTINGS) have no default here: every family's schema requires them
in each preset of params.yaml, the one place they are written, and `TrainConfig.of` reads them from a
job's resolved settings. What only changes how a run goes (evaluation chunk, checkpoint interval) has
its default here.
"""

from __future__ import annotations

from dataclasses import dataclass

SETTINGS = ("lr", "batch_size", "epochs", "min_steps", "eval_every", "early_stop")
EVAL_BATCH = 8192          # examples per evaluation forward pass
EVAL_BYTES = 2 << 30       # device memory an evaluation chunk may take: a large pack evaluates in slices
CHECKPOINT_EVERY_S = 300.0   # wall-clock seconds between checkpoints (0: every eval, <0: never)


@dataclass
class TrainConfig:
    lr: float                    # Adam peak learning rate
    batch_size: int
    epochs: int                  # the "500" in S = max(500·T/256, min_steps)
    min_steps: int
    eval_every: int              # steps between full-train-set evaluations
    early_stop: bool             # stop a model at 100% train accuracy (classification)
    eval_batch_size: int = EVAL_BATCH
    checkpoint_every_s: float = CHECKPOINT_EVERY_S

    @classmethod
    def of(cls, settings: dict, **given) -> "TrainConfig":
        """The config of a job's resolved settings (every SETTINGS key); `given` sets fields the settings do
        not say or that a family derives (theory's GD never stops early; capacity scales the steps)."""
        return cls(**{k: settings[k] for k in SETTINGS if k not in given}, **given)


@dataclass
class RunResult:
    mem_acc: float               # train accuracy of the lowest-loss checkpoint (NaN for regression)
    mem_loss: float              # train loss (CE or MSE) of that checkpoint
    memorized_bits: float        # Σ_t max(0, log2 C − NLL_t in bits) at that checkpoint (NaN: regression)
    best_step: int
    steps_run: int
    steps_planned: int
    early_stopped: bool
    wall_time_s: float = float("nan")   # training seconds of the job (all its models), every segment
    segments: int = 1                   # 1 + how many times the job was resumed from a checkpoint
