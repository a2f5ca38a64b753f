"""The process's default Runtime: made on first use from the environment
(TESSERA_ATTENTION, TESSERA_TUNING, one thread per core), or by configure()."""

import threading

from ._tessera import Runtime

_lock = threading.Lock()
_default = None


def runtime():
    """The default Runtime that module-level functions use."""
    global _default
    made = _default  # once made, read without the lock: it is on every call's path
    if made is not None:
        return made
    with _lock:
        if _default is None:
            _default = Runtime()
        return _default


def configure(attention="", threads=0, memory_budget_bytes=0, tuning=""):
    """Replaces the default Runtime and returns it.

    attention: a policy ("auto", "only:cpu.flash", "prefer:cpu.gemm;deny:xla"),
        "" for $TESSERA_ATTENTION or auto.
    threads: worker threads, 0 for one per hardware thread; more than
        max(64, 8 per hardware thread) is a ValueError, and threads the system
        cannot start (a memory or process limit) a RuntimeError saying how
        many could.
    memory_budget_bytes: a cap on tracked memory, 0 for none.
    tuning: a `tessera tune` table, "none", or "" for $TESSERA_TUNING / the default path;
        without one, auto follows the ranking shipped for this CPU kind (Runtime.tuning_note).
    Objects made with the previous Runtime (an Embedder) keep using it.
    """
    global _default
    made = Runtime(attention=attention, threads=threads,
                   memory_budget_bytes=memory_budget_bytes, tuning=tuning)
    with _lock:
        _default = made
    return made
