"""Resource manager services (spec 1): policy insights, resources, clusters, support and more."""
