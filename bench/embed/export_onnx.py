"""Exports a sentence-transformers BERT model to ONNX with ONNX Runtime's
fused attention, for the embedding benchmark.

Usage: export_onnx.py MODEL_DIR OUT_DIR   (run with .venv-bench/bin/python)
Writes OUT_DIR/model.onnx (torch.onnx.export of the transformer) and
OUT_DIR/model-fused.onnx: the same graph after onnxruntime.transformers'
BERT optimizer, which fuses each layer's attention into one `Attention`
contrib op (and LayerNorm / GELU / bias fusions). Prints the fused op counts.
"""
import collections
import os
import sys

import onnx
import torch
from onnxruntime.transformers.optimizer import optimize_model
from transformers import AutoConfig, AutoModel


class LastHidden(torch.nn.Module):
    """Keyword call of the HF model (its positional signature varies by version)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state


def main():
    model_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    raw = os.path.join(out_dir, "model.onnx")
    fused = os.path.join(out_dir, "model-fused.onnx")
    config = AutoConfig.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    ids = torch.ones(2, 16, dtype=torch.int64)
    dynamic = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
               "token_type_ids": {0: "batch", 1: "seq"}, "last_hidden_state": {0: "batch", 1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(LastHidden(model), (ids, torch.ones_like(ids), torch.zeros_like(ids)), raw,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"], dynamic_axes=dynamic,
                          opset_version=17, dynamo=False)
    opt = optimize_model(raw, model_type="bert", num_heads=config.num_attention_heads,
                         hidden_size=config.hidden_size, opt_level=1)
    opt.save_model_to_file(fused)
    ops = collections.Counter(n.op_type for n in onnx.load(fused).graph.node)
    print("fused graph ops:", dict(ops.most_common()))
    if ops.get("Attention", 0) + ops.get("MultiHeadAttention", 0) != config.num_hidden_layers:
        sys.exit("attention was not fused in every layer: %s" % dict(ops))


if __name__ == "__main__":
    main()
