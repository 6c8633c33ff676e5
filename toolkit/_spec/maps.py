"""Facts of the maps services (spec 2).

Api-versions, the enumerations of search, routing, traffic and weather, their limits, and the
air-quality colour scale.

Data only: the client (``toolkit.maps``, its schemas included), the plots
(``toolkit.plot``) and the sandbox (``toolkit.sandbox.maps``) read these; each side writes its
own checks.
"""

from __future__ import annotations

__all__ = [
    "AIR_QUALITY_BANDS",
    "AIR_QUALITY_CATEGORIES",
    "AIR_QUALITY_COLORS",
    "AIR_QUALITY_HOURLY_DURATIONS",
    "ALERT_STATUSES",
    "AUTOCOMPLETE_TYPES",
    "AUTOCOMPLETE_TYPE_GROUPS",
    "COUNTRY_CODE_PATTERN",
    "DOMINANT_POLLUTANTS",
    "GEOCODE_API_VERSIONS",
    "GEOCODE_CONFIDENCE",
    "GEOCODE_MATCH_CODES",
    "GEOCODE_TOP",
    "GEOCODE_TYPES",
    "INCIDENT_SEVERITIES",
    "INCIDENT_TYPES",
    "MATRIX_ASYNC_LIMITS",
    "MATRIX_AVOID",
    "MATRIX_OPTIMIZE",
    "MATRIX_REGION_KM",
    "MATRIX_SYNC_LIMITS",
    "MATRIX_TIME_WORDS",
    "MATRIX_TRAFFIC",
    "MATRIX_TRAVEL_MODES",
    "POLLUTANT_SHORT_NAMES",
    "POLLUTANT_TYPES",
    "RANGE_AVOID",
    "RANGE_MAX_DISTANCE_M",
    "RANGE_MAX_TIME_S",
    "REVERSE_GEOCODE_BATCH_SIZE",
    "REVERSE_GEOCODE_TYPES",
    "ROUTE_API_VERSIONS",
    "ROUTE_AVOID",
    "ROUTE_BATCH_SIZE",
    "ROUTE_OPERATION_STATUSES",
    "ROUTE_OPTIMIZE",
    "ROUTE_OUTPUT_OPTIONS",
    "ROUTE_TRAVEL_MODES",
    "SEARCH_API_VERSIONS",
    "SNAP_MAX_GAP_M",
    "SNAP_MAX_POINTS",
    "TRAFFIC_API_VERSIONS",
    "TRAFFIC_CONGESTION",
    "WEATHER_API_VERSIONS",
]

# -------------------------------------------------------------------------------- api-versions
# The versions each service accepts, the newest first: the client sends the first by default.

SEARCH_API_VERSIONS = ("2026-01-01", "2025-06-01-preview")
#: Geocoding (``GET /geocode``), Search's current stable version.
GEOCODE_API_VERSIONS = ("2025-01-01",)
ROUTE_API_VERSIONS = ("2025-01-01",)
TRAFFIC_API_VERSIONS = ("2025-01-01",)
WEATHER_API_VERSIONS = ("1.1",)

# ------------------------------------------------------------------------------------- search

