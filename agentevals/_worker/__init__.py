"""The `agentevals worker` program: a Dramatiq actor that scores the runs agents publish."""
