"""What a new user hits first, through the real binary (issue 34):
- global options after the subcommand work (`tessera backends --threads 1`);
- a policy under which nothing can run is refused before any work, exit 2,
  nothing written; one naming a backend of another build is fine while
  another can run;
- the `backends` table keeps its columns aligned whatever the reasons' length;
- TESSERA_CPU_CAP (issue 47): a cap below the CPU makes the process that
  kind (`backends` says so, nothing above it is available), a cap above the
  CPU or an unknown kind is refused, exit 2, naming the variable.

Usage: front_door_test.py TESSERA_BINARY
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile


def run(binary, *args, env=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300, env=env)


RUNGS = ["generic", "x86-avx2", "x86-avx512", "x86-avx512bf16", "x86-amx"]


def rung(kind):
    return RUNGS.index(re.sub(r"-(amd|intel)$", "", kind))


def check_cpu_cap(binary):
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_CPU_CAP"}
    p = run(binary, "backends", env=env)
    m = re.search(r"^cpu kind: (\S+)$", p.stdout, re.M)
    check(p.returncode == 0 and m, p.stdout + p.stderr)
    real = m.group(1)
    # Above the CPU: AMX where the CPU has less, the other vendor's bf16 kind on an AMX Xeon.
    above, why_above = ("x86-amx", "above the CPU") if real != "x86-amx" else \
        ("x86-avx512bf16-amd", "other vendor")
    for cap, why in ((above, why_above), ("x86-avx3", "is not a CPU kind")):
        p = run(binary, "backends", env={**env, "TESSERA_CPU_CAP": cap})
        check(p.returncode == 2 and f"TESSERA_CPU_CAP='{cap}'" in p.stderr and why in p.stderr,
              (cap, p.returncode, p.stderr))
    if rung(real) < rung("x86-avx2"):
        return
    p = run(binary, "backends", "--json", env={**env, "TESSERA_CPU_CAP": "x86-avx2"})
    check(p.returncode == 0, p.stderr)
    rows = {r["name"]: r for r in json.loads(p.stdout)}
    for variant in ("cpu.flash:bf16dot", "cpu.flash:amx"):
        check(not rows[variant]["available"] and
              "x86-avx2 by TESSERA_CPU_CAP" in rows[variant]["unavailable_reason"], rows[variant])
    check(rows["cpu.flash"]["available"] and rows["reference"]["available"], rows)
    p = run(binary, "backends", env={**env, "TESSERA_CPU_CAP": "x86-avx2"})
    check(f"cpu kind: x86-avx2 by TESSERA_CPU_CAP; the CPU is {real}" in p.stdout, p.stdout)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    binary = sys.argv[1]

    # Global options before or after the subcommand are the same options.
    before = run(binary, "--threads", "1", "backends")
    after = run(binary, "backends", "--threads", "1", "--attention", "deny:xla")
    check(before.returncode == 0 and after.returncode == 0, (before.stderr, after.stderr))
    check(run(binary, "backends", "--no-such-flag").returncode != 0, "an unknown flag passes")
    # --version: exit 0 and the library's version (was exit 106, an unlisted code).
    v = run(binary, "--version")
    check(v.returncode == 0 and re.fullmatch(r"tessera \d+\.\d+\.\d+\n", v.stdout),
          (v.returncode, v.stdout, v.stderr))

    with tempfile.TemporaryDirectory() as tmp:
        doc = pathlib.Path(tmp, "one.txt")
        doc.write_text("hello world\n")
        out = pathlib.Path(tmp, "out.jsonl")
        for policy in ("only:nope", "only:cuda.flash,cuda.vendor", "deny:reference,cpu.flash,"
                       "cpu.flash:f32,cpu.flash:bf16dot,cpu.flash:amx,cpu.gemm,xla"):
            p = run(binary, "embed", str(doc), "-o", str(out), "--attention", policy)
            check(p.returncode == 2, (policy, p.returncode, p.stderr))
            check("leaves no backend that can run" in p.stderr and "--attention" in p.stderr,
                  p.stderr)
            check("weights:" not in p.stderr, "the model was loaded before the policy was checked")
            check(not out.exists(), "an output file was created")
        # A name this build lacks is fine while another backend can run.
        p = run(binary, "--attention", "only:cuda.flash,cpu.flash", "embed", str(doc), "-o",
                str(out))
        check(p.returncode == 0 and "attention: cpu.flash" in p.stderr, p.stderr)

    # The table: every FEATURES cell starts in the same column.
    table = run(binary, "backends").stdout.splitlines()
    header = table[0]
    check(header.split()[-1] == "AVAILABLE", header)
    col = header.index("FEATURES")
    rows = [line for line in table[1:] if line.strip() and not line.startswith(" ")]
    rows = rows[:rows.index(next(r for r in rows if r.startswith("canary")))] \
        if any(r.startswith("canary") for r in rows) else rows
    for line in rows:
        check(line[col - 1] == " " and line[col] != " ", "misaligned row: " + line)
    check_cpu_cap(binary)
    print("ok")


if __name__ == "__main__":
    main()
