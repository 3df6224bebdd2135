"""The one MLT training loop: attention models stacked and trained as one (MLT, capacity, theory GD; DPC has its own).

config.py     TrainConfig (its settings from params.yaml) and RunResult; torch-free
loop.py       train(): the step loop, evaluations and each model's best checkpoint
members.py    which models still train, each one's best evaluation; a model that is done leaves the stack
resume.py     checkpoints: what identifies a run, resuming, saving, SIGTERM
step.py       one optimizer step of every model (what a CUDA graph records)
graphed.py    that step replayed from CUDA graphs (a GPU; off unless asked for)
evaluate.py   full-train-set loss, accuracy and memorized bits of every model
losses.py     per-example losses, hits and memorized bits
batches.py    each model's epochs and short last batches, for a whole stack
schedule.py   step count and the warm-up + cosine learning rate (torch's SequentialLR); torch-free to count steps
pack.py       many jobs of one sweep stacked and padded as one model and one dataset
sizes.py      a job's shape and the host memory of a pack's data (torch-free, for Snakemake)
memory.py     a job's peak memory estimated before it allocates, checked against the machine's (torch-free)
duration.py   a job's least possible time (its arithmetic at more than the hardware computes) against its runtime
"""
