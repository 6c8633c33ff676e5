"""parse_scope: scope strings in either vocabulary name the same scope."""

from __future__ import annotations

from toolkit.arm.scopes import parse_scope


def test_scope_strings_in_either_vocabulary_name_the_same_scope() -> None:
    a = parse_scope("/providers/Microsoft.Management/managementGroups/retail/")
    b = parse_scope("/providers/Vendor.Management/managementGroups/retail")
    assert a == b and a.kind == "managementGroup"
    assert a.path("Vendor") == "/providers/Vendor.Management/managementGroups/retail"
    rid = parse_scope("/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg/"
                      "providers/Microsoft.Sql/servers/s1/databases/db1")
    assert rid.kind == "resource" and rid.resource_group == "rg"
    assert rid.path("Vendor").endswith("/providers/Vendor.Sql/servers/s1/databases/db1")
