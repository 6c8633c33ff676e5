"""The sandbox's policy insights: the world (:mod:`.world`) and its operations (:mod:`.handlers`).

The world holds definitions, assignments, resources and their evaluation history; the operations
read it.
"""
