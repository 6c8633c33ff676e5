"""The interning builder: the same frame from dicts and from typed records, and the same frame
as FrameBuilder; pages that do not fit the declared types are left to the general parser;
builders joined give the frame of one builder fed every page."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

from tests.conftest import example
from toolkit._core.columns import InterningBuilder, page_decoder
from toolkit._core.frames import FrameBuilder
from toolkit.arm._schemas import POLICY_STATES

GROUPS = (("resourceId", "resourceType", "resourceTags"),
          ("policyAssignmentId", "policyDefinitionId"))


def _page() -> bytes:
    body = example("05-policy-states", "PolicyStates_QueryResourceGroupScope.json")[
        "responses"]["200"]["body"]
    extra = dict(body["value"][0], complianceState="Pending", resourceTags=None,
                 policyDefinitionGroupNames=["a", "b"], isCompliant=None)
    return orjson.dumps({"@odata.nextLink": None, "value": [*body["value"], extra] * 3})


def _build(records) -> pd.DataFrame:
    builder = InterningBuilder(POLICY_STATES.columns, groups=GROUPS)
    builder.add(records)
    builder.add(records[:2])
    return builder.build()


def test_typed_records_give_the_frame_of_dicts_and_of_frame_builder() -> None:
    content = _page()
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    typed = decode(content)
    assert typed is not None
    envelope, records = typed
    assert envelope == {"@odata.nextLink": None} and not isinstance(records[0], dict)
    dicts = orjson.loads(content)["value"]
    from_structs, from_dicts = _build(records), _build(dicts)
    pd.testing.assert_frame_equal(from_structs, from_dicts)
    reference = FrameBuilder(POLICY_STATES)
    reference.add(dicts)
    reference.add(dicts[:2])
    pd.testing.assert_frame_equal(from_dicts, reference.build(), check_categorical=False)
    # the categories follow the one rule: documented first, others sorted after
    assert list(from_dicts["complianceState"].cat.categories) == list(
        reference.build()["complianceState"].cat.categories)


def test_a_page_of_unexpected_types_is_left_to_the_general_parser() -> None:
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    for hostile in (b'{"value":[{"resourceId": 7}]}', b'{"value":{"a":1}}', b"[1]",
                    b'{"value":[{"isCompliant":"yes"}]}', b"not json"):
        assert decode(hostile) is None
    assert decode(b'{"value":null,"@odata.nextLink":"x"}') == ({"@odata.nextLink": "x"}, [])


def test_builders_joined_give_the_frame_of_one_builder_fed_every_page() -> None:
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    typed = decode(_page())
    assert typed is not None
    records = typed[1]
    dicts = orjson.loads(_page())["value"]
    # pages as three chains would read them: structs, an empty chain, dicts with values the
    # first chain never saw (other codes for the same values, and new ones)
    other = [dict(d, complianceState="Exempt", resourceId=f"/r/{i}",
                  policyDefinitionGroupNames=["z"]) for i, d in enumerate(dicts)]
    pages = [[records[:3], records[3:]], [], [other[:5], dicts[::-1], other[5:]]]
    one = InterningBuilder(POLICY_STATES.columns, groups=GROUPS)
    chains = []
    for chain in pages:
        builder = InterningBuilder(POLICY_STATES.columns, groups=GROUPS)
        for page in chain:
            one.add(page)
            builder.add(page)
        chains.append(builder)
    joined = chains[0]
    for builder in chains[1:]:
        joined.absorb(builder)
        assert builder.rows == 0
    assert joined.rows == one.rows == 2 * len(dicts) + len(other)
    pd.testing.assert_frame_equal(joined.build(), one.build())


def test_only_builders_of_the_same_columns_are_joined() -> None:
    builder = InterningBuilder(POLICY_STATES.columns, groups=GROUPS)
    with pytest.raises(ValueError, match="different columns"):
        builder.absorb(InterningBuilder(POLICY_STATES.columns[:3], groups=GROUPS))
    with pytest.raises(ValueError, match="different columns"):
        builder.absorb(InterningBuilder(POLICY_STATES.columns, groups=GROUPS[:1]))


def _pages_with_new_values() -> list[bytes]:
    """Pages whose later pages bring category values the first did not hold (an escaped one
    among them), a resource id for every record (many values) and a field null at first."""
    dicts = orjson.loads(_page())["value"]
    pages = []
    for p in range(4):
        page = [dict(d, resourceId=f"/r/{p}/{i}", resourceType=f"t{p % 2}",
                     policyAssignmentName="n\u00e9\\\"q" if p == 3 else d["policyAssignmentName"],
                     policyDefinitionVersion=None if p == 0 else f"{i % 2}.0.0",
                     policyDefinitionGroupNames=[f"g{p}"]) for i, d in enumerate(dicts)]
        pages.append(orjson.dumps({"value": page, "@odata.nextLink": f"/next/{p}"}))
    return pages


def test_pages_decoded_against_known_values_give_the_frame_of_plain_decoding() -> None:
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    pages = _pages_with_new_values()
    typed, plain = (InterningBuilder(POLICY_STATES.columns, groups=GROUPS) for _ in range(2))
    for content in pages * 2:  # the second time round every value is known
        out = decode(content)
        assert out is not None
        envelope, records = out
        assert envelope["@odata.nextLink"].startswith("/next/")
        assert not isinstance(records[0], dict)
        typed.add(records)
        plain.add(orjson.loads(content)["value"])
    pd.testing.assert_frame_equal(typed.build(), plain.build())


def test_known_values_are_shared_and_a_page_of_new_ones_is_learnt() -> None:
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    first, second, *_ = _pages_with_new_values()
    a, b = decode(first), decode(first)
    assert a is not None and b is not None
    # a value seen before comes back as one shared object
    assert len({id(r.resourceType) for r in a[1]}) > 1
    assert len({id(r.resourceType) for r in b[1]}) == 1
    out = decode(second)  # resourceType "t1" and versions not seen before: learnt
    assert out is not None and {r.resourceType for r in out[1]} == {"t1"}
    again = decode(second)
    assert again is not None and len({id(r.resourceType) for r in again[1]}) == 1
    assert {r.policyDefinitionVersion for r in again[1]} == {"0.0.0", "1.0.0"}


def test_a_field_of_many_values_or_of_type_errors_falls_back_to_plain_text() -> None:
    decode = page_decoder(POLICY_STATES.columns, "value", "@odata.nextLink")
    many = [{"resourceId": f"/r/{i}", "resourceType": "t"} for i in range(400)]
    assert decode(orjson.dumps({"value": many})) is not None
    fresh = [{"resourceId": f"/s/{i}", "resourceType": "t"} for i in range(3)]
    out = decode(orjson.dumps({"value": fresh}))
    assert out is not None and [r.resourceId for r in out[1]] == ["/s/0", "/s/1", "/s/2"]
    # a known field of the wrong type is still left to the general parser
    assert decode(b'{"value":[{"resourceType": 7}]}') is None
    assert decode(orjson.dumps({"value": fresh})) is not None
