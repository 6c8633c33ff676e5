"""Traffic incidents (spec 2 §2.4, §4.4) placed on Andorra's real roads.

What is happening at a moment is a pure function of the world's seed and the sandbox clock,
taken in five-minute steps (so answers are stable within a step and repeatable across runs):

* **construction** zones along stretches of primary and secondary roads, each lasting weeks
  (one of them closes its road);
* **accidents** at junctions of the primary roads, a few an hour, lasting 30 to 90 minutes;
* **disabled vehicles** and **road hazards** on any main road, lasting up to an hour;
* **congestion** on the busy primary roads through the towns at rush hours (weekdays 07:30-10:30
  and 16:30-19:30 local time, Saturdays 10:00-13:30 and 17:00-19:00, Sundays 17:00-20:00);
* **weather**: snow on the road over the Envalira pass on some winter days.

Each incident slows (or closes) the road edges it covers; ``fastestWithTraffic`` routes use
those factors. Incident ids are 64-bit integers above 2^53, as the service's are.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from toolkit._core.geo import bbox_size_m
from toolkit._spec.maps import INCIDENT_TYPES, TRAFFIC_API_VERSIONS
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.roads.network import RoadNetwork, network

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "INCIDENT_TYPES", "Incident", "incidents_at", "register",
           "traffic_factors"]

API_VERSIONS = TRAFFIC_API_VERSIONS
LOCAL = ZoneInfo("Europe/Andorra")
ID_BASE = 18_000_000_000_000_000

#: Busy periods, local time: weekday (0 = Monday) -> [(start hour, end hour)].
RUSH = {d: [(7.5, 10.5), (16.5, 19.5)] for d in range(5)}
RUSH[5] = [(10.0, 13.5), (17.0, 19.0)]
RUSH[6] = [(17.0, 20.0)]

MAIN_REFS = ("CG-1", "CG-2", "CG-3")


@dataclass
class Incident:
    """One incident: its feature fields and the edges it slows (edge -> speed factor)."""

    key: str
    type: str
    severity: int
    start: datetime
    end: datetime
    modified: datetime
    arcs: list[int]
    factor: float
    closed: bool = False
    jam: bool = False
    delay: float = 0.0
    title: str = ""
    description: dict[str, str] = field(default_factory=dict)
    start_point: tuple[float, float] = (0.0, 0.0)
    end_point: tuple[float, float] = (0.0, 0.0)

    @property
    def id(self) -> int:
        """Give the incident's numeric id, derived from its key (so the same in every run)."""
        digest = hashlib.sha256(self.key.encode()).digest()
        return ID_BASE + int.from_bytes(digest[:8], "big") % (2**52)


def _candidates(net: RoadNetwork, *, classes: tuple[str, ...], towns: tuple[str, ...] | None = None,
                refs: tuple[str, ...] | None = None) -> list[int]:
    arcs: list[int] = []
    for e in range(net.n_edges):
        way = net.way_of(e)
        if net.highway[e] not in classes or net.edge_len[e] < 20:
            continue
        if towns is not None and way.get("locality") not in towns:
            continue
        if refs is not None and way.get("ref") not in refs:
            continue
        arcs.extend(a for a in (2 * e, 2 * e + 1) if net.arc_ok[a])
    return arcs


def _walk(net: RoadNetwork, arc: int, length: float) -> list[int]:
    """Arcs from ``arc`` onward along the same road (same ref or name) for ``length`` metres."""
    way = net.way_of(arc >> 1)
    label = way.get("ref") or way.get("name")
    arcs, total, seen = [arc], float(net.arc_len[arc]), {arc >> 1}
    while total < length:
        head = net.arc_head(arcs[-1])
        nxt = [a for a in net.out[head] if a >> 1 not in seen and
               (net.way_of(a >> 1).get("ref") or net.way_of(a >> 1).get("name")) == label]
        if not nxt:
            break
        arcs.append(nxt[0])
        seen.add(nxt[0] >> 1)
        total += float(net.arc_len[nxt[0]])
    return arcs


