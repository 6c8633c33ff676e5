"""The sandbox's identity interface (spec 3 §4.1)."""
