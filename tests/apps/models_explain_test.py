"""`tessera models` and `tessera models --explain DIR` (issue 30), with the
prompts of config_sentence_transformers.json (issue 32).

Usage: models_explain_test.py TESSERA_BINARY SOURCE_DIR
Every tiny model of data/models is recognised with its architecture, head,
tokenizer model and outputs (exit 0, --json too); a folder tessera cannot run
says exactly why (exit 1): no config.json, an unsupported model_type (naming
the supported ones), an unsupported tokenizer model.type.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

EXPECT = {  # folder: (architecture, head, tokenizer model, outputs)
    "tiny-bert": ("bert", "none (embedding)", "WordPiece", "dense embeddings, 32"),
    "tiny-mpnet": ("mpnet", "none (embedding)", "WordPiece", "dense embeddings, 32"),
    "tiny-roberta": ("roberta", "none (embedding)", "BPE", "dense embeddings, 32"),
    "tiny-xlm-roberta": ("roberta", "none (embedding)", "Unigram", "dense embeddings, 32"),
    "tiny-camembert": ("roberta", "none (embedding)", "Unigram", "dense embeddings, 32"),
    "tiny-bert-rerank": ("bert", "sequence classification, 1 label", "WordPiece", "scores"),
    "tiny-xlmr-rerank": ("roberta", "sequence classification, 1 label", "Unigram", "scores"),
    "tiny-bert-classify": ("bert", "sequence classification, 3 labels", "WordPiece", "scores"),
    "tiny-splade": ("bert", "masked LM (SPLADE)", "WordPiece", "sparse embeddings (SPLADE), 800"),
}


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


def main():
    binary, source = sys.argv[1], pathlib.Path(sys.argv[2])
    listing = run(binary, "models")
    assert listing.returncode == 0, listing.stderr
    for part in ("bert", "mpnet", "xlm-roberta", "camembert", "WordPiece", "BPE", "Unigram"):
        assert part in listing.stdout, f"{part!r} not in `tessera models`:\n{listing.stdout}"
    for name, (arch, head, tokenizer, outputs) in EXPECT.items():
        r = run(binary, "models", "--explain", str(source / "data" / "models" / name))
        assert r.returncode == 0, f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}"
        facts = dict(line.split(":", 1) for line in r.stdout.splitlines() if ":" in line)
        facts = {k.strip(): v.strip() for k, v in facts.items()}
        assert facts["architecture"].startswith(arch + " "), (name, facts["architecture"])
        assert facts["head"].startswith(head), (name, facts["head"])
        assert facts["model"].startswith(tokenizer), (name, facts["model"])
        assert facts["outputs"].startswith(outputs), (name, facts["outputs"])
        assert facts["status"].startswith("ok"), (name, facts["status"])
        j = run(binary, "models", "--explain", str(source / "data" / "models" / name), "--json")
        assert j.returncode == 0 and json.loads(j.stdout)["ok"] is True, (name, j.stdout)
    # config_sentence_transformers.json's prompts (issue 32): names, quoted
    # texts (a newline stays escaped on the line) and the default.
    r = run(binary, "models", "--explain", str(source / "data" / "models" / "tiny-qwen3"))
    facts = {k.strip(): v.strip() for k, v in
             (line.split(":", 1) for line in r.stdout.splitlines() if ":" in line)}
    assert facts["prompts"].startswith('document "", query "Instruct: Given a web search'), facts
    assert facts["default prompt"] == "none", facts
    # Every model has "query" and "document" (sentence-transformers 6.3).
    r = run(binary, "models", "--explain", str(source / "data" / "models" / "tiny-bert"))
    assert 'prompts:          document "", query ""' in r.stdout, r.stdout
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        r = run(binary, "models", "--explain", str(tmp))
        assert r.returncode == 1 and "config.json" in r.stdout and "not loadable" in r.stdout, r
        llama = tmp / "llama"
        shutil.copytree(source / "data" / "models" / "tiny-bert", llama)
        config = json.loads((llama / "config.json").read_text())
        config["model_type"] = "llama"
        (llama / "config.json").write_text(json.dumps(config))
        r = run(binary, "models", "--explain", str(llama), "--json")
        out = json.loads(r.stdout)
        assert r.returncode == 1 and not out["ok"], r
        for part in ('"llama"', "bert", "mpnet", "xlm-roberta"):
            assert part in out["error"], (part, out["error"])
        wordlevel = tmp / "wordlevel"
        shutil.copytree(source / "data" / "models" / "tiny-bert", wordlevel)
        tok = json.loads((wordlevel / "tokenizer.json").read_text())
        tok["model"]["type"] = "WordLevel"
        (wordlevel / "tokenizer.json").write_text(json.dumps(tok))
        r = run(binary, "models", "--explain", str(wordlevel))
        assert r.returncode == 1, r
        for part in ("tokenizer.json", "WordLevel", "WordPiece", "BPE", "Unigram"):
            assert part in r.stdout, (part, r.stdout)
    print(f"models --explain: {len(EXPECT)} tiny models recognised; 3 refusals name the cause")


if __name__ == "__main__":
    main()
