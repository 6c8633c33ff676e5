"""The sandbox's resource manager (spec 1): one module per service area."""
