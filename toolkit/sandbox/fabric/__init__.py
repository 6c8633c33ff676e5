"""The sandbox's eventstream service (spec 3 §4.2) and its long-running operations."""
