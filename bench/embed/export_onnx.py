"""Exports a sentence-transformers BERT-family model (BERT, MPNet, RoBERTa,
XLM-R) to ONNX with ONNX Runtime's fused attention, for the embedding
benchmark.

Usage: export_onnx.py MODEL_DIR OUT_DIR   (run with .venv-bench/bin/python)
Writes OUT_DIR/model.onnx (torch.onnx.export of the transformer) and
OUT_DIR/model-fused.onnx: the same graph after onnxruntime.transformers'
BERT optimizer, which fuses each layer's attention into one `Attention`
contrib op (and LayerNorm / GELU / bias fusions). Prints the fused op counts.
The graph takes token_type_ids only where the model has token types (not
MPNet). Where the optimizer cannot fuse every layer's attention (its BERT
fusion does not know MPNet's relative-position bias), the graph is kept with
the fusions it did make and the script says so (ONNX Runtime still applies
its own graph optimizations at session start); for model_type "bert" an
unfused layer stays an error.
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


class LastHiddenNoTypes(torch.nn.Module):
    """The same for models without token types (MPNet)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def main():
    model_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    raw = os.path.join(out_dir, "model.onnx")
    fused = os.path.join(out_dir, "model-fused.onnx")
    config = AutoConfig.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    ids = torch.full((2, 16), 5, dtype=torch.int64)
    has_types = config.model_type != "mpnet"
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if has_types else [])
    dynamic = {n: {0: "batch", 1: "seq"} for n in names + ["last_hidden_state"]}
    wrapper = LastHidden(model) if has_types else LastHiddenNoTypes(model)
    example = (ids, torch.ones_like(ids)) + ((torch.zeros_like(ids),) if has_types else ())
    with torch.no_grad():
        torch.onnx.export(wrapper, example, raw, input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=dynamic,
                          opset_version=17, dynamo=False)
    opt = optimize_model(raw, model_type="bert", num_heads=config.num_attention_heads,
                         hidden_size=config.hidden_size, opt_level=1)
    opt.save_model_to_file(fused)
    ops = collections.Counter(n.op_type for n in onnx.load(fused).graph.node)
    print("fused graph ops:", dict(ops.most_common()))
    fused_layers = ops.get("Attention", 0) + ops.get("MultiHeadAttention", 0)
    if fused_layers != config.num_hidden_layers:
        if config.model_type == "bert":
            sys.exit("attention was not fused in every layer: %s" % dict(ops))
        print("note: %s: ONNX Runtime's optimizer fused attention in %d of %d layers; the graph "
              "keeps its other fusions" % (config.model_type, fused_layers,
                                          config.num_hidden_layers))


if __name__ == "__main__":
    main()
