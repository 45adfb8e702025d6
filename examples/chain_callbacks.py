"""Callbacks on any LCEL chain: a small RAG chain scored live, with retrieved documents as context."""

from __future__ import annotations

from typing import Any

from agentevals_langchain import ScorerCallbackHandler
from agentevals_langchain.testing import ScriptedChatModel
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from agentevals import Run, create_scorer
from agentevals.sinks import MemorySink

DOCS = ["Paris is the capital of France.", "The Eiffel Tower is 330 m tall.", "Berlin is in Germany."]


class KeywordRetriever(BaseRetriever):
    """Returns the documents sharing a word with the query."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        words = {w.strip("?.").lower() for w in query.split()}
        return [Document(page_content=d) for d in DOCS if words & {w.strip(".").lower() for w in d.split()}]


def grounded(run: Run, **_: Any) -> float:
    """Share of answer sentences that appear in the retrieved context."""
    sentences = [s.strip() for s in run.output_text.split(".") if s.strip()]
    context = " ".join(run.context)
    return sum(s in context for s in sentences) / len(sentences) if sentences else 0.0


def main() -> None:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the context only."),
            ("human", "Context:\n{context}\n\nQuestion: {question}"),
        ]
    )
    model = ScriptedChatModel(respond=lambda messages: "Paris is the capital of France.")
    chain = (
        {
            "context": KeywordRetriever()
            | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | prompt
        | model
        | StrOutputParser()
    )
    memory = MemorySink()
    handler = ScorerCallbackHandler(
        scorers=[create_scorer(id="grounded").generate_score(grounded)], sinks=[memory]
    )
    print(chain.invoke("What is the capital of France?", config={"callbacks": [handler]}))
    handler.flush()
    for record in memory.records:
        print(record.scorer_id, record.score)


if __name__ == "__main__":
    main()
