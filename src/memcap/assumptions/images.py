"""Image sources for the vision track (MLT §5.1; docs/outputs.md, "Assumption checks on real data").
Each yields uint8 RGB batches.

A source has `meta` (one row per example: where it came from) and `batch(start, stop)` -> uint8
(B, H, W, C). Images are produced per batch, so T images never sit in memory at once.

- photos:   the ~22 real photos shipped in scikit-image / scikit-learn / matplotlib, as seeded
            random-resized 224² crops. Crops of 22 scenes are correlated: a code-path check only.
- digits:   scikit-learn's 1,797 real 8×8 handwritten digits (1 channel, values 0..16 -> 0..255).
- folder:   an ImageNet folder root/<wnid>/*.JPEG, or a flat folder root/*.JPEG such as the 1300-image
            validation sample of tools/fetch-imagenet-sample.sh (labels.txt gives the class);
            sorted; first N or a seeded sample; RGB only.
- parquet:  the HF imagenet-1k parquet shards on disk (column image.bytes; first N RGB rows, file order).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

FETCH_SCRIPT = "tools/fetch-imagenet-sample.sh"   # the 1300-image ImageNet validation sample (sha256-checked)

# Real photos only: drawn/synthetic images such as horse or logo are left out.
SKIMAGE_PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry",
                  "retina", "stereo_motorcycle", "camera", "coins", "moon", "clock", "text", "page",
                  "brick", "grass", "gravel", "cell", "microaneurysms")


def package_photos() -> dict[str, np.ndarray]:
    """name -> uint8 (H, W, 3); gray photos are repeated over 3 channels."""
    import matplotlib.cbook
    import skimage.data
    from sklearn.datasets import load_sample_images

    photos = {}
    for name in SKIMAGE_PHOTOS:
        img = getattr(skimage.data, name)()
        if name == "stereo_motorcycle":
            img = img[0]                                          # (left, right, disparity): one scene
        photos[f"skimage:{name}"] = img
    sk = load_sample_images()
    for fname, img in zip(sk.filenames, sk.images):
        photos[f"sklearn:{Path(fname).name}"] = img
    with matplotlib.cbook.get_sample_data("grace_hopper.jpg") as f:
        photos["matplotlib:grace_hopper.jpg"] = np.asarray(Image.open(f).convert("RGB"))
    out = {}
    for k, v in photos.items():
        v = np.asarray(v)
        if v.dtype != np.uint8:                                   # a few skimage arrays are float/bool
            v = (255 * (v - v.min()) / max(np.ptp(v), 1e-12)).astype(np.uint8)
        out[k] = np.repeat(v[..., None], 3, -1) if v.ndim == 2 else v[..., :3]
    return out


def _resized_crop_box(h: int, w: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """torchvision RandomResizedCrop's box: area in [0.08, 1], aspect in [3/4, 4/3] (10 tries, then centre)."""
    for _ in range(10):
        area = h * w * rng.uniform(0.08, 1.0)
        aspect = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
        cw, ch = int(round(np.sqrt(area * aspect))), int(round(np.sqrt(area / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            top, left = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
            return top, left, ch, cw
    s = min(h, w)
    return (h - s) // 2, (w - s) // 2, s, s


class PhotoCrops:
    """T seeded random-resized crops of the package photos, resized to size×size."""

    label = "package photos (seeded crops; code-path check, not ImageNet)"

    def __init__(self, count: int, seed: int, size: int = 224):
        self.photos = package_photos()
        self.size = size
        names = sorted(self.photos)
        rng = np.random.default_rng(seed)
        rows = []
        for t in range(count):
            name = names[int(rng.integers(len(names)))]
            h, w = self.photos[name].shape[:2]
            top, left, ch, cw = _resized_crop_box(h, w, rng)
            rows.append({"example": t, "source": name, "top": top, "left": left, "height": ch, "width": cw})
        self.meta = pd.DataFrame(rows)

    def __len__(self) -> int:
        return len(self.meta)

    @property
    def distinct_sources(self) -> int:
        return self.meta["source"].nunique()

    def batch(self, start: int, stop: int) -> np.ndarray:
        out = []
        for r in self.meta.iloc[start:stop].itertuples():
            crop = self.photos[r.source][r.top:r.top + r.height, r.left:r.left + r.width]
            out.append(np.asarray(Image.fromarray(crop).resize((self.size, self.size), Image.BILINEAR)))
        return np.stack(out)


class Digits:
    """scikit-learn's 1,797 real handwritten digits, 8×8, one channel; split by a seeded permutation."""

    label = "sklearn digits (1,797 real 8x8 images)"

    def __init__(self, count: int | None = None, split: str = "all", test_fraction: float = 0.2, seed: int = 0):
        from sklearn.datasets import load_digits

        d = load_digits()
        images = (d.images * (255 / 16)).round().astype(np.uint8)[..., None]   # (N, 8, 8, 1)
        order = np.random.default_rng(seed).permutation(len(images))
        n_test = int(round(test_fraction * len(images)))
        idx = {"all": np.arange(len(images)), "train": order[n_test:], "test": order[:n_test]}[split]
        idx = idx[:count] if count else idx
        self.images, self.labels = images[idx], d.target[idx]
        self.meta = pd.DataFrame({"example": np.arange(len(idx)), "source": [f"digits:{i}" for i in idx],
                                  "label": self.labels})

    def __len__(self) -> int:
        return len(self.images)

    distinct_sources = property(__len__)

    def batch(self, start: int, stop: int) -> np.ndarray:
        return self.images[start:stop]


def _rgb(img: Image.Image) -> bool:
    return img.mode == "RGB"


IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png")


def _folder_labels(root: Path) -> dict[str, int]:
    """file name -> class index from root/labels.txt ("./data/NAME.JPEG, 472" per line), if present."""
    path = root / "labels.txt"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        name, _, cls = line.rpartition(",")
        if name.strip():
            out[Path(name.strip()).name] = int(cls)
    return out


def _fit(image: "Image.Image", size: int, fit: str) -> np.ndarray:
    """size x size pixels: a bilinear resize (the reference's, from full-size ImageNet files), or the
    central crop of a file already near that size. A second resampling of an already downscaled file
    blurs it, and the Kruskal ranks follow the detail left: on the 227-px sample, Random Attention's
    estimate is 194 resized, 221 cropped (1000 subsets; docs/outputs.md, "Real ImageNet images")."""
    if fit == "center_crop":
        w, h = image.size
        if w < size or h < size:
            raise ValueError(f"center_crop: an image of {w}x{h} is smaller than {size}x{size}; use fit: resize")
        left, top = (w - size) // 2, (h - size) // 2
        return np.asarray(image.crop((left, top, left + size, top + size)))
    return np.asarray(image.resize((size, size), Image.BILINEAR))


class ImageFolder:
    """An ImageNet-style folder root/<wnid>/*.{JPEG,jpg,png}, or a flat root/*.JPEG (with labels.txt):
    RGB images only (as the reference keeps), resized to size×size. order='first' keeps sorted order
    ((wnid, file) or file); 'sample' takes a seeded sample. `label` says where the images came from."""

    def __init__(self, root: str, count: int, order: str = "first", seed: int = 0, size: int = 224,
                 label: str | None = None, fit: str = "resize"):
        root = Path(root)
        self.fit = fit
        self.label = label or "ImageNet folder"
        files = sorted(p for p in root.glob("*/*") if p.suffix.lower() in IMAGE_SUFFIXES)
        flat = not files
        if flat:                                                  # a flat sample: root/*.JPEG
            files = sorted(p for p in root.glob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise FileNotFoundError(f"no images under {root}/<class>/*.JPEG or {root}/*.JPEG")
        if order == "sample":
            files = [files[i] for i in np.random.default_rng(seed).permutation(len(files))]
        labels = _folder_labels(root) if flat else {}
        self.size, rows = size, []
        for f in files:                                           # RGB filter needs only the header
            if len(rows) == count:
                break
            with Image.open(f) as im:
                if _rgb(im):
                    rows.append({"example": len(rows), "source": str(f.relative_to(root)),
                                 "wnid": "" if flat else f.parent.name, "label": labels.get(f.name, -1)})
        self.meta = pd.DataFrame(rows)
        self.root = root

    def __len__(self) -> int:
        return len(self.meta)

    distinct_sources = property(__len__)

    @property
    def classes(self) -> int:
        """Distinct classes among the images read (wnid folders or labels.txt; 0 when unknown)."""
        known = self.meta[self.meta["label"] >= 0]["label"] if (self.meta["wnid"] == "").all() else self.meta["wnid"]
        return int(known.nunique())

    def batch(self, start: int, stop: int) -> np.ndarray:
        return np.stack([_fit(Image.open(self.root / s).convert("RGB"), self.size, self.fit)
                         for s in self.meta["source"].iloc[start:stop]])


class ImageParquet:
    """HF imagenet-1k parquet shards (glob sorted; file order is not folder order): first N RGB rows."""

    def __init__(self, pattern: str, count: int, size: int = 224, label: str | None = None):
        import pyarrow.parquet as pq

        self.label = label or "ImageNet parquet shards"

        files = sorted(Path().glob(pattern) if not Path(pattern).is_absolute()
                       else Path("/").glob(pattern.lstrip("/")))
        if not files:
            raise FileNotFoundError(f"no parquet shards match {pattern}")
        self.size, self.blobs, rows = size, [], []
        for f in files:
            row = 0
            for rb in pq.ParquetFile(f).iter_batches(batch_size=256, columns=["image"]):
                for img in rb.column("image").to_pylist():
                    if len(rows) == count:
                        break
                    with Image.open(io.BytesIO(img["bytes"])) as im:
                        if _rgb(im):
                            rows.append({"example": len(rows), "source": f"{f.name}:{row}"})
                            self.blobs.append(img["bytes"])
                    row += 1
        self.meta = pd.DataFrame(rows)

    def __len__(self) -> int:
        return len(self.meta)

    distinct_sources = property(__len__)

    def batch(self, start: int, stop: int) -> np.ndarray:
        return np.stack([np.asarray(Image.open(io.BytesIO(b)).convert("RGB").resize((self.size, self.size),
                                                                                      Image.BILINEAR))
                         for b in self.blobs[start:stop]])


IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)   # DINOv2's preprocessing


def to_pixels(batch: np.ndarray, mean=0.5, std=0.5):
    """The reference preprocessing (ViTFeatureExtractor of the in21k checkpoint): x/255, mean=std=0.5
    (DINOv2: IMAGENET_MEAN/STD, one per RGB channel). uint8 (B, H, W, C) -> float (B, C, H, W); one
    value serves any number of channels (the digits ViT's one)."""
    import torch

    x = torch.from_numpy(np.ascontiguousarray(batch)).permute(0, 3, 1, 2).float()
    mean, std = (torch.as_tensor(v, dtype=x.dtype).reshape(1, -1, 1, 1) for v in (mean, std))
    return (x / 255 - mean) / std
