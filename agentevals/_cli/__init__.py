"""The command line's own commands, each in a module of its own and registered by ``agentevals.cli``."""
