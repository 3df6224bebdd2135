"""The small ViT the pipeline trains on scikit-learn digits, so that "random vs trained" is real here.

8×8 one-channel digits, 2×2 patches -> 16 patches + [CLS] = 17 tokens (n), width d. A linear head on
the final [CLS] classifies the 10 digits. The train/test split is a seeded permutation
(images.Digits); the test accuracy is recorded with the checkpoint so every table row can show it.
"""

from __future__ import annotations

import time

import torch
from tqdm import tqdm

from memcap.assumptions.images import Digits, to_pixels
from memcap.assumptions.vision import vit_config


def train_digits_vit(settings: dict, device: torch.device, progress: bool = True):
    """Train per params `vision.digits.train`; returns (ViTForImageClassification, metrics dict)."""
    from transformers import ViTForImageClassification

    tr = settings["train"]
    torch.manual_seed(int(tr["seed"]))
    cfg = vit_config(settings["geometry"])
    cfg.num_labels = 10
    model = ViTForImageClassification(cfg).to(device)
    train = Digits(split="train", test_fraction=tr["test_fraction"], seed=tr["seed"])
    test = Digits(split="test", test_fraction=tr["test_fraction"], seed=tr["seed"])
    x, y = to_pixels(train.batch(0, len(train))).to(device), torch.as_tensor(train.labels).to(device)
    xt, yt = to_pixels(test.batch(0, len(test))).to(device), torch.as_tensor(test.labels).to(device)

    opt = torch.optim.AdamW(model.parameters(), lr=tr["lr"], weight_decay=tr["weight_decay"])
    g = torch.Generator().manual_seed(int(tr["seed"]))
    steps_per_epoch = -(-len(x) // tr["batch_size"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=tr["lr"], total_steps=tr["epochs"] * steps_per_epoch)
    start = time.perf_counter()
    model.train()
    for _ in tqdm(range(tr["epochs"]), desc="digits ViT", disable=not progress):
        for idx in torch.randperm(len(x), generator=g).split(tr["batch_size"]):
            loss = torch.nn.functional.cross_entropy(model(pixel_values=x[idx]).logits, y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    model.eval()
    with torch.no_grad():
        acc = lambda a, b: float((model(pixel_values=a).logits.argmax(-1) == b).float().mean())  # noqa: E731
        metrics = {"train_accuracy": acc(x, y), "test_accuracy": acc(xt, yt), "train_size": len(x),
                   "test_size": len(xt), "epochs": tr["epochs"], "wall_time_s": time.perf_counter() - start}
    return model.cpu(), metrics


def save(model, metrics: dict, path: str) -> None:
    from memcap.results import atomic_path

    with atomic_path(path) as tmp, open(tmp, "wb") as f:   # a full disk: DiskFull (memcap.checkpoint.save)
        torch.save({"state_dict": model.state_dict(), "config": model.config.to_dict(), "metrics": metrics}, f)


def load_encoder(path: str):
    """The trained ViTModel (first block only is read) and the metrics saved with it."""
    from transformers import ViTConfig, ViTForImageClassification

    blob = torch.load(path, map_location="cpu", weights_only=True)
    model = ViTForImageClassification(ViTConfig.from_dict(blob["config"]))
    model.load_state_dict(blob["state_dict"])
    return model.vit.eval(), blob["metrics"]
