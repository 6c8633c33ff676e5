"""Identity interface (spec 3): authentication-strength usage and the audit built on it."""
