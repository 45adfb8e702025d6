"""LLM-judged prebuilt scorers: the judge labels, code computes the score.

Each factory takes ``model`` (a LiteLLM model string or a configured :class:`~agentevals.Judge`),
``options`` (its options dataclass or a dict) and option keywords; options merge key by key with the
defaults and invalid ones raise ``ValueError`` at construction. A static value is passed as ``context``
(or ``source``), a function computing it per run as ``get_context`` (``get_source``). ``scale``
declares the scorer's ``score_range`` ``(0, scale)``: results are rescaled to [0, 1] and keep the value
on the scale as ``raw_score``, the one the reason speaks of.
"""

from agentevals import _renamed
from agentevals.scorers.llm._answer_relevancy import AnswerRelevancyOptions, create_answer_relevancy_scorer
from agentevals.scorers.llm._answer_similarity import AnswerSimilarityOptions, create_answer_similarity_scorer
from agentevals.scorers.llm._bias import BiasOptions, create_bias_scorer
from agentevals.scorers.llm._context_precision import ContextPrecisionOptions, create_context_precision_scorer
from agentevals.scorers.llm._context_recall import ContextRecallOptions, create_context_recall_scorer
from agentevals.scorers.llm._context_relevance import (
    ContextRelevanceOptions,
    create_context_relevance_scorer,
)
from agentevals.scorers.llm._factuality import FactualityOptions, create_factuality_scorer
from agentevals.scorers.llm._faithfulness import FaithfulnessOptions, create_faithfulness_scorer
from agentevals.scorers.llm._hallucination import HallucinationOptions, create_hallucination_scorer
from agentevals.scorers.llm._multi_turn_judge import MultiTurnJudgeOptions, create_multi_turn_judge_scorer
from agentevals.scorers.llm._noise_sensitivity import (
    NoiseSensitivityOptions,
    create_noise_sensitivity_scorer,
)
from agentevals.scorers.llm._prompt_alignment import (
    PromptAlignmentOptions,
    create_prompt_alignment_scorer,
)
from agentevals.scorers.llm._rubric import RubricCriterion, RubricOptions, create_rubric_scorer
from agentevals.scorers.llm._summarization import SummarizationOptions, create_summarization_scorer
from agentevals.scorers.llm._tool_call_accuracy import (
    ToolCallAccuracyLLMOptions,
    create_tool_call_accuracy_scorer_llm,
)
from agentevals.scorers.llm._toxicity import ToxicityOptions, create_toxicity_scorer
from agentevals.scorers.llm._trajectory_accuracy import (
    TrajectoryAccuracyLLMOptions,
    create_trajectory_accuracy_scorer_llm,
)

__all__ = [
    "AnswerRelevancyOptions",
    "AnswerSimilarityOptions",
    "BiasOptions",
    "ContextPrecisionOptions",
    "ContextRecallOptions",
    "ContextRelevanceOptions",
    "FactualityOptions",
    "FaithfulnessOptions",
    "HallucinationOptions",
    "MultiTurnJudgeOptions",
    "NoiseSensitivityOptions",
    "PromptAlignmentOptions",
    "RubricCriterion",
    "RubricOptions",
    "SummarizationOptions",
    "ToolCallAccuracyLLMOptions",
    "ToxicityOptions",
    "TrajectoryAccuracyLLMOptions",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_context_precision_scorer",
    "create_context_recall_scorer",
    "create_context_relevance_scorer",
    "create_factuality_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_multi_turn_judge_scorer",
    "create_noise_sensitivity_scorer",
    "create_prompt_alignment_scorer",
    "create_rubric_scorer",
    "create_summarization_scorer",
    "create_tool_call_accuracy_scorer_llm",
    "create_toxicity_scorer",
    "create_trajectory_accuracy_scorer_llm",
]

__getattr__ = _renamed.module_getattr(__name__)
