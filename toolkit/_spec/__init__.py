"""Facts of the services, as data only: one home per family.

Enumerations, limits, patterns, api-versions, colours and the vocabulary of each cloud are
written once here. The client (``toolkit.arm``, ``toolkit.maps``...), the plots and the sandbox
import them; each side keeps its own checking code, so the sandbox's checks stay independent of
the client's and a wrong rule on one side can be caught by a test against the other.

Nothing here does I/O or imports anything beyond the standard library.
"""
