"""Data the toolkit ships, and its loaders: the map of Andorra derived from OpenStreetMap.

Why a package of its own: the plots draw this map as a background and the widgets place names
with it against any connection, while the sandbox builds its road graph and its search index
from the very same files. It is not a service (so not under ``arm/``, ``maps/``...), it knows no
HTTP (so not ``_core``), it is not a fact of the specification (so not ``_spec``) and it must
not live in the sandbox, which nothing outside it imports. The files sit beside their loader,
inside the package, so an installed toolkit finds them; ``data/README.md`` tells where they come
from and under which licence, and ``scripts/derive_osm.py`` makes them.
"""
