"""Eventstream service (spec 3): eventstream creation, one or many."""
