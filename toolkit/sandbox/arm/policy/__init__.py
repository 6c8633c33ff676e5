"""The sandbox's policy insights: the world (:mod:`.world`: definitions, assignments, resources
and their evaluation history) and the HTTP operations over it (:mod:`.handlers`).
"""
