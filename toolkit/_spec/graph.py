"""Facts of the identity service (spec 3, authentication strengths).

Api-versions, the policy id pattern and the enumerations of usage, policies and conditional-access
states.

Data only: the client (``toolkit.graph``, its schemas included) and the sandbox
(``toolkit.sandbox.graph``) read these; each side writes its own checks.
"""

from __future__ import annotations

__all__ = [
    "API_VERSIONS",
    "CA_POLICY_STATES",
    "POLICY_ID_PATTERN",
    "STRENGTH_POLICY_TYPES",
    "STRENGTH_REQUIREMENTS",
]

#: The interface versions of the identity service; the usage query is documented on ``beta``.
API_VERSIONS = ("beta", "v1.0")
#: Authentication strength policy ids: 1 to 128 letters, digits, ``.``, ``_`` or ``-``.
POLICY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
#: What a conditional-access policy referencing a strength requires (``usage`` groups).
STRENGTH_REQUIREMENTS = ("mfa", "none")
STRENGTH_POLICY_TYPES = ("builtIn", "custom")
CA_POLICY_STATES = ("enabled", "disabled", "enabledForReportingButNotEnforced")
