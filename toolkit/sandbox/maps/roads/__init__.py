"""The road network behind the maps sandbox: a real graph of Andorra's drivable roads.

It is in four modules, one idea each.

* :mod:`.network`: the graph itself, built from the bundled OpenStreetMap data
  (:mod:`toolkit._data.andorra`, (c) OpenStreetMap contributors, ODbL) on the first maps request
  and cached per process: directed arcs (``oneway`` honoured), speeds from ``maxspeed`` or, when
  untagged, from the road class, truck and ``avoid`` restrictions, arc costs with traffic
  factors, and nearest roads (a shapely STRtree over the edges in a local metric projection).
* :mod:`.routing`: shortest and fastest paths (A* on the arcs) and alternatives (penalising the
  arcs of the routes found so far).
* :mod:`.matching`: map matching of GPS traces (a hidden-Markov model solved with Viterbi:
  candidates within a few tens of metres, emission by distance to the road, transition by how
  well the road distance between consecutive candidates agrees with the straight distance),
  interpolation along the matched path and the speed limits of the matched roads.
* :mod:`.reach`: the roads a one-to-many search (:func:`.routing.spread`) reaches within a time
  or distance budget, and the area around them (a reachable range).

Routing and matching are functions of a :class:`~.network.RoadNetwork`, so that the graph knows
nothing of the questions asked of it.
"""
