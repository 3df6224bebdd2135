"""Fig 3's raw data: the max attention weight of every example and head of a saturation sweep's job."""

from __future__ import annotations

import pandas as pd
import torch

from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import make_data, stack
from memcap.training.pack import Job
from memcap.training.sizes import shape


@torch.no_grad()
def attention_maxima(model: MLTAttention, job: Job, positions: list[int], sweep: str) -> pd.DataFrame:
    """Max attention weight per (seed, example, head) of one job's models, as `model` holds them (the
    trainer leaves each model's best checkpoint there): Fig 3's raw data."""
    s, H = job.settings, shape(job.settings, job.value)["heads"]
    own = model.select(positions)
    data = make_data(job.seeds, dataset_size=job.T, context_size=shape(s, job.value)["context_size"],
                     input_dim=s["input_dim"], context=s["context"], task=s["task"], num_classes=s["num_classes"])
    data = stack([data], model.context_size).to(model.pe.device)   # as the pack padded its context
    T = job.T
    idx = torch.arange(T, device=model.pe.device).expand(len(job.seeds), -1)
    q, c, _ = data.batch(idx)
    alpha = own.attention(q, c).amax(-1)[..., :H].cpu()            # (M, T, H): the job's own heads
    M = len(job.seeds)
    return pd.DataFrame({
        "sweep": sweep, "heads": H, "dataset_size": T,
        "seed": torch.tensor(job.seeds).repeat_interleave(T * H).numpy(),
        "example": torch.arange(T).repeat_interleave(H).repeat(M).numpy(),
        "head": torch.arange(H).repeat(M * T).numpy(),
        "max_attention": alpha.reshape(-1).numpy(),
    })
