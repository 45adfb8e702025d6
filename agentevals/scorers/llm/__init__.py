"""LLM-judged prebuilt scorers: the judge labels, code computes the score."""

from agentevals.scorers.llm._answer_relevancy import AnswerRelevancyOptions, create_answer_relevancy_scorer
from agentevals.scorers.llm._answer_similarity import AnswerSimilarityOptions, create_answer_similarity_scorer
from agentevals.scorers.llm._bias import BiasOptions, create_bias_scorer
from agentevals.scorers.llm._claims import (
    FaithfulnessOptions,
    HallucinationOptions,
    create_faithfulness_scorer,
    create_hallucination_scorer,
)
from agentevals.scorers.llm._context_precision import ContextPrecisionOptions, create_context_precision_scorer
from agentevals.scorers.llm._context_recall import ContextRecallOptions, create_context_recall_scorer
from agentevals.scorers.llm._context_relevance import (
    ContextRelevanceOptions,
    create_context_relevance_scorer_llm,
)
from agentevals.scorers.llm._prompt_alignment import (
    PromptAlignmentOptions,
    create_prompt_alignment_scorer_llm,
)
from agentevals.scorers.llm._toxicity import ToxicityOptions, create_toxicity_scorer

__all__ = [
    "AnswerRelevancyOptions",
    "AnswerSimilarityOptions",
    "BiasOptions",
    "ContextPrecisionOptions",
    "ContextRecallOptions",
    "ContextRelevanceOptions",
    "FaithfulnessOptions",
    "HallucinationOptions",
    "PromptAlignmentOptions",
    "ToxicityOptions",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_context_precision_scorer",
    "create_context_recall_scorer",
    "create_context_relevance_scorer_llm",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_prompt_alignment_scorer_llm",
    "create_toxicity_scorer",
]
