"""General helpers that know nothing of agentevals: the shared event loop, log throttling, JSON and UTF-8
mending. Imports nothing of agentevals."""
