"""Joins tessera's and torch's GPU bench rows into one table: TFLOP/s (GB/s
for decode, Sq=1) and the ratio to torch. Usage: gpu_table.py TESSERA.json TORCH.json"""
import json
import sys

rows = json.load(open(sys.argv[1])) + json.load(open(sys.argv[2]))
torch = {r["shape"]: r for r in rows if r["backend"] == "torch.sdpa"}
print(f"| {'shape':48} | {'backend':12} | {'median ms':>9} | {'TFLOP/s or GB/s':>15} | {'x torch':>7} |")
print("|" + "|".join("-" * w for w in (50, 14, 11, 17, 9)) + "|")
for r in rows:
    if r.get("status") != "ok":
        print(f"| {r['shape']:48} | {r['backend']:12} | {r.get('status', '')} |")
        continue
    decode = "Sq=1," in r["shape"]
    figure = f"{r['gbps']:.0f} GB/s" if decode else f"{r['gflops'] / 1e3:.0f} TFLOP/s"
    t = torch.get(r["shape"])
    ratio = f"{t['median_ms'] / r['median_ms']:.2f}" if t else "-"
    print(f"| {r['shape']:48} | {r['backend']:12} | {r['median_ms']:9.3f} | {figure:>15} | {ratio:>7} |")