#: The groups ``resultTypeGroups`` accepts.
AUTOCOMPLETE_TYPE_GROUPS = ("Address", "Place")
#: The enumeration ``resultTypes`` accepts (spec 2 §2.1).
AUTOCOMPLETE_TYPES = (
    "Address", "AdminDivision1", "AdminDivision2", "AdminDivision3", "AdministrativeBuilding",
    "Airport", "AirportTerminal", "AmusementPark", "AncientSite", "Aquarium", "Archipelago",
    "Basin", "Battlefield", "Bay", "Beach", "Bridge", "BusinessStructure", "Camp", "Canal",
    "Casino", "Castle", "Cave", "Cemetery", "Channel", "Church", "Cliff", "Coast",
    "CommunityCenter", "Continent", "CountryRegion", "Crater", "CulturalRegion", "Dam", "Delta",
    "Desert", "DrainageBasin", "Dune", "FacilityStructure", "FerryTerminal",
    "FinancialStructure", "FireStation", "Forest", "Fort", "Garden", "Geyser", "Glacier",
    "GolfCourse", "GreaterPopulatedPlace", "HigherEducationFacility", "HistoricalSite",
    "Hospital", "HotSpring", "Ice", "IndigenousPeoplesReserve", "IndustrialStructure", "Island",
    "Isthmus", "Lake", "LandArea", "Landform", "LandmarkBuilding", "Library", "Lighthouse",
    "Marina", "Market", "MedicalStructure", "MetroStation", "MilitaryBase", "Mission",
    "Monument", "Mosque", "Mountain", "MountainRange", "MultiModalStation", "Museum",
    "NauticalStructure", "Neighborhood", "Oasis", "ObservationPoint", "Ocean", "OfficeBuilding",
    "Other", "Park", "ParkingStructure", "Pass", "Peninsula", "Plain", "Planet", "Plateau",
    "Playground", "PlayingField", "Pole", "PoliticalUnit", "PopulatedPlace", "Port",
    "Postcode1", "Promontory", "RaceTrack", "RailwayStation", "Reef", "ReligiousStructure",
    "Reserve", "ResidentialStructure", "River", "RoadBlock", "Ruin", "ScientificResearchBase",
    "Sea", "SeaplaneLandingArea", "Shrine", "SkiArea", "Spring", "Stadium",
    "StatisticalDistrict", "Temple", "Theater", "TouristRailway", "TouristStructure",
    "Trailhead", "TransportationStructure", "Tunnel", "Valley", "Volcano", "Walkway", "Wall",
    "Waterfall", "WaterFeature", "Wetland", "Winery", "Zoo",
)
#: The entity types geocoding documents for ``properties.type`` (points of interest come back
#: with their own types, e.g. ``PointOfInterest`` or ``LandmarkBuilding``).
GEOCODE_TYPES = ("Address", "RoadBlock", "RoadIntersection", "Neighborhood", "PopulatedPlace",
                 "Postcode1", "AdminDivision1", "AdminDivision2", "CountryRegion")
#: ``properties.confidence``, least to most sure.
GEOCODE_CONFIDENCE = ("Low", "Medium", "High")
#: ``properties.matchCodes`` values.
GEOCODE_MATCH_CODES = ("Good", "Ambiguous", "UpHierarchy")
#: ``top`` of geocoding: fewest and most results (default 5).
GEOCODE_TOP = (1, 20)
#: The entity types reverse geocoding's ``resultTypes`` accepts, the most specific first (the
#: service returns the most specific one it finds; Search 2025-01-01 ``search.json``,
#: ``ReverseGeocodingResultTypes``).
REVERSE_GEOCODE_TYPES = ("Address", "Neighborhood", "PopulatedPlace", "Postcode1",
                         "AdminDivision1", "AdminDivision2", "CountryRegion")
#: Points of one ``POST /reverseGeocode:batch`` request (at least 1, at most 100).
REVERSE_GEOCODE_BATCH_SIZE = 100
#: ISO 3166-1 alpha-2 country codes (``countryRegion``).
COUNTRY_CODE_PATTERN = r"^[A-Za-z]{2}$"

# ------------------------------------------------------------------------------------ routing

ROUTE_OPTIMIZE = ("fastestWithoutTraffic", "fastestWithTraffic", "shortest")
ROUTE_TRAVEL_MODES = ("driving", "truck")
ROUTE_AVOID = ("limitedAccessHighways", "tollRoads", "ferries", "tunnels", "borderCrossings",
               "lowEmissionZones", "unpavedRoads")
ROUTE_OUTPUT_OPTIONS = ("routePath", "itinerary", "routeSummary", "regionTravelSummary")
#: Queries in one route-directions batch request.
ROUTE_BATCH_SIZE = 100
#: Points of one snap-to-roads request, and the longest gap between consecutive points.
SNAP_MAX_POINTS = 5000
SNAP_MAX_GAP_M = 6000.0

# The route matrix and the reachable range (Route 2025-01-01: ``POST /route/matrix``,
# ``/route/matrix:async``, ``/route/operations/{id}``, ``POST /route/range``), from the
# specification ``specification/maps/data-plane/Route/stable/2025-01-01/route.json`` of
# Azure/azure-rest-api-specs (commit 027abe5f; its enumerations and the limit tables of the
# matrix operations' descriptions).

