"""LLM-judged prebuilt scorers: the judge labels, code computes the score."""

from agentevals.scorers.llm._answer_relevancy import AnswerRelevancyOptions, create_answer_relevancy_scorer

__all__ = ["AnswerRelevancyOptions", "create_answer_relevancy_scorer"]
