"""Hours as the store counts them: the rollup, the score histogram and the drops table key their rows by
the UTC hour of a timestamp (``YYYY-MM-DDTHH``).

A naive datetime means UTC, here and in every read of the store: the stored timestamps are UTC, and
``--since`` reads an ISO time without an offset as UTC, so a moment lands in the same hour whichever
read is given it, whatever the machine's time zone.

>>> moment = datetime(2026, 1, 2, 3, 30)
>>> hour_bucket(moment), hour_after(moment).isoformat()
('2026-01-02T03', '2026-01-02T04:00:00+00:00')
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

#: The ``strftime`` format of an hour bucket.
HOUR_FORMAT = "%Y-%m-%dT%H"


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive ``moment`` is taken to be in UTC already (never in local time).

    >>> as_utc(datetime(2026, 1, 2, 3, 30)).isoformat()
    '2026-01-02T03:30:00+00:00'
    """
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def hour_start(moment: datetime) -> datetime:
    """The start of the UTC hour ``moment`` falls in."""
    return as_utc(moment).replace(minute=0, second=0, microsecond=0)


def hour_after(moment: datetime) -> datetime:
    """The first whole UTC hour at or after ``moment``."""
    start = hour_start(moment)
    return start if start == as_utc(moment) else start + timedelta(hours=1)


def hour_bucket(moment: datetime) -> str:
    """The bucket (``YYYY-MM-DDTHH``) of the UTC hour ``moment`` falls in."""
    return as_utc(moment).strftime(HOUR_FORMAT)


def bucket_start(bucket: str) -> datetime:
    """The first moment of the hour ``bucket`` (``YYYY-MM-DDTHH``) names.

    >>> bucket_start("2026-01-02T03").isoformat()
    '2026-01-02T03:00:00+00:00'
    """
    return datetime.strptime(bucket, HOUR_FORMAT).replace(tzinfo=UTC)
