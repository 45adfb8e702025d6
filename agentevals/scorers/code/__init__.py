"""Code scorers: deterministic text, matching and tool-call scorers (no LLM), and the quick checks."""

from agentevals.scorers.code import _checks as checks
from agentevals.scorers.code._completeness import create_completeness_scorer
from agentevals.scorers.code._content_similarity import create_content_similarity_scorer
from agentevals.scorers.code._keyword_coverage import create_keyword_coverage_scorer
from agentevals.scorers.code._matching import (
    create_exact_match_scorer,
    create_includes_scorer,
    create_json_match_scorer,
    create_levenshtein_scorer,
    create_regex_scorer,
)
from agentevals.scorers.code._textual_difference import create_textual_difference_scorer
from agentevals.scorers.code._tone import create_tone_scorer
from agentevals.scorers.code._tool_call_accuracy import create_tool_call_accuracy_scorer_code

__all__ = [
    "checks",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_exact_match_scorer",
    "create_includes_scorer",
    "create_json_match_scorer",
    "create_keyword_coverage_scorer",
    "create_levenshtein_scorer",
    "create_regex_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer_code",
]
