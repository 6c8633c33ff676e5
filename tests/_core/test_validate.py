"""The client's own checks of inputs: each names the parameter and the rule, before any request,
and applies the spec's patterns."""

from __future__ import annotations

import datetime as dt
import uuid

import pandas as pd
import pytest

from toolkit._core.errors import ValidationError
from toolkit._core.validate import (
    check_choice,
    check_expression,
    check_int,
    check_names,
    check_resource_group,
    check_time,
    check_uuid,
    iso_time,
    many_strings,
    resource_group_problem,
    server_name_problem,
)


@pytest.mark.parametrize("name", ["a", "sql-prod-01", "x" * 63, "0db"])
def test_valid_server_names(name) -> None:
    assert server_name_problem(name) is None


@pytest.mark.parametrize(("name", "says"), [
    ("-a", "'-'"), ("UPPER", "lower-case"), ("a_b", "lower-case"), ("x" * 64, "63"),
])
def test_invalid_server_names_say_why(name, says) -> None:
    problem = server_name_problem(name)
    assert problem is not None and says in problem


@pytest.mark.parametrize("name", ["rg", "rg.web(1)", "x" * 90])
def test_valid_resource_groups(name) -> None:
    assert resource_group_problem(name) is None
    assert check_resource_group(name) == name


@pytest.mark.parametrize("name", ["", "x" * 91, "ends.", "a/b", 7])
def test_invalid_resource_groups_name_the_parameter(name) -> None:
    assert resource_group_problem(name) is not None
    with pytest.raises(ValidationError, match="resource_group"):
        check_resource_group(name)


def test_uuids_in_any_case_or_as_uuid_objects() -> None:
    u = uuid.UUID(int=7)
    assert check_uuid(u, "id") == str(u)
    assert check_uuid(str(u).upper(), "id") == str(u).upper()
    with pytest.raises(ValidationError, match=r"workspace_id.*UUID"):
        check_uuid("not-a-uuid", "workspace_id")


def test_choices_ints_and_many_strings() -> None:
    assert check_choice("truck", "mode", ("driving", "truck")) == "truck"
    with pytest.raises(ValidationError, match="mode"):
        check_choice("bike", "mode", ("driving", "truck"))
    assert check_int(5, "top", minimum=1, maximum=10) == 5
    for bad in (0, 11, True, 2.5):
        with pytest.raises(ValidationError, match="top"):
            check_int(bad, "top", minimum=1, maximum=10)
    assert many_strings("a", "names") == (["a"], True)
    assert many_strings(["a", "b"], "names") == (["a", "b"], False)


@pytest.mark.parametrize(("value", "parameter", "rule"), [
    (None, "kinds", "one of Jam, Crash, or a list of them"),
    (b"Jam", "kinds", "or a list of them"),
    ({"Jam": 1}, "kinds", "or a list of them"),
    (7, "kinds", "or a list of them"),
    ([], "kinds", "at least one"),
    ("Meteor", "kinds", "must be one of Jam, Crash"),
    (["Jam", "Meteor"], "kinds[1]", "must be one of Jam, Crash"),
    (("Jam", 3), "kinds[1]", "must be one of Jam, Crash"),
])
def test_one_string_or_several_is_one_rule(value: object, parameter: str, rule: str) -> None:
    with pytest.raises(ValidationError) as err:
        many_strings(value, "kinds", choices=("Jam", "Crash"))
    assert err.value.parameter == parameter and rule in err.value.rule


def test_one_string_or_several_gives_the_canonical_spelling_of_any_iterable() -> None:
    import pandas as pd

    assert many_strings("jam", "kinds", choices=("Jam", "Crash"), case_insensitive=True) == (
        ["Jam"], True)
    assert many_strings(pd.Series(["crash", "Jam"]), "kinds", choices=("Jam", "Crash"),
                        case_insensitive=True) == (["Crash", "Jam"], False)
    assert many_strings(iter(["a"]), "names") == (["a"], False)
    with pytest.raises(ValidationError) as err:
        many_strings(["a", 2], "names")
    assert err.value.parameter == "names[1]" and err.value.rule == "must be a string"


def test_expressions_are_non_empty_strings() -> None:
    assert check_expression(None, "filter") is None
    assert check_expression("a eq 1", "filter") == "a eq 1"
    for bad in ("", "  ", 3):
        with pytest.raises(ValidationError, match="filter"):
            check_expression(bad, "filter")


def test_names_are_joined_and_each_checked() -> None:
    assert check_names(None, "select") is None
    assert check_names([" a", "b "], "select") == "a,b"
    assert check_names("a, b", "select") == "a, b"
    with pytest.raises(ValidationError, match=r"select\[1\]"):
        check_names(["a", ""], "select")
    with pytest.raises(ValidationError, match="at least one"):
        check_names([], "select")
    with pytest.raises(ValidationError, match="list of strings"):
        check_names(b"a", "select")


def test_times_are_utc_timestamps_and_write_back_with_z() -> None:
    assert check_time(None, "start") is None
    naive = check_time("2026-11-20T09:00:00", "start")
    assert naive == pd.Timestamp("2026-11-20T09:00:00Z") and str(naive.tz) == "UTC"
    paris = check_time(dt.datetime(2026, 11, 20, 10, tzinfo=dt.timezone(dt.timedelta(hours=1))),
                       "end")
    assert iso_time(paris) == "2026-11-20T09:00:00Z"
    assert iso_time(paris + pd.Timedelta(microseconds=250)) == "2026-11-20T09:00:00.000250Z"
    for bad in (True, 3, "not a time", pd.NaT):
        with pytest.raises(ValidationError, match="start"):
            check_time(bad, "start")


@pytest.mark.parametrize("value", ["0", "resourceId, 0abc", "a b", "properties/x", "a,,b",
                                   ["resourceId", "1st"]])
def test_select_takes_field_names_only(value) -> None:
    # a name that is not a field would reach the decoder as a struct field and fail there
    with pytest.raises(ValidationError) as info:
        check_names(value, "select", fields=True)
    assert info.value.parameter == "select" and "field name" in str(info.value)


def test_field_names_are_joined_as_given() -> None:
    assert check_names(" resourceId , complianceState", "select", fields=True) == \
        "resourceId , complianceState"
    assert check_names(["resourceId", "_x1"], "select", fields=True) == "resourceId,_x1"
    # orderby items carry a direction: no field rule there
    assert check_names("timestamp desc", "orderby") == "timestamp desc"

