"""What a new user hits first, through the real binary (issue 34):
- global options after the subcommand work (`tessera backends --threads 1`);
- a policy under which nothing can run is refused before any work, exit 2,
  nothing written; one naming a backend of another build is fine while
  another can run;
- the `backends` table keeps its columns aligned whatever the reasons' length.

Usage: front_door_test.py TESSERA_BINARY
"""
import pathlib
import subprocess
import sys
import tempfile


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


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
    print("ok")


if __name__ == "__main__":
    main()
