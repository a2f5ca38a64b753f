"""tessera.Runtime: backends, policy, threads, and what it recorded."""

import json

import numpy as np
import pytest

import tessera


def test_backends_describe_each_backend():
    rows = tessera.backends()
    by_name = {b["name"]: b for b in rows}
    assert by_name["reference"]["available"] and by_name["reference"]["reason"] == ""
    assert {"f32", "bf16", "f16"} <= set(by_name["reference"]["dtypes"])
    for b in rows:
        assert b["available"] or b["reason"], f"{b['name']} is unavailable without a reason"


def test_configure_sets_threads_and_policy():
    previous = tessera.runtime()
    try:
        rt = tessera.configure(attention="only:reference", threads=1)
        assert tessera.runtime() is rt and rt.threads == 1
        assert rt.policy == "only:reference"
        q = np.ones((1, 2, 4, 8), np.float32)
        tessera.scaled_dot_product_attention(q, q, q)
        assert rt.stats()["reference"]["calls"] == 1
        assert "cpu.flash" not in rt.stats()
    finally:
        import tessera._runtime as r
        r._default = previous


def test_threads_beyond_the_machine_are_refused():
    # --threads 100000 would take every process id of the machine (issue 35).
    with pytest.raises(ValueError, match=r"threads = 100000 is more than \d+"):
        tessera.configure(threads=100000)


def test_profile_spans_and_memory_are_reachable():
    rt = tessera.Runtime(threads=1)
    q = np.ones((1, 2, 64, 32), np.float32)
    rt.set_record_decisions(True)
    for _ in range(3):
        tessera.scaled_dot_product_attention(q, q, q, runtime=rt)
    att = [a for a in rt.profile() if a["name"] == "attention"]
    assert sum(a["count"] for a in att) == 3
    spans = [s for s in rt.spans() if s["name"] == "attention"]
    assert len(spans) == 3 and spans[0]["shape"].startswith("B=1,")
    assert spans[0]["decision"], "record_decisions should explain the choice"
    m = rt.memory()
    assert m["live_bytes"] == 0 and m["budget_bytes"] is None
    # What `tessera --trace` and `--metrics` write.
    trace = json.loads(rt.chrome_trace())
    assert sum(e["name"].startswith("attention") for e in trace["traceEvents"]) == 3
    metrics = rt.metrics_text()
    assert "tessera_attention_seconds_count" in metrics
    assert "tessera_attention_calls_total{backend=" in metrics


def test_a_variant_is_chosen_by_a_policy_with_colons():
    """cpu.flash's product paths are backends named cpu.flash:<path>."""
    rows = {b["name"]: b for b in tessera.backends()}
    assert {"cpu.flash:f32", "cpu.flash:bf16dot", "cpu.flash:amx"} <= set(rows)
    rt = tessera.Runtime(threads=1)
    q = np.ones((1, 2, 4, 8), np.float32)
    tessera.scaled_dot_product_attention(q, q, q, policy="only:cpu.flash:f32", runtime=rt)
    tessera.scaled_dot_product_attention(q, q, q, backend="cpu.flash:f32", runtime=rt)
    assert rt.stats()["cpu.flash:f32"]["calls"] == 2
    spans = [s for s in rt.spans() if s["name"] == "attention"]
    assert [s["path"] for s in spans] == ["f32", "f32"]
    bf16dot = rows["cpu.flash:bf16dot"]
    if not bf16dot["available"]:
        assert bf16dot["reason"]
        with pytest.raises(RuntimeError, match="unavailable"):
            tessera.scaled_dot_product_attention(q, q, q, policy="only:cpu.flash:bf16dot",
                                                 runtime=rt)


def test_policy_errors_are_value_errors():
    with pytest.raises(ValueError, match="policy"):
        tessera.Runtime(attention="only:nope")


def test_runtime_has_a_docstring_and_a_repr():
    assert "policy" in tessera.Runtime.__doc__ and "threads" in tessera.Runtime.__doc__
    assert tessera.Runtime.backends.__doc__ and tessera.Runtime.memory.__doc__
    rt = tessera.Runtime(threads=1, attention="only:cpu.flash")
    assert repr(rt) == "Runtime(threads=1, attention='only:cpu.flash')"
    rt = tessera.Runtime(threads=1, memory_budget_bytes=1 << 20)
    assert repr(rt) == "Runtime(threads=1, attention='auto', memory_budget_bytes=1048576)"
