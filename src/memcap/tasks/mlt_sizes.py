"""Host memory of MLT's synthetic datasets as memcap.tasks.mlt_data builds them (torch-free: Snakemake
sizes a job's memory request with it before anything is drawn)."""

from __future__ import annotations

CHUNK_ROWS = 4096   # rows of a dataset drawn at a time: the only scratch memory beside the data


def data_bytes(draws: list[tuple[int, int, int]], context_size: int, input_dim: int, context: str, task: str,
               num_classes: int) -> int:
    """Bytes of the data of these models ((seed, T, own context size) each, as make_pack_data draws them)
    with contexts padded to `context_size`: float32 queries and contexts, int64 or float32 labels, a
    seed's random contexts of one context size stored once at its largest T, and one chunk of float64
    draws."""
    n, d = context_size, input_dim
    label = 8 if task == "classification" else 4
    data = sum(4 * T * d + label * T for _, T, _ in draws)
    if context == "shared":
        data += 4 * len(draws) * n * d
    else:
        largest = {}
        for seed, T, own_n in draws:
            largest[(seed, own_n)] = max(T, largest.get((seed, own_n), 0))
        data += 4 * n * d * sum(largest.values())
    return data + 8 * CHUNK_ROWS * max(n * d, num_classes)
