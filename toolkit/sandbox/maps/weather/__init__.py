"""Weather (spec 2 §2.5-2.7, §4.5-4.7) over the maps world (Andorra).

Current air quality, daily and hourly air-quality forecasts and severe weather alerts, answered
anywhere the real service covers.

**Air quality** is a deterministic field over space and time:

* *where*: a 100 m grid over the maps world built from the real road network and places
  (OpenStreetMap contributors, ODbL): emissions along the roads weighted by class (the CG-1/CG-2
  valley trunk roads most), spread over a few hundred metres, plus the towns and villages in the
  valley floors (heating, streets), spread over a kilometre. Away from them (the mountains, and
  anywhere else on Earth) the air is the regional background;
* *when* (local time, Europe/Andorra): road traffic with the same rush hours as the traffic
  incidents (weekdays 07:30-10:30 and 16:30-19:30...), heating in the morning and evening, ozone
  made by sunshine and highest in the afternoon (and eaten by the traffic's NO in town), day to
  day weather, and every ten days a multi-day stagnation *episode* (a winter inversion) that
  multiplies what is emitted in the valleys;
* *indices*: each pollutant's concentration maps to the global index (0-250+) by piecewise
  linear breakpoints; the global index of a reading is the **maximum** of its pollutants', that
  pollutant is the dominant one, and the category and colour follow exactly from the bands of
  §2.5 (upper limits 20, 50, 100, 150, 250 inclusive). ``index`` is the dominant pollutant's
  index on the local regulator's scale.

Current readings are the field at the top of the current hour; the hourly forecast is the field
at each hour from the top of the current hour on (so its first hour is the current reading); the
daily forecast of a day is, per pollutant, the highest hourly index of that local day, so a day's
forecast always agrees with (is at least) each of its hours.

**Severe alerts** come from the national provider ("Meteo Andorra"): in each ten-day cycle a snow
warning, a wind warning, an air-quality alert over the valley parishes during the episode and a
black-ice advisory, each over several parishes, with per-area status timelines that move through
the eight keywords (New, Update, Continue, Extend, Upgrade, Correct, Cancel, Expire) over the
sandbox clock; ended or cancelled areas stay listed for two hours. Details are in Catalan (the
provider's language, ``ca-AD``) whatever ``language`` asks.

**Coverage**: land, inland seas and the ocean within about 50 nautical miles of a coast (a
Natural Earth 1:110m land mask, public domain); farther out at sea the service answers 400 in
the ErrorResponse shape with ``x-vendor-error-code``.

The package keeps the simulation apart from the HTTP side: :mod:`.world` is the air-quality field,
the cycles, episodes and alerts (pure functions of the seed, the place and the instant), and
:mod:`.handlers` parses the requests, checks them as the service does and answers with the
world's records.
"""
