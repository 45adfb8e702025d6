"""Where score records go: one ``Sink`` protocol (async batch ``write`` + ``close``) and its implementations.

>>> from agentevals.sinks import MemorySink, SQLiteSink, LoggingSink
>>> sinks = [SQLiteSink("agentevals.db"), LoggingSink(), MemorySink()]
"""

from agentevals._store._row import COLUMNS, TABLE, record_to_row
from agentevals.sinks._callback import CallbackSink
from agentevals.sinks._errors import PartialWriteError, SinkConfigError, is_permanent
from agentevals.sinks._jsonl import JsonlSink
from agentevals.sinks._langfuse import LangfuseSink
from agentevals.sinks._langsmith import LangSmithSink
from agentevals.sinks._logging import LoggingSink
from agentevals.sinks._memory import MemorySink
from agentevals.sinks._otel import OTelSink
from agentevals.sinks._postgres import PostgresSink
from agentevals.sinks._protocol import Sink, as_sink
from agentevals.sinks._replay import areplay, replay
from agentevals.sinks._retry import DeadLetter, RetryPolicy
from agentevals.sinks._sqlite import SQLiteSink

__all__ = [
    "COLUMNS",
    "TABLE",
    "CallbackSink",
    "DeadLetter",
    "JsonlSink",
    "LangSmithSink",
    "LangfuseSink",
    "LoggingSink",
    "MemorySink",
    "OTelSink",
    "PartialWriteError",
    "PostgresSink",
    "RetryPolicy",
    "SQLiteSink",
    "Sink",
    "SinkConfigError",
    "areplay",
    "as_sink",
    "is_permanent",
    "record_to_row",
    "replay",
]