def _ends(net: RoadNetwork, arcs: list[int]) -> tuple[tuple[float, float], tuple[float, float]]:
    a, b = arcs[0], arcs[-1]
    s, e = net.lonlat[net.arc_tail(a)], net.lonlat[net.arc_head(b)]
    return (float(s[0]), float(s[1])), (float(e[0]), float(e[1]))


def _label(net: RoadNetwork, arcs: list[int]) -> tuple[str, str, str, str]:
    way = net.way_of(arcs[0] >> 1)
    ref, name = way.get("ref"), way.get("name")
    title = " / ".join(x for x in (ref, name) if x) or "local road"
    road = ref or name or "a local road"
    start = net.way_of(arcs[0] >> 1).get("locality") or "?"
    end = net.way_of(arcs[-1] >> 1).get("locality") or start
    return title, road, start, end


def _length(net: RoadNetwork, arcs: list[int]) -> float:
    return float(sum(net.arc_len[a] for a in arcs))


def _free_seconds(net: RoadNetwork, arcs: list[int]) -> float:
    return float(sum(net.arc_seconds(a, "driving") for a in arcs))


_TEXT = {
    "Construction": {"en": "Roadworks on {road} {where}{closed}.",
                     "ca": "Obres a {road} {where}{closed}.",
                     "fr": "Travaux sur {road} {where}{closed}.",
                     "es": "Obras en {road} {where}{closed}."},
    "Accident": {"en": "Accident on {road} at {a}; {lanes}.",
                 "ca": "Accident a {road} a {a}; {lanes}.",
                 "fr": "Accident sur {road} à {a} ; {lanes}.",
                 "es": "Accidente en {road} en {a}; {lanes}."},
    "DisabledVehicle": {"en": "Disabled vehicle on {road} near {a}.",
                        "ca": "Vehicle avariat a {road} prop de {a}.",
                        "fr": "Véhicule en panne sur {road} près de {a}.",
                        "es": "Vehículo averiado en {road} cerca de {a}."},
    "RoadHazard": {"en": "Object on the road on {road} near {a}.",
                   "ca": "Objecte a la calçada a {road} prop de {a}.",
                   "fr": "Objet sur la chaussée sur {road} près de {a}.",
                   "es": "Objeto en la calzada en {road} cerca de {a}."},
    "Congestion": {"en": "Slow traffic on {road} {where}.",
                   "ca": "Trànsit lent a {road} {where}.",
                   "fr": "Circulation ralentie sur {road} {where}.",
                   "es": "Tráfico lento en {road} {where}."},
    "Weather": {"en": "Snow on {road} over the Envalira pass; chains advised.",
                "ca": "Neu a {road} al port d'Envalira; es recomanen cadenes.",
                "fr": "Neige sur {road} au port d'Envalira ; chaînes conseillées.",
                "es": "Nieve en {road} en el puerto de Envalira; se recomiendan cadenas."},
}
_CLOSED = {"en": ", road closed", "ca": ", carretera tallada", "fr": ", route fermée",
           "es": ", carretera cortada"}
_WHERE = {"en": ("between {a} and {b}", "in {a}"), "ca": ("entre {a} i {b}", "a {a}"),
          "fr": ("entre {a} et {b}", "à {a}"), "es": ("entre {a} y {b}", "en {a}")}
_LANES = {"en": ("one lane closed", "road blocked"), "ca": ("un carril tallat", "via tallada"),
          "fr": ("une voie fermée", "route bloquée"), "es": ("un carril cortado", "vía cortada")}


def _describe(kind: str, net: RoadNetwork, arcs: list[int], closed: bool = False
              ) -> tuple[str, dict[str, str]]:
    title, road, a, b = _label(net, arcs)
    out = {}
    for lang, text in _TEXT[kind].items():
        where = _WHERE[lang][1 if a == b else 0].format(a=a, b=b)
        out[lang] = text.format(road=road, a=a, where=where,
                                closed=_CLOSED[lang] if closed else "",
                                lanes=_LANES[lang][1 if closed else 0])
    return title, out


