"""``schema_responder``: a FakeJudgeServer responder that answers any judge prompt plausibly, offline.

A judge request with an output schema carries it after the line "Reply with a single JSON object ..."
(see ``agentevals._scoring._judge._request``); the reply is a value that validates against that schema, varied
deterministically by the prompt. Reason fields agree with the verdicts beside them, and a request
without a schema gets a sentence explaining the score it names (see ``_reasons``). Lists the prompt
enumerates ("1. ...", "[0] ...") are answered with one entry per item, as per-item verdict steps ask.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from agentevals._scoring._judge._request import JSON_INSTRUCTION
from agentevals.testing._reasons import neutral_sentence, score_reason, verdict_reason
from agentevals.testing._reply import ChatRequest, Reply

_ITEM = re.compile(r"^\s*(?:(\d+)\.|\[(\d+)\])\s+(.+?)\s*$")
_COUNT = re.compile(r"\((\d+) [a-z ]+\)")
_STATEMENTS = (
    "The answer addresses the user's question.",
    "The answer gives one concrete fact.",
    "The answer ends with a short summary.",
)
_REASON_NAMES = ("reason", "explanation", "rationale", "justification", "comment", "feedback", "assessment")


def schema_responder(*, positive_rate: float = 0.75) -> Callable[[ChatRequest], Reply]:
    """A responder for :class:`FakeJudgeServer`: schema-valid JSON for structured steps, else a sentence.

    ``positive_rate`` is how often a yes/no-like choice (an enum or boolean) gets its first, positive
    value; the rest vary by prompt, so a demo shows a spread of scores.

    >>> from agentevals.testing import FakeJudgeServer
    >>> server = FakeJudgeServer(responder=schema_responder())     # doctest: +SKIP
    """
    if not 0.0 <= positive_rate <= 1.0:
        raise ValueError(f"positive_rate must be within [0, 1], got {positive_rate!r}")

    def respond(request: ChatRequest) -> Reply:
        prompt = request.step_prompt
        rng = random.Random(hashlib.sha256(prompt.encode()).digest())
        schema = _schema_of(request)
        if schema is None:
            return Reply.text(score_reason(prompt) or neutral_sentence(rng))
        items = _enumerated_items(prompt.split(JSON_INSTRUCTION.splitlines()[0])[0])
        builder = _Builder(schema, rng, positive_rate, items)
        return Reply.json(builder.value(schema, name="", depth=0))

    return respond


def _schema_of(request: ChatRequest) -> dict[str, Any] | None:
    marker = JSON_INSTRUCTION.splitlines()[0]
    prompt = request.step_prompt
    if marker in prompt:
        text = prompt.split(marker, 1)[1].split("\n", 1)
        if len(text) == 2:
            try:
                schema = json.loads(text[1].strip())
            except json.JSONDecodeError:
                schema = None
            if isinstance(schema, dict):
                return schema
    response_format = request.body.get("response_format")
    if isinstance(response_format, Mapping):
        inner = response_format.get("json_schema")
        if isinstance(inner, Mapping) and isinstance(inner.get("schema"), dict):
            return dict(inner["schema"])
    return None


def _enumerated_items(prompt: str) -> list[tuple[int, str]] | None:
    """The list the prompt asks about, as (label, text): the one of the size it names, else the last."""
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for line in prompt.splitlines():
        match = _ITEM.match(line)
        if match:
            current.append((int(match.group(1) or match.group(2)), match.group(3)))
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    if not blocks:
        return None
    wanted = _COUNT.findall(prompt)  # e.g. "in order (3 matches)": answer the list of that length
    if wanted:
        sized = [b for b in blocks if len(b) == int(wanted[-1])]
        if sized:
            return sized[0]
    return blocks[-1]


class _Builder:
    def __init__(
        self,
        root: dict[str, Any],
        rng: random.Random,
        positive_rate: float,
        items: list[tuple[int, str]] | None,
    ) -> None:
        self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}
        self.rng = rng
        self.positive_rate = positive_rate
        self.items = items
        self.items_used = False
        # How each boolean or score drawn so far leans (1.0 positive, 0.0 negative): reasons follow it.
        self.leanings: list[float] = []

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self.defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return schema

    def value(self, schema: Mapping[str, Any], *, name: str, depth: int, item: Any = None) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.choose(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [o for o in schema[key] if self.resolve(o).get("type") != "null"]
                return self.value(
                    options[0] if options else {"type": "null"}, name=name, depth=depth, item=item
                )
        if schema.get("allOf"):
            return self.value(schema["allOf"][0], name=name, depth=depth, item=item)
        kind = schema.get("type", "object" if "properties" in schema else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            return self.object(schema, depth, item)
        if kind == "array":
            return self.array(schema, name, depth)
        if kind == "string":
            return self.string(schema, name, item)
        if kind in ("number", "integer"):
            return self.number(schema, name, kind, item)
        if kind == "boolean":
            flag = self.rng.random() < self.positive_rate
            self.leanings.append(float(flag))
            return flag
        return None

    def object(self, schema: Mapping[str, Any], depth: int, item: Any) -> dict[str, Any]:
        """The object's fields, its reasons drawn last so that they can restate its verdicts."""
        props: Mapping[str, Any] = schema.get("properties", {})
        reasons = [k for k, v in props.items() if _is_reason(k, self.resolve(v))]
        start = len(self.leanings)
        value = {
            k: self.value(v, name=k, depth=depth + 1, item=item) for k, v in props.items() if k not in reasons
        }
        verdicts = [(k, value[k]) for k in value if _is_verdict(k, self.resolve(props[k]))]
        drawn = self.leanings[start:]
        text = verdict_reason(verdicts, sum(drawn) / len(drawn) if drawn else None)
        value.update({k: _fit(self.resolve(props[k]), text) for k in reasons})
        return {k: value[k] for k in props}

    def choose(self, options: list[Any]) -> Any:
        if len(options) == 1 or self.rng.random() < self.positive_rate:
            return options[0]
        return self.rng.choice(options[1:])

    def array(self, schema: Mapping[str, Any], name: str, depth: int) -> list[Any]:
        items_schema = self.resolve(schema.get("items", {}))
        is_objects = items_schema.get("type") == "object" or "properties" in items_schema
        if is_objects and self.items is not None and not self.items_used:
            self.items_used = True  # one entry per enumerated item, in order (per-item verdicts)
            return [self.value(items_schema, name=name, depth=depth + 1, item=it) for it in self.items]
        low = int(schema.get("minItems", 1))
        high = max(low, min(int(schema.get("maxItems", low + 2)), low + 2))
        count = self.rng.randint(low, high)
        if items_schema.get("type") == "string" and "enum" not in items_schema:
            pool = list(_STATEMENTS)
            self.rng.shuffle(pool)
            return [pool[i % len(pool)] for i in range(count)]
        return [self.value(items_schema, name=name, depth=depth + 1) for _ in range(count)]

    def string(self, schema: Mapping[str, Any], name: str, item: Any) -> str:
        lowered = name.lower()
        if item is not None:
            text = str(item[1])  # the enumerated item this entry judges (statement, claim, opinion, ...)
        elif "verdict" in lowered or "answer" in lowered:
            text = self.choose(["yes", "no"])
        else:
            text = self.rng.choice(_STATEMENTS)
        return _fit(schema, text)

    def number(self, schema: Mapping[str, Any], name: str, kind: str, item: Any) -> float | int:
        if item is not None and "index" in name.lower() and kind == "integer":
            return int(item[0])
        low = float(schema.get("minimum", schema.get("exclusiveMinimum", 0.0)))
        high = float(schema.get("maximum", schema.get("exclusiveMaximum", 1.0 if kind == "number" else 5.0)))
        if high < low:
            high = low
        # Plausible judges lean positive: draw from the upper part of the range most of the time.
        start = low + (high - low) * (0.5 if self.rng.random() < self.positive_rate else 0.0)
        if kind == "integer":
            value: float = self.rng.randint(int(start), int(high))
        else:
            value = round(self.rng.uniform(start, high), 2)
            if "exclusiveMaximum" in schema and value >= high:
                value = high - 0.01
            if "exclusiveMinimum" in schema and value <= low:
                value = low + 0.01
        if "score" in name.lower():
            self.leanings.append((value - low) / (high - low) if high > low else 1.0)
        return value


def _is_reason(name: str, schema: Mapping[str, Any]) -> bool:
    lowered = name.lower()
    return (
        schema.get("type") == "string" and "enum" not in schema and any(w in lowered for w in _REASON_NAMES)
    )


def _is_verdict(name: str, schema: Mapping[str, Any]) -> bool:
    """A field stating a judgement: a choice (enum, boolean) or a score."""
    kind, lowered = schema.get("type"), name.lower()
    if "enum" in schema or kind == "boolean" or (kind == "string" and "verdict" in lowered):
        return True
    return kind in ("number", "integer") and "score" in lowered


def _fit(schema: Mapping[str, Any], text: str) -> str:
    max_length = schema.get("maxLength")
    if isinstance(max_length, int):
        text = text[:max_length]
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text.ljust(min_length, ".")
    return text
