"""apps.core.wire writes the same JSON as the standard library's compact form."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core import wire

#: Code points of every category, lone surrogates (Cs) included (a client's "\\ud800" reads as
#: one). st.text() leaves them out, and among all code points hypothesis almost never draws
#: one: they get a branch of their own, drawn one by one (st.text() merges the branches back).
codepoints = (st.characters(categories=["L", "M", "N", "P", "S", "Z", "C"])
              | st.characters(categories=["Cs"]))


def texts(max_size: int):
    return st.text(max_size=max_size) | st.lists(codepoints, max_size=max_size).map("".join)


scalars = st.none() | st.booleans() | st.integers(-2**80, 2**80) | texts(20)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts(6), inner, max_size=4), max_leaves=10)
SURROGATE = re.compile("[\ud800-\udfff]")


def stdlib(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(values)
def test_dumps_writes_what_the_standard_library_writes(value):
    # ... but for a lone surrogate, which UTF-8 cannot hold: U+FFFD stands for it.
    expected = SURROGATE.sub("\ufffd", stdlib(value))
    assert wire.dumps(value) == expected
    assert wire.dumps_bytes(value) == expected.encode()


def test_integers_beyond_64_bits_are_written_not_refused():
    # What a client may send and a refusal echoes; orjson alone raises on it.
    assert (wire.dumps({"id": 2**70, "n": -(2**64)})
            == '{"id":1180591620717411303424,"n":-18446744073709551616}')


def test_what_is_not_json_still_raises():
    with pytest.raises(TypeError):
        wire.dumps({"when": object()})


def test_a_lone_surrogate_is_written_as_the_replacement_character_not_refused():
    # What json.loads makes of a client's "\\ud800"; orjson refuses it, and so does UTF-8.
    value = {"id": "\ud800", "\udfff": ["a\udbffb", {"n": 2**70}], "ok": "ñ 😀"}
    written = wire.dumps_bytes(value)
    assert written.decode() == ('{"id":"\ufffd","\ufffd":["a\ufffdb",'
                                '{"n":1180591620717411303424}],"ok":"ñ 😀"}')
    # It reads back, with orjson too (snapshots are read from Redis with wire.loads).
    assert wire.loads(written)["id"] == "\ufffd"
    assert wire.dumps("\ud800") == '"\ufffd"'
