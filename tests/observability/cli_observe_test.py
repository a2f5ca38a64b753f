"""The observability outputs of the real `tessera` binary.

- --trace: the JSON parses and holds one "attention" span per dispatch, with
  the decision (and cpu.flash's product path), and a shadow span when
  --shadow 1;
- --metrics: passes a Prometheus exposition-format check (prometheus_client's
  parser, plus the grouping and histogram rules it does not enforce);
- --profile: the summary table reaches stderr;
- tune + --tuning: tune times cpu.flash's variants too; a table that ranks
  the reference first changes auto's choice, and explain cites the entry;
- without a table, explain names the shipped default ranking for this CPU
  kind (or its absence); tune --shipped-defaults writes one;
- --canary: the served output is bit-identical and the record reaches
  `tessera backends`.

Usage: cli_observe_test.py /path/to/tessera
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

TESSERA = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, env=None, expect_ok=True):
    full_env = dict(os.environ)
    # Never pick up the user's own tuning table or canary record.
    full_env["TESSERA_TUNING"] = "none"
    full_env["TESSERA_CANARY_RECORD"] = os.path.join(tmp, "default-canary.json")
    full_env.pop("TESSERA_SHADOW", None)
    full_env.pop("TESSERA_CANARY", None)
    full_env.update(env or {})
    p = subprocess.run([TESSERA] + args, capture_output=True, text=True, env=full_env)
    if expect_ok and p.returncode != 0:
        raise SystemExit(f"tessera {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def check_exposition(text):
    """Prometheus text format 0.0.4 rules, beyond what the parser checks."""
    families = list(text_string_to_metric_families(text))  # raises on bad syntax
    seen, current, declared = set(), None, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            check(name not in seen, f"family {name} declared twice")
            seen.add(name)
            current = name
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            check(name == current, f"TYPE {name} not right after its HELP")
            declared[name] = kind
        elif line and not line.startswith("#"):
            sample = line.split("{")[0].split(" ")[0]
            base = current
            ok = sample == base or (declared.get(base) == "histogram" and sample in (
                base + "_bucket", base + "_sum", base + "_count"))
            check(ok, f"sample {sample} outside its family {base}")
    for fam in families:
        if fam.type != "histogram":
            continue
        series = {}
        for s in fam.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, {"buckets": [], "count": None})
            if s.name.endswith("_bucket"):
                series[key]["buckets"].append((float(s.labels["le"]), s.value))
            elif s.name.endswith("_count"):
                series[key]["count"] = s.value
        for key, sr in series.items():
            values = [v for _, v in sr["buckets"]]
            check(values == sorted(values), f"{fam.name}{key}: buckets not cumulative")
            check(sr["buckets"][-1][0] == float("inf"), f"{fam.name}{key}: no +Inf bucket")
            check(sr["buckets"][-1][1] == sr["count"], f"{fam.name}{key}: +Inf != _count")
    return {f.name: f for f in families}


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 16, 4, 8), dtype=np.float32)
    k = rng.standard_normal((2, 16, 4, 8), dtype=np.float32)
    v = rng.standard_normal((2, 16, 4, 8), dtype=np.float32)
    for name, arr in (("q", q), ("k", k), ("v", v)):
        np.save(os.path.join(tmp, name + ".npy"), arr)
    io = ["--q", f"{tmp}/q.npy", "--k", f"{tmp}/k.npy", "--v", f"{tmp}/v.npy"]
    backends = json.loads(run(["backends", "--json"]).stdout)
    available = [b["name"] for b in backends if b["available"]]

    # --- trace, metrics, profile, shadow (trusted: the reference) ---
    trace, metrics = f"{tmp}/trace.json", f"{tmp}/metrics.prom"
    p = run(["--trace", trace, "--metrics", metrics, "--profile", "--shadow", "1",
             "attention", "run"] + io + ["--out", f"{tmp}/o.npy"])
    served = p.stderr.split("attention: ")[1].split(" ran ")[0]
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    dispatches = [e for e in spans if e["name"].split(" ")[0] == "attention"]
    check(len(dispatches) == 1, f"one dispatch span, got {len(dispatches)}")
    d = dispatches[0]["args"]
    check(d["backend"] == served, f"span backend {d['backend']} != served {served}")
    check(d["decision"].startswith(served + ": first eligible"), f"decision: {d['decision']}")
    check((d["B"], d["Sq"], d["Hq"], d["D"], d["dtype"]) == (2, 16, 4, 8, "f32"), f"dims {d}")
    if served == "cpu.flash":  # the product path that served (f32 inputs: f32)
        check(d.get("path") == "f32", f"cpu.flash span path: {d.get('path')}")
    shadows = [e for e in spans if e["name"].startswith("attention.shadow")]
    check(len(shadows) == (0 if served == "reference" else 1), f"shadow spans: {len(shadows)}")
    check("SPAN" in p.stderr and "attention" in p.stderr, "--profile table on stderr")
    with open(metrics) as f:
        fams = check_exposition(f.read())
    calls = {s.labels["backend"]: s.value for s in fams["tessera_attention_calls"].samples}
    check(calls.get(served) == 1, f"calls_total {calls}")
    hist = fams["tessera_attention_seconds"]
    count = [s.value for s in hist.samples if s.name.endswith("_count")]
    check(count == [1], f"attention_seconds count {count}")
    check("tessera_memory_peak_bytes" in fams, "memory metrics present")
    check("tessera_shadow_mismatches" in fams, "shadow metrics present")

    # --- bench --trace: one span per timed (and warm-up) run ---
    bench_trace = f"{tmp}/bench_trace.json"
    run(["--trace", bench_trace, "bench", "attention", "--shapes", "B=1,S=16,H=2,D=8,dtype=f32",
         "--backends", "reference", "--warmup", "1", "--iters", "3", "--min-seconds", "0"])
    with open(bench_trace) as f:
        bench_spans = [e for e in json.load(f)["traceEvents"]
                       if e.get("ph") == "X" and e["name"].split(" ")[0] == "attention"]
    check(len(bench_spans) == 4, f"bench trace: 4 dispatch spans, got {len(bench_spans)}")

    # --- bench follows the global policy when --backends is not given ---
    def benched(args, after=()):
        out = run(args + ["bench", "attention", "--shapes", "B=1,S=16,H=2,D=8,dtype=f32",
                          "--warmup", "0", "--iters", "1", "--min-seconds", "0", *after]).stdout
        return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
    got = benched(["--attention=only:cpu.flash,reference"])
    check(got == ["cpu.flash", "reference"], f"bench under only:cpu.flash,reference timed {got}")
    got = benched(["--attention=deny:reference"])
    check("reference" not in got and "cpu.flash" in got, f"bench under deny:reference timed {got}")
    got = benched(["--attention=only:reference"], ["--backends", "cpu.gemm"])
    check(got == ["cpu.gemm"], f"--backends wins over the policy: timed {got}")

    # --- tune, then a table that ranks the reference first ---
    shape = "B=1,S=16,H=2,D=8,dtype=f32"
    table = f"{tmp}/tuning.json"
    tuned = run(["tune", "--shapes", shape, "--output", table, "--iters", "1",
                 "--min-seconds", "0"])
    # cpu.flash's product paths are backends tune times too (cpu.flash:f32 runs
    # f32; its timing may be given up on, as any backend's, so it is the
    # per-backend progress line that is checked, not the ranking).
    check(" cpu.flash:f32 " in tuned.stderr, f"tune did not time cpu.flash:f32: {tuned.stderr}")
    with open(table) as f:
        t = json.load(f)
    check(t["format"] == "tessera.tuning" and t["version"] == 1, "table header")
    # Experimental backends are starred in the summary, with the footnote.
    ranked = [m["backend"] for m in t["entries"][0]["ranking"]]
    if "xla" in ranked:
        check(" xla* " in tuned.stdout and "* experimental: auto serves it only" in tuned.stdout,
              f"xla is not starred: {tuned.stdout}")
    check(" cpu.flash* " not in tuned.stdout and " cpu.flash:f32* " not in tuned.stdout,
          f"a stable backend is starred: {tuned.stdout}")
    check(len(t["entries"]) == 1, f"one entry, got {len(t['entries'])}")
    before = json.loads(run(["backends", "--explain", shape, "--json"]).stdout)
    chosen_before = before["chosen"]
    # tune times every backend that runs the shape, experimental ones (xla) too,
    # but auto serves only eligible ones: the tuned choice is the first eligible
    # backend in the ranking (xla may rank first on a machine where it is fast).
    may_serve = {b["name"] for b in before["backends"] if b["verdict"] in ("chosen", "eligible")}
    # Rank the backends so that auto's priority choice comes last.
    entry = t["entries"][0]
    entry["ranking"].sort(key=lambda m: m["backend"] == chosen_before)
    with open(table, "w") as f:
        json.dump(t, f)
    after = json.loads(run(["--tuning", table, "backends", "--explain", shape, "--json"]).stdout)
    want = next((m["backend"] for m in entry["ranking"] if m["backend"] in may_serve),
                chosen_before)
    if chosen_before != want:
        check(after["chosen"] == want, f"tuned choice {after['chosen']} != {want}")
        why = [b for b in after["backends"] if b["name"] == after["chosen"]][0]["reasons"][0]
        check(f"tuned table entry '{entry['bucket']}'" in why and table in why, f"cites: {why}")
    else:
        print("only one eligible backend: the tuned-choice check needs two")
    # A table from another machine is refused with a warning, not used.
    t["key"]["cpu"] = "Another CPU"
    with open(table, "w") as f:
        json.dump(t, f)
    p = run(["--tuning", table, "backends", "--explain", shape, "--json"])
    check(json.loads(p.stdout)["chosen"] == chosen_before, "foreign table ignored")
    check("Another CPU" in p.stderr, f"foreign table warning: {p.stderr}")

    # --- without a table: the ranking shipped for this CPU kind, or priority ---
    decode = "B=1,Sq=1,Sk=512,Hq=4,Hkv=2,D=64,dtype=f32"
    e = json.loads(run(["backends", "--explain", decode, "--json"]).stdout)
    kind = re.search(r"default ranking for ([\w-]+)", e["tuning"])
    check(kind is not None, f"explain names the shipped ranking or its absence: {e['tuning']}")
    kind = kind.group(1) if kind else "generic"
    why = [b for b in e["backends"] if b["name"] == e["chosen"]][0]["reasons"][0]
    if e["tuning"].startswith("no tuned table; auto uses the shipped default ranking"):
        check("of the shipped default ranking for " + kind in why, f"decode cites it: {why}")
    else:
        check("no shipped default ranking for " + kind in e["tuning"], e["tuning"])
    # tune --shipped-defaults writes <kind>.json, and refuses another kind's file.
    p = run(["tune", "--shipped-defaults", f"{tmp}/x86-none.json", "--shapes", decode],
            expect_ok=False)
    check(p.returncode != 0 and f"this CPU is of kind {kind}" in p.stderr, p.stderr)
    shipped = f"{tmp}/{kind}.json"
    run(["--threads", "1", "tune", "--shipped-defaults", shipped, "--shapes", decode,
         "--iters", "1", "--min-seconds", "0"])
    with open(shipped) as f:
        t = json.load(f)
    check(t["cpu_kind"] == kind and t["threads"] == 1, f"kind and threads: {t}")
    check(t["command"].startswith(f"tessera --threads 1 tune --shipped-defaults {shipped}"),
          t["command"])
    check("load average" in t.get("load", "") or not os.path.exists("/proc/loadavg"), t)
    ranking = t["entries"][0]["ranking"]
    names = [m["backend"] for m in ranking]
    check("reference" not in names and names, f"the reference is never timed: {names}")
    check([m["median_ms"] for m in ranking] == sorted(m["median_ms"] for m in ranking), ranking)

    # --- canary: the served output stays bit-identical ---
    record = f"{tmp}/canary.json"
    serving = "reference"
    candidates = [b for b in available if b != serving]
    if candidates:
        cand = candidates[0]
        run(["--attention", "only:" + serving, "attention", "run"] + io + ["--out", f"{tmp}/a.npy"])
        p = run(["--attention", "only:" + serving, "--canary", cand, "--canary-record", record,
                 "attention", "run"] + io + ["--out", f"{tmp}/b.npy"])
        a, b = np.load(f"{tmp}/a.npy"), np.load(f"{tmp}/b.npy")
        check(a.tobytes() == b.tobytes(), "canary changed the served output")
        listed = json.loads(run(["--canary-record", record, "backends", "--json"]).stdout)
        rec = [x for x in listed if x["name"] == cand][0]["canary"]
        runs = sum(r["runs"] for r in rec.values())
        agree = sum(r["agreements"] for r in rec.values())
        check(runs == 1 and agree == 1, f"canary record {rec}")
        table_out = run(["--canary-record", record, "backends"]).stdout
        check(f"{cand}" in table_out and "1 runs in 1 bucket, 1 agree" in table_out, table_out)
    else:
        print("only the reference is available: canary CLI check skipped")

if failures:
    print(f"0 passed, {len(failures)} failed")
    sys.exit(1)
print("cli observability: all checks passed")
