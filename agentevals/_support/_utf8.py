"""Text that UTF-8 can carry: the one mending the stores and the judge's requests share."""

from __future__ import annotations


def mend_utf8(text: str) -> str:
    """``text`` itself when UTF-8 encodes it; else a copy where a surrogate pair split over two code
    points is joined and a lone surrogate (text cut inside a UTF-16 pair) becomes U+FFFD.

    >>> mend_utf8("cut \\ud83d") == "cut \\ufffd", mend_utf8("pair \\ud83d\\ude00") == "pair \\U0001f600"
    (True, True)
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