def _make(net: RoadNetwork, key: str, kind: str, arcs: list[int], severity: int,
          start: datetime, end: datetime, modified: datetime, factor: float,
          closed: bool = False) -> Incident:
    title, text = _describe(kind, net, arcs, closed)
    free = _free_seconds(net, arcs)
    delay = 0.0 if closed else float(round(free * (1 / max(factor, 0.05) - 1), 0))
    s, e = _ends(net, arcs)
    return Incident(key, kind, severity, start, end, modified, arcs, 0.0 if closed else factor,
                    closed=closed, jam=kind == "Congestion" or (severity >= 3 and not closed),
                    delay=delay, title=title, description=text, start_point=s, end_point=e)


@lru_cache(maxsize=8)
def _constructions(seed: int, epoch: datetime) -> tuple[Incident, ...]:
    net = network()
    rng = random.Random(f"{seed}:maps:construction")
    cands = _candidates(net, classes=("primary", "secondary"))
    out = []
    for i in range(5):
        arc = rng.choice(cands)
        arcs = _walk(net, arc, rng.uniform(300, 1200))
        closed = i == 4 and net.highway[arc >> 1] == "secondary"
        start = epoch - timedelta(days=rng.randint(2, 20), hours=rng.randint(0, 23))
        end = epoch + timedelta(days=rng.randint(4, 40), hours=rng.randint(0, 23))
        out.append(_make(net, f"{seed}:construction:{i}", "Construction", arcs,
                         4 if closed else rng.choice((1, 2, 2, 3)), start, end,
                         start + timedelta(hours=rng.randint(1, 30)), rng.uniform(0.5, 0.7),
                         closed=closed))
    return tuple(out)


def _junction_arcs(net: RoadNetwork) -> list[int]:
    """Arcs of primary roads that end at a junction of three or more roads."""
    degree = [0] * len(net.lonlat)
    for u, v in zip(net.edge_u, net.edge_v, strict=True):
        degree[int(u)] += 1
        degree[int(v)] += 1
    return [a for a in _candidates(net, classes=("primary", "primary_link"))
            if degree[net.arc_head(a)] >= 3]


def _events(seed: int, kind: str, hour: datetime, net: RoadNetwork, junctions: list[int],
            mains: list[int]) -> list[Incident]:
    rng = random.Random(f"{seed}:maps:{kind}:{hour.isoformat()}")
    n = rng.choice((0, 1, 1, 2, 2, 3)) if kind == "Accident" else rng.choice((0, 0, 1, 1, 2))
    out = []
    for i in range(n):
        start = hour + timedelta(minutes=rng.randint(0, 59))
        if kind == "Accident":
            last = timedelta(minutes=rng.randint(30, 90))
            end_arc = rng.choice(junctions)
            # the queue builds upstream of the junction
            arcs = _walk_back(net, end_arc, rng.uniform(150, 500))
            severity = rng.choice((2, 3, 3, 4))
            closed = severity == 4 and rng.random() < 0.3
            factor = {2: 0.6, 3: 0.35, 4: 0.2}[severity]
        else:
            last = timedelta(minutes=rng.randint(15, 60))
            arcs = [rng.choice(mains)]
            severity, closed, factor = rng.choice((1, 1, 2)), False, rng.uniform(0.7, 0.9)
        out.append(_make(net, f"{seed}:{kind}:{hour.isoformat()}:{i}", kind, arcs, severity,
                         start, start + last, start + timedelta(minutes=rng.randint(1, 10)),
                         factor, closed=closed))
    return out


def _walk_back(net: RoadNetwork, arc: int, length: float) -> list[int]:
    arcs, total, seen = [arc], float(net.arc_len[arc]), {arc >> 1}
    while total < length:
        tail = net.arc_tail(arcs[0])
        into = [a for a in _incoming(net, tail) if a >> 1 not in seen]
        if not into:
            break
        arcs.insert(0, into[0])
        seen.add(into[0] >> 1)
        total += float(net.arc_len[into[0]])
    return arcs


@lru_cache(maxsize=1)
def _incoming_index() -> list[list[int]]:
    net = network()
    inc: list[list[int]] = [[] for _ in range(len(net.lonlat))]
    for arcs in net.out:
        for a in arcs:
            inc[net.arc_head(a)].append(a)
    for node in range(len(inc)):
        inc[node].sort(key=lambda a: -net.limit_kmh[a >> 1])
    return inc


def _incoming(net: RoadNetwork, node: int) -> list[int]:
    return _incoming_index()[node]


