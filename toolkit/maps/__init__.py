"""Location, routing, traffic and weather services (spec 2).

One function per operation, each returning a GeoDataFrame in EPSG:4326.
"""
