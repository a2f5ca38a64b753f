"""The C++ core's messages in the Python API's words.

The library's messages are shared with the CLI and the C++ API: they name
options by the library's names (max_tokens, weights: the keywords here
too; the CLI writes them as flags), the attention contract's fields
(q.shape[3] (D), laid out [B, S, H, D]) and the batch the binding was
given (texts[3]). The Python wrappers call the core inside one of the
context managers below, which re-raise its ValueError / RuntimeError with
the keywords, argument names and indices the caller used.
"""

import contextlib
import re

# Embedder(...) / CrossEncoder(...)'s keyword where the library's option
# name differs (a leading ^: only at the message's start).
LOAD_NAMES = (("^model \"", "model_dir \""),)

# The texts a batch call names: "texts[3] has ...", "texts: ..." (one text).
_BATCH_INPUT = re.compile(r"^(?:texts|inputs)(?:\[(\d+)\])?(?=[ :])")


def _renamed(message, names):
    for old, new in names:
        pattern = "^" + re.escape(old[1:]) if old.startswith("^") else \
            re.escape(old) + r"(?![\w-])"
        message = re.sub(pattern, new.replace("\\", r"\\"), message)
    return message


@contextlib.contextmanager
def python_names(names):
    """Errors raised inside name `names`' second words instead of their first
    (whole words only): python_names(LOAD_NAMES) around a model load."""
    try:
        yield
    except (ValueError, RuntimeError) as e:
        message = _renamed(str(e), names)
        if message == str(e):
            raise
        raise type(e)(message) from None


def _unencodable(value):
    """Why a text cannot reach the core, or None: the binding takes str that
    encode to UTF-8 (a lone surrogate, "\\ud800", does not)."""
    if not isinstance(value, str):
        return f"expected str, got {type(value).__name__}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"not valid text: {value[e.start:e.end]!r} at index {e.start} is a lone "
                "surrogate, which has no UTF-8 encoding (decode the source with "
                "errors='replace', or drop it)")
    return None


@contextlib.contextmanager
def batch_call(field, texts, offset=0, single=False):
    """Around the core's call on texts[offset:offset + n] of the caller's
    `field` ("sentences"): its messages name field[offset + i] (or `field`
    for a single text) and truncate=, and a text the binding cannot take
    (a lone surrogate) is a ValueError naming it, not nanobind's
    "incompatible function arguments". `texts` are the batch's, each a str
    or a tuple of them (a pair)."""
    try:
        yield
    except TypeError:
        for i, item in enumerate(texts):
            pair = isinstance(item, tuple)
            for j, part in enumerate(item if pair else (item,)):
                if part is None:
                    continue
                problem = _unencodable(part)
                if problem:
                    name = field if single else f"{field}[{offset + i}]"
                    raise ValueError(f"{name}{f'[{j}]' if pair else ''}: {problem}") from None
        raise
    except ValueError as e:
        def name(m):
            index = int(m.group(1)) if m.group(1) is not None else 0
            return field if single else f"{field}[{offset + index}]"
        message = _BATCH_INPUT.sub(name, str(e), count=1)
        message = message.replace("ask for truncation to cut it",
                                  "truncate=True cuts it")
        if message == str(e):
            raise
        raise ValueError(message) from None
