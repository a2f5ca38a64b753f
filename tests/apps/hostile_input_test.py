"""Hostile inputs through the real `tessera` binary (issue 19).

Usage: hostile_input_test.py TESSERA_BINARY
Each case used to abort (uncaught exception), overflow the stack, overflow an
integer product or allocate without bound. Now each must end with a clear
error (exit 1 or 2, never a signal), name the field and the value, print a
bounded message, and finish quickly without a large allocation.
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

# Generous: each case is refused from its header or its text alone.
MAX_SECONDS = 20
# Bytes of stderr a refusal may print, however large the hostile value.
MAX_MESSAGE = 2000
# Address space for the binary: a 2^40-element allocation would fail loudly.
MAX_ADDRESS_SPACE = 16 << 30


def limit_memory():
    # Under ASan (scripts/sanitize.sh) the shadow memory needs terabytes of
    # address space; there ASan's allocation-size check catches a huge
    # allocation instead (it aborts: a signal, which run() fails on).
    if os.environ.get("TESSERA_TEST_SANITIZED") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (MAX_ADDRESS_SPACE, MAX_ADDRESS_SPACE))


def run(binary, args, env=None, expect_rc=(2,), needles=()):
    t0 = time.monotonic()
    p = subprocess.run([binary] + args, capture_output=True, env=env, preexec_fn=limit_memory,
                       timeout=MAX_SECONDS * 3)
    elapsed = time.monotonic() - t0
    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    shown = " ".join(a[:60] for a in args).encode("unicode_escape").decode()
    assert p.returncode >= 0, f"{shown}: killed by signal {-p.returncode}\n{out[-2000:]}"
    assert p.returncode in expect_rc, f"{shown}: rc {p.returncode}, want {expect_rc}\n{out[-2000:]}"
    assert elapsed < MAX_SECONDS, f"{shown}: took {elapsed:.1f} s"
    assert len(p.stderr) <= MAX_MESSAGE, f"{shown}: {len(p.stderr)} bytes of stderr"
    for needle in needles:
        assert needle in out, f"{shown}: output lacks {needle!r}:\n{out[-2000:]}"
    print(f"ok rc={p.returncode} {elapsed:.2f}s {shown[:100]}")
    return out


def npy(path, header, data=b"", version=1):
    header = header + " " * (63 - (len(header) + 10 + 2 * (version > 1)) % 64) + "\n"
    raw = header.encode("latin1")
    size = struct.pack("<H", len(raw)) if version == 1 else struct.pack("<I", len(raw))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]) + size + raw + data)
    return path


def attention(binary, tmp, q, k=None, v=None, extra=(), **kw):
    good = os.path.join(tmp, "good.npy")
    np.save(good, np.ones((1, 2, 1, 4), dtype=np.float32))
    args = ["attention", "run", "--q", q, "--k", k or good, "--v", v or good,
            "--out", os.path.join(tmp, "out.npy"), "--backend", "reference"] + list(extra)
    return run(binary, args, **kw)


def npy_cases(binary, tmp):
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }"
    q = os.path.join(tmp, "q.npy")
    # Non-numeric and overflowing dims: std::stoll threw, uncaught (abort).
    attention(binary, tmp, npy(q, head % "1, 2, abc, 4"),
              needles=["q.npy", "shape[2] = 'abc' is not an integer"])
    attention(binary, tmp, npy(q, head % "99999999999999999999999, 1"),
              needles=["shape[0] = '99999999999999999999999' is not an integer"])
    # A negative dim wrapped to a huge size_t.
    attention(binary, tmp, npy(q, head % "1, -3, 1, 4"), needles=["shape[1] = '-3'"])
    # A huge dim allocated its bytes before the file's length was checked.
    attention(binary, tmp, npy(q, head % "1, 1099511627776, 1, 4", b"\0" * 16),
              needles=["needs 17592186044416 bytes of data but the file has 16 (truncated?)"])
    attention(binary, tmp, npy(q, head % "4294967296, 4294967296, 1, 4"),
              needles=["has more than 2^63 elements"])
    # Long headers: std::regex recursed per character and overflowed the stack.
    long_header = head.replace("(%s)", "(1, 2, 1, 4)").replace(
        "'shape'", " " * 900000 + "'shape'")
    out = os.path.join(tmp, "out.npy")
    attention(binary, tmp, npy(q, long_header, np.ones(8, np.float32).tobytes(), version=2),
              expect_rc=(0,))
    assert np.load(out).shape == (1, 2, 1, 4)
    attention(binary, tmp, npy(q, head % ("1," * 600000), version=2),
              needles=["exceeds the limit of 1048576"])
    attention(binary, tmp, npy(q, "{'descr': '" + "<" * 500000 + "'}", version=2),
              needles=["has no 'fortran_order'"])
    # Hostile text is shown cut short and escaped.
    attention(binary, tmp, npy(q, "{'descr': '\x1b[2J" + "A" * 5000 + "', 'fortran_order': "
                                  "False, 'shape': (1,), }", b"\0" * 4),
              needles=["'descr' = '\\x1b[2JAAA", "...' (5004 bytes) is not supported"])
    # q with D = 0 holds no data whatever its other dims, but out takes Dv
    # from v: its size is checked before the allocation.
    v = os.path.join(tmp, "v.npy")
    np.save(v, np.ones((1, 1, 1, 4), dtype=np.float32))
    attention(binary, tmp, npy(q, head % "1073741824, 1073741824, 1, 0"), v=v,
              needles=["has more than 2^63 bytes"])
    attention(binary, tmp, npy(q, head % "1048576, 1048576, 1, 0"), v=v,
              needles=["more than this machine's memory"])
    attention(binary, tmp, npy(q, head % "1, 2, 1, 4", np.ones(8, np.float32).tobytes()),
              extra=["--window", "0,9223372036854775807"],
              needles=["--window side 9223372036854775807 must be -1 (unbounded) or in"])


def shape_cases(binary):
    explain = lambda shape, **kw: run(binary, ["backends", "--explain", shape], **kw)
    explain("B=9223372036854775807,S=4,H=1,D=8",
            needles=["shape key B = '9223372036854775807' is not an integer in [0, 2147483647]"])
    explain("B=2147483647,S=2147483647,H=2147483647,D=2147483647",
            needles=["q (B*Sq*Hq*D) has more than 2^63 elements"])
    explain("B=2000000000,S=1,H=1,D=1,varlen=1",
            needles=["varlen B = 2000000000 sequences exceeds the limit of 65536"])
    explain("B=1,S=4,H=1,D=8,softcap=1.5abc", needles=["softcap = '1.5abc'"])
    explain("B=1,S=4,H=1,D=8,dtype=" + "x" * 100000, needles=["(100000 bytes)"])
    explain("B=1,S=4,H=1,D=8," + "\x1b[2J" * 1000 + "=1", needles=["unknown shape key '\\x1b[2J"])
    # Within the parse limits but beyond this machine's memory: refused
    # before anything is allocated.
    run(binary, ["bench", "attention", "--backends", "reference", "--shapes",
                 "B=1,S=1048576,H=1024,D=65536"],
        expect_rc=(1,), needles=["more than this machine's memory"])


def policy_cases(binary):
    explain = ["backends", "--explain", "B=1,S=4,H=1,D=8"]
    junk = "deny:" + "\x1b[2J" * 30000
    run(binary, ["--attention=" + junk] + explain,
        needles=["--attention: attention policy clause 'deny:\\x1b[2J", "is not a name"])
    run(binary, ["--attention=" + "y" * 100000 + ":x"] + explain, needles=["unknown clause"])
    env = dict(os.environ, TESSERA_ATTENTION="prefer:" + "z" * 100000)
    run(binary, explain, env=env, needles=["TESSERA_ATTENTION", "(100000 bytes)"])


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        npy_cases(binary, tmp)
    shape_cases(binary)
    policy_cases(binary)


if __name__ == "__main__":
    main()