def _rush_strength(local: datetime) -> float:
    """0 outside the busy periods, rising to 1 at their middle."""
    h = local.hour + local.minute / 60
    best = 0.0
    for a, b in RUSH[local.weekday()]:
        if a <= h < b:
            mid, half = (a + b) / 2, (b - a) / 2
            best = max(best, 1 - abs(h - mid) / half * 0.6)
    return best


@lru_cache(maxsize=1)
def _busy_stretches(seed: int) -> tuple[tuple[int, ...], ...]:
    net = network()
    rng = random.Random(f"{seed}:maps:busy")
    out = []
    for town in ("Andorra la Vella", "les Escaldes", "Encamp", "Sant Julià de Lòria",
                 "La Massana"):
        cands = _candidates(net, classes=("primary",), towns=(town,), refs=MAIN_REFS)
        if not cands:
            continue
        arcs = _walk(net, rng.choice(sorted(cands)), rng.uniform(700, 1600))
        out.append(tuple(arcs))
    return tuple(out)


@lru_cache(maxsize=64)
def _incidents_cached(seed: int, epoch: datetime, step: datetime) -> tuple[Incident, ...]:
    net = network()
    active: list[Incident] = [c for c in _constructions(seed, epoch) if c.start <= step < c.end]
    junctions = sorted(_junction_arcs_cached())
    mains = sorted(_candidates(net, classes=("primary", "secondary")))
    hour0 = step.replace(minute=0, second=0, microsecond=0)
    for back in range(0, 3):
        hour = hour0 - timedelta(hours=back)
        for kind in ("Accident", "DisabledVehicle", "RoadHazard"):
            active.extend(i for i in _events(seed, kind, hour, net, junctions, mains)
                          if i.start <= step < i.end)
    local = step.astimezone(LOCAL)
    strength = _rush_strength(local)
    if strength > 0:
        window_start = step.replace(second=0, microsecond=0)
        for k, arcs in enumerate(_busy_stretches(seed)):
            rng = random.Random(f"{seed}:maps:jam:{local.date()}:{k}")
            level = strength * rng.uniform(0.6, 1.0)
            if level < 0.35:
                continue
            factor = max(0.2, 1 - 0.75 * level)
            severity = 1 if factor > 0.7 else 2 if factor > 0.5 else 3
            start = window_start - timedelta(minutes=rng.randint(20, 60))
            active.append(_make(net, f"{seed}:jam:{local.date()}:{k}:{local.hour}",
                                "Congestion", list(arcs), severity, start,
                                step + timedelta(minutes=rng.randint(20, 50)), step, factor))
    if local.month in (11, 12, 1, 2, 3, 4):
        rng = random.Random(f"{seed}:maps:snow:{local.date()}")
        if rng.random() < 0.5:
            pass_arcs = [a for a in _candidates(net, classes=("primary",), refs=("CG-2",))
                         if net.way_of(a >> 1).get("locality") in ("Grau Roig", "Soldeu")]
            if pass_arcs:
                walk = _walk(net, sorted(pass_arcs)[0], 3000)
                day = datetime(local.year, local.month, local.day, tzinfo=LOCAL)
                start = day + timedelta(hours=rng.randint(0, 6))
                end = day + timedelta(hours=rng.randint(14, 23))
                if start <= step < end:
                    active.append(_make(net, f"{seed}:snow:{local.date()}", "Weather", walk, 3,
                                        start.astimezone(step.tzinfo),
                                        end.astimezone(step.tzinfo), start.astimezone(step.tzinfo),
                                        0.5))
    return tuple(active)


@lru_cache(maxsize=1)
def _junction_arcs_cached() -> tuple[int, ...]:
    return tuple(_junction_arcs(network()))


def _step(at: datetime) -> datetime:
    epoch_min = at.replace(second=0, microsecond=0)
    return epoch_min - timedelta(minutes=epoch_min.minute % 5)


def incidents_at(sandbox: SandboxView, at: datetime | None = None) -> tuple[Incident, ...]:
    """List the incidents active at a moment (default: the sandbox clock)."""
    at = at or sandbox.now()
    return _incidents_cached(sandbox.seed, sandbox.epoch, _step(at))


