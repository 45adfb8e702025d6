"""Forwarding inside the agent (``ScoringEngine(broker=...)``): the broker options, the message codec,
the broker client, the forwarder, the spool that holds runs until the broker confirmed them, and masking
before a run leaves the process. Imports nothing of the engine outside this folder: the engine hands
the forwarder a ``RunSource``."""
