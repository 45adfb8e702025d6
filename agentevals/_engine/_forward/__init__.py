"""Forwarding inside the agent (``ScoringEngine(broker=...)``): the message codec, the forwarder, the
spool that holds runs until the broker confirmed them, and masking before a run leaves the process."""