def traffic_factors(sandbox: SandboxView, at: datetime | None = None) -> dict[int, float]:
    """Edge -> speed factor (0 = closed) from the active incidents."""
    factors: dict[int, float] = {}
    for inc in incidents_at(sandbox, at):
        for arc in inc.arcs:
            e = arc >> 1
            factors[e] = min(factors.get(e, 1.0), inc.factor)
    return factors


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def feature(inc: Incident, language: str | None) -> dict[str, Any]:
    """Write the incident as the service's GeoJSON feature."""
    lang = (language or "en").split("-")[0].lower()
    text = inc.description.get(lang) or inc.description["en"]
    return {
        "type": "Feature",
        "id": inc.id,
        "geometry": {"type": "Point", "coordinates": [round(inc.start_point[0], 7),
                                                      round(inc.start_point[1], 7)]},
        "properties": {
            "startTime": _iso(inc.start), "endTime": _iso(inc.end),
            "lastModifiedTime": _iso(inc.modified),
            "description": text, "title": inc.title, "incidentType": inc.type,
            "severity": inc.severity, "delay": float(inc.delay),
            "endPoint": {"type": "Point", "coordinates": [round(inc.end_point[0], 7),
                                                          round(inc.end_point[1], 7)]},
            "isTrafficJam": inc.jam, "isRoadClosed": inc.closed,
        },
    }


def parse_bbox(text: str | None, name: str = "bbox") -> tuple[float, float, float, float]:
    """Parse a ``minLon,minLat,maxLon,maxLat`` query value, checked like the service does."""
    if not text:
        raise SandboxHTTPError(400, "BadRequest", f"The '{name}' parameter is required.")
    try:
        vals = [float(v) for v in text.split(",")]
    except ValueError:
        raise SandboxHTTPError(400, "BadRequest", f"The '{name}' parameter must be four "
                               "numbers: minLon,minLat,maxLon,maxLat.") from None
    if len(vals) != 4 or not all(math.isfinite(v) for v in vals):
        raise SandboxHTTPError(400, "BadRequest", f"The '{name}' parameter must be four "
                               "numbers: minLon,minLat,maxLon,maxLat.")
    w, s, e, n = vals
    if not (-180 <= w <= e <= 180 and -90 <= s <= n <= 90):
        raise SandboxHTTPError(400, "BadRequest", f"The '{name}' parameter is out of range or "
                               "not in the order minLon,minLat,maxLon,maxLat.")
    return w, s, e, n


def _incidents(request: Request) -> Reply:
    import shapely

    note_arrival(request, "traffic_incidents")
    bbox = parse_bbox(request.param("bbox"))
    w, s, e, n = bbox
    width, height = bbox_size_m(bbox)
    if min(width, height) < 12 or max(width, height) > 500_000 or e - w > 30 or n - s > 30:
        raise SandboxHTTPError(400, "BadRequest", "The bounding box must be at least 12 m and "
                               "at most 500,000 m (and 30 degrees) in width and height.")
    kinds = request.param("incidentType")
    wanted = None
    if kinds:
        wanted = {k.strip() for k in kinds.split(",") if k.strip()}
        bad = sorted(k for k in wanted if k not in INCIDENT_TYPES)
        if bad:
            raise SandboxHTTPError(400, "BadRequest", f"Unknown incidentType value(s) "
                                   f"{', '.join(bad)}; allowed: {', '.join(INCIDENT_TYPES)}.")
    area = shapely.box(w, s, e, n)
    net = network()
    out = []
    for inc in sorted(incidents_at(request.sandbox), key=lambda i: (i.start, i.id)):
        if wanted is not None and inc.type not in wanted:
            continue
        line = [net.lonlat[net.arc_tail(inc.arcs[0])]] + \
            [net.lonlat[net.arc_head(a)] for a in inc.arcs]
        geom = shapely.linestrings(line) if len(line) > 1 else shapely.points(line[0])
        if not area.intersects(geom):
            continue
        out.append(feature(inc, request.language))
    return Reply(200, {"type": "FeatureCollection", "features": out})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the traffic incident route."""
    router.add("GET", "/traffic/incident", _incidents, family="maps", api_versions=API_VERSIONS,
               name="traffic_incidents")
