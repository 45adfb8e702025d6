"""Redaction: mask personal data and secrets in every text a score record carries, before any sink.

>>> from agentevals.redaction import EMAIL, PHONE, mask
>>> redact = mask([EMAIL, PHONE])  # give it to ScoringEngine(..., redact=redact)
>>> redact.text("call +1 415 555 0100 or mail ann@example.com")
'call <redacted> or mail <redacted>'
"""

from agentevals._model._redact import API_KEY, CREDIT_CARD, EMAIL, PHONE, Masker, Redactor, mask, redact_text

__all__ = ["API_KEY", "CREDIT_CARD", "EMAIL", "PHONE", "Masker", "Redactor", "mask", "redact_text"]
