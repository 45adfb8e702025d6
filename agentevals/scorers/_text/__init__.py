"""Pure text algorithms behind the code-based scorers (no dependency on the rest of agentevals)."""

from agentevals.scorers._text.coverage import coverage, missing_elements
from agentevals.scorers._text.dice import dice_similarity
from agentevals.scorers._text.diff import TextDiff, textual_difference
from agentevals.scorers._text.elements import extract_elements
from agentevals.scorers._text.keywords import extract_keywords
from agentevals.scorers._text.sentiment import comparative_sentiment, sentence_split

__all__ = [
    "TextDiff",
    "comparative_sentiment",
    "coverage",
    "dice_similarity",
    "extract_elements",
    "extract_keywords",
    "missing_elements",
    "sentence_split",
    "textual_difference",
]
