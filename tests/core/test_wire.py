"""apps.core.wire writes the same JSON as the standard library's compact form."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core import wire

scalars = (st.none() | st.booleans() | st.integers(-2**80, 2**80)
           | st.text(max_size=20))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=10)


def stdlib(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(values)
def test_dumps_writes_what_the_standard_library_writes(value):
    assert wire.dumps(value) == stdlib(value)
    assert wire.dumps_bytes(value) == stdlib(value).encode()


def test_integers_beyond_64_bits_are_written_not_refused():
    # What a client may send and a refusal echoes; orjson alone raises on it.
    assert (wire.dumps({"id": 2**70, "n": -(2**64)})
            == '{"id":1180591620717411303424,"n":-18446744073709551616}')


def test_what_is_not_json_still_raises():
    with pytest.raises(TypeError):
        wire.dumps({"when": object()})
