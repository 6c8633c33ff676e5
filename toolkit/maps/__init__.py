"""Location, routing, traffic and weather services (spec 2): one function per operation, each
returning a GeoDataFrame in EPSG:4326."""
