"""``agentevals view`` (a local read-only web app over a store) and ``agentevals report --html``."""