#: ``travelMode`` of a matrix (``RouteMatrixTravelModeEnum``), the default first.
MATRIX_TRAVEL_MODES = ("driving", "truck", "walking")
#: ``optimizeRoute`` of a matrix, the default first: the synchronous matrix takes ``fastest``
#: only (``RouteMatrixOptimizeRouteEnum``), the asynchronous one ``shortest`` too
#: (``RouteMatrixAsyncOptimizeRouteEnum``).
MATRIX_OPTIMIZE = ("fastest", "shortest")
#: ``traffic`` of a matrix (``RouteMatrixTrafficEnum``), the default first; ``live`` needs a
#: time (it may not be used with ``any``).
MATRIX_TRAFFIC = ("historical", "live")
#: ``avoid`` of a matrix (``RouteMatrixAvoidEnum``).
MATRIX_AVOID = ("tollRoads", "unpavedRoads")
#: The words ``departAt``/``arriveAt`` of a matrix take beside a date-time: ``any`` (the default:
#: the time does not matter) and ``now`` (``departAt`` only: each cell at its processing time).
MATRIX_TIME_WORDS = ("any", "now")
#: The synchronous matrix's rows of limits, as ``(cells, origins, destinations, condition)``: a
#: request is processed under the first row it fits. ``options``: any parameters; ``region``:
#: cells outside a box of :data:`MATRIX_REGION_KM` are ``OUT_OF_REGION``; ``defaults``:
#: ``departAt``/``arriveAt`` ``any``, ``traffic`` ``historical``, ``travelMode`` driving or
#: truck and no other parameter.
MATRIX_SYNC_LIMITS = ((100, 100, 100, "options"), (200, 200, 200, "region"),
                      (2500, 1000, 1000, "defaults"))
#: The asynchronous matrix's rows of limits (``defaults`` also means ``optimizeRoute``
#: ``fastest``).
MATRIX_ASYNC_LIMITS = ((2500, 1000, 1000, "region"), (50_000, 10_000, 10_000, "defaults"))
#: Side (km) of the axis-aligned box the points of a ``region`` matrix must lie in.
MATRIX_REGION_KM = 400
#: ``status`` of an asynchronous route operation (``RouteOperation``): running, then done.
ROUTE_OPERATION_STATUSES = ("NotStarted", "Running", "Completed", "Failed")
#: ``avoid`` of a reachable range (``RouteRangeAvoidEnum``).
RANGE_AVOID = ("limitedAccessHighways", "tollRoads", "ferries", "tunnels", "borderCrossings",
               "lowEmissionZones", "unpavedRoads", "carpools", "carTrains")
#: The largest budgets of a reachable range: ``timeBudgetInSec`` and ``distanceBudgetInMeters``
#: (one of the two, not both).
RANGE_MAX_TIME_S = 21_600.0
RANGE_MAX_DISTANCE_M = 500_000.0

# ------------------------------------------------------------------------------------ traffic

INCIDENT_TYPES = ("Accident", "Congestion", "DisabledVehicle", "MassTransit", "Miscellaneous",
                  "OtherNews", "PlannedEvent", "RoadHazard", "Construction", "Alert", "Weather")
#: Incident severities, mildest first (the service's codes 1 to 4).
INCIDENT_SEVERITIES = ("LowImpact", "Minor", "Moderate", "Serious")
TRAFFIC_CONGESTION = ("Mild", "Medium")

# ------------------------------------------------------------------------------------ weather

#: Air-quality categories, best first.
AIR_QUALITY_CATEGORIES = ("Excellent", "Fair", "Poor", "Unhealthy", "Very unhealthy",
                          "Dangerous")
#: Upper limits of the global index of each category but the last (spec 2 §2.5).
AIR_QUALITY_BANDS = (20.0, 50.0, 100.0, 150.0, 250.0)
#: The colour of each category (the service's ``categoryColor``; the plots use the same scale).
AIR_QUALITY_COLORS = {
    "Excellent": "#00E400",
    "Fair": "#FFC300",
    "Poor": "#FF7E00",
    "Unhealthy": "#FF0000",
    "Very unhealthy": "#8F3F97",
    "Dangerous": "#7E0023",
}
DOMINANT_POLLUTANTS = ("Carbon Monoxide", "Nitrogen Dioxide", "Ozone", "Particulate Matter 2.5",
                       "Particulate Matter 10", "Sulfur Dioxide")
POLLUTANT_TYPES = ("CO", "NO2", "O3", "PM2.5", "PM10", "SO2")
#: A dominant pollutant's name -> its pollutant type.
POLLUTANT_SHORT_NAMES = dict(zip(DOMINANT_POLLUTANTS, POLLUTANT_TYPES, strict=True))
#: ``duration`` of the hourly forecast: hours from now (Weather 1.1 ``HourlyDuration``,
#: ``weather.json``; the service's default is 1).
AIR_QUALITY_HOURLY_DURATIONS = (1, 12, 24, 48, 72, 96)
#: Alert statuses (the common alerting protocol's message types).
ALERT_STATUSES = ("New", "Update", "Continue", "Extend", "Upgrade", "Correct", "Cancel",
                  "Expire")
