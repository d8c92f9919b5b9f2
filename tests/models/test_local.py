"""The embedded model end to end: SmolLM2-135M-Instruct in process through llama-cpp-python.

The model is tiny: these tests check the structure of what comes back (text, calls, ids,
arguments, usage), never the wisdom of it. Temperature 0 and a seed keep them repeatable.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolproof.config import Config
from toolproof.errors import UsageError
from toolproof.models.base import ContextOverflow, Message, ModelSettings, ToolCall
from toolproof.models.local import (
    LocalLlamaClient,
    parse_answer,
    parse_calls,
    render_prompt,
    reply_schema,
    tool_grammar,
)
from toolproof.models.pricing import Metered, PriceTable
from toolproof.models.registry import build_client, choose_model
from toolproof.spec.overrides import ModelOverrides
from toolproof.tools.base import ToolSchema

WEATHER = ToolSchema(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
    },
)
SYSTEM = Message(role="system", content="You are a weather service.")
ASK = Message(role="user", content="Weather in Paris, please.")


def client(path: str, **settings: object) -> LocalLlamaClient:
    return LocalLlamaClient(
        path, settings=ModelSettings.model_validate({"temperature": 0, "seed": 7, **settings})
    )


# --- Without the model -------------------------------------------------------------------------


def test_the_prompt_shows_tools_calls_and_results() -> None:
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    prompt = render_prompt(
        [
            SYSTEM,
            ASK,
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", content='{"sky": "clear"}', tool_call_id="c1", name="get_weather"),
        ],
        [WEATHER],
    )
    assert prompt.startswith("<|im_start|>system\nYou are a weather service.\n\n")
    assert "functions.get_weather:\nGet the current weather for a city.\n{" in prompt
    assert "functions.reply:\nAnswer the user with a message.\n{" in prompt
    assert '<|im_start|>assistant\nfunctions.get_weather:\n{"city": "Paris"}<|im_end|>' in prompt
    assert '<|im_start|>tool\nfunctions.get_weather returned:\n{"sky": "clear"}<|im_end|>' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_calls_are_parsed_from_the_answer_and_a_cut_one_keeps_its_text() -> None:
    calls = parse_calls('functions.a:\n{"x": 1}\nfunctions.b:\n{"y": ')
    assert [(c.name, c.arguments, c.raw_arguments) for c in calls] == [
        ("a", {"x": 1}, '{"x": 1}'),
        ("b", None, '{"y":'),
    ]


def test_a_text_answer_is_written_as_a_call_of_reply() -> None:
    said = Message(role="assistant", content='It is "sunny".')
    prompt = render_prompt([SYSTEM, ASK, said], [WEATHER])
    assert '<|im_start|>assistant\nfunctions.reply:\n{"message": "It is \\"sunny\\"."}' in prompt
    assert "To answer the user, call functions.reply with your message." in prompt
    assert render_prompt([ASK, said], []).endswith(
        '<|im_start|>assistant\nIt is "sunny".<|im_end|>\n<|im_start|>assistant\n'
    )


def test_reply_is_renamed_when_a_tool_has_its_name() -> None:
    taken = ToolSchema("reply", "Reply to a ticket.", {"type": "object", "properties": {}})
    assert reply_schema([WEATHER]).name == "reply"
    assert reply_schema([WEATHER, taken]).name == "reply_to_user"


def test_an_answer_splits_into_the_text_for_the_user_and_the_calls() -> None:
    text = 'functions.get_weather:\n{"city": "Rome"}\nfunctions.reply:\n{"message": "Checking."}'
    said, calls = parse_answer(text, "reply")
    assert said == "Checking."
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Rome"})]
    cut = parse_answer('functions.reply:\n{"message": "It is \\"sun', "reply")
    assert cut == ('It is "sun', [])


def test_the_grammar_holds_answers_to_calls_of_the_functions_offered() -> None:
    single = tool_grammar([WEATHER, reply_schema([WEATHER])], parallel=False)
    assert single.startswith("root ::= tp-call\n")
    assert '"functions.get_weather:\\n" args0' in single
    assert '"functions.reply:\\n" args1' in single
    assert tool_grammar([WEATHER], parallel=True).startswith('root ::= tp-call ("\\n" tp-call)*\n')
    # No raw newline inside a JSON string: it would let a fake call line into the arguments.
    assert 'char ::= [^"\\\\\\x7F\\x00-\\x1F]' in single


def test_a_missing_model_file_is_a_usage_error() -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(UsageError, match="no model file"):
        LocalLlamaClient("/nowhere/model.gguf")


def test_local_models_are_named_by_the_bundled_name_or_a_gguf_path(local_model_path: str) -> None:
    config = Config()
    flags = ModelOverrides(n_threads=1, n_ctx=2048)
    for name in ("local/smollm2", f"local/{local_model_path}"):
        built = build_client(choose_model(name, config, {}, flags), config, PriceTable())
        inner = built.inner if isinstance(built, Metered) else built
        assert isinstance(inner, LocalLlamaClient)
        assert (inner.model_path, inner.n_threads, inner.n_ctx) == (local_model_path, 1, 2048)
    with pytest.raises(UsageError, match=r"local/PATH\.gguf"):
        build_client(
            choose_model("local/llama3", config, {}, ModelOverrides()), config, PriceTable()
        )


# --- With the model ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_text_reply_with_usage(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=16)
    response = asyncio.run(model.generate([Message(role="user", content="Say hello.")], []))
    assert response.message.role == "assistant"
    assert response.message.content and not response.message.tool_calls
    assert response.usage.input_tokens > 5
    assert 0 < response.usage.output_tokens <= 16
    assert response.stop_reason in ("stop", "length")
    assert response.latency_s > 0 and response.cost_usd == 0.0
    assert model.name == "local/smollm2"


@pytest.mark.slow
def test_the_call_s_seed_drives_the_sampling_unless_the_settings_fix_one(
    local_model_path: str,
) -> None:
    story = [Message(role="user", content="Tell me a story about a cat.")]

    def sample(model: LocalLlamaClient, seed: int) -> tuple[str, int]:
        response = asyncio.run(model.generate(story, [], seed=seed))
        return response.message.content, response.usage.output_tokens

    free = LocalLlamaClient(local_model_path, settings=ModelSettings(temperature=1.0, max_tokens=8))
    assert sample(free, 11) == sample(free, 11)
    assert any(sample(free, a)[0] != sample(free, b)[0] for a, b in [(1, 2), (3, 4), (5, 6)])
    fixed = client(local_model_path, temperature=1.0, max_tokens=8)  # settings.seed is 7
    assert sample(fixed, 1) == sample(fixed, 2)


@pytest.mark.slow
def test_a_tool_call_with_tool_choice_auto(local_model_path: str) -> None:
    response = asyncio.run(
        client(local_model_path, max_tokens=48).generate([SYSTEM, ASK], [WEATHER])
    )
    [call] = response.message.tool_calls
    assert call.name == "get_weather"
    assert call.id.startswith("call_")
    assert isinstance(call.arguments, dict) and isinstance(call.arguments["city"], str)
    assert json.loads(call.raw_arguments) == call.arguments
    assert response.stop_reason == "tool_calls"
    assert response.message.content == ""


@pytest.mark.slow
def test_the_lazy_grammar_check_draws_what_the_masked_distribution_would(
    local_model_path: str,
) -> None:
    # Greedy, the masked distribution's choice is unique: checking the grammar only on the
    # sampled token must give, token for token, what llama-cpp-python's full mask gives.
    from toolproof.models.local import complete_lazily, shared_engine

    model = client(local_model_path)
    engine = shared_engine(model.model_path, model.n_ctx, model.n_threads)

    def compare() -> None:
        llama = engine.load()
        order = ToolSchema(
            "get_order",
            "Look up an order by its id.",
            {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string"},
                    "status": {"enum": ["pending", "shipped", "delivered"]},
                    "limit": {"type": "integer"},
                },
                "required": ["order_id", "status", "limit"],
            },
        )
        prompt = render_prompt([SYSTEM, ASK], [WEATHER, order])
        tokens = llama.tokenize(prompt.encode(), add_bos=True, special=True)
        sampling = {"temperature": 0.0, "repeat_penalty": 1.1, "seed": 7}
        for choice in ("required", "get_order"):
            offered = [t for t in (WEATHER, order) if choice in ("required", t.name)]
            grammar = engine.grammar(offered, False)
            llama.reset()
            stock = llama.create_completion(
                tokens, max_tokens=40, grammar=grammar, stop=["<|im_end|>"], **sampling
            )
            llama.reset()
            text, count, _ = complete_lazily(llama, tokens, 40, sampling, grammar)
            assert text == stock["choices"][0]["text"]  # type: ignore[index]
            assert count == stock["usage"]["completion_tokens"]  # type: ignore[index]
            assert text.startswith("functions.get_")
        llama.reset()

    engine.thread.run(compare)


@pytest.mark.slow
def test_a_long_prompt_is_restored_from_the_disk_cache(
    local_model_path: str, tmp_path: Path
) -> None:
    from toolproof.models.local import DiskCache, shared_engine

    model = client(local_model_path, max_tokens=4)
    engine = shared_engine(model.model_path, model.n_ctx, model.n_threads)
    rules = " ".join(f"Rule {i}: answer customers kindly." for i in range(130))
    policy = Message(role="system", content=rules)

    def forget() -> None:  # what a new process starts from
        engine.thread.run(lambda: engine.load().reset())
        engine.snapshots.clear()
        engine.snapshot_bytes = 0

    kept, engine.disk = engine.disk, DiskCache(tmp_path)
    try:
        forget()
        first = asyncio.run(model.generate([policy, ASK], []))
        assert first.usage.cached_tokens == 0 and first.usage.input_tokens > 1024
        assert len(list(tmp_path.glob("*.kv"))) == 1
        forget()
        other = Message(role="user", content="And in Rome?")
        second = asyncio.run(model.generate([policy, other], []))
        prefix = len(render_prompt([policy], []).removesuffix("<|im_start|>assistant\n")) // 8
        assert second.usage.cached_tokens > prefix  # the policy, restored, not evaluated
        forget()
        (tmp_path / "garbage.kv").write_bytes(b"\x01")  # unreadable files are skipped
        third = asyncio.run(model.generate([policy, other], []))
        assert third.usage.cached_tokens == second.usage.cached_tokens
        assert third.message.content == second.message.content
    finally:
        engine.disk = kept
        forget()


@pytest.mark.slow
def test_parallel_calls_have_distinct_ids(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=40, parallel_tool_calls=True)
    response = asyncio.run(model.generate([SYSTEM, ASK], [WEATHER]))
    calls = response.message.tool_calls
    assert calls and len({c.id for c in calls}) == len(calls)
    for call in calls[:-1]:
        assert call.arguments is not None
    # The last call may be cut by max_tokens: then its text is kept for the gateway.
    last = calls[-1]
    assert last.arguments is not None or (response.stop_reason == "length" and last.raw_arguments)


@pytest.mark.slow
def test_the_tool_result_goes_back_and_the_prefix_is_reused(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=24)
    first = asyncio.run(model.generate([SYSTEM, ASK], [WEATHER]))
    [call] = first.message.tool_calls
    history = [
        SYSTEM,
        ASK,
        first.message,
        Message(
            role="tool", content='{"sky": "clear", "c": 21}', tool_call_id=call.id, name=call.name
        ),
    ]
    answer = client(local_model_path, max_tokens=24, tool_choice="none")
    second = asyncio.run(answer.generate(history, [WEATHER]))
    assert second.message.content and not second.message.tool_calls
    assert second.usage.input_tokens > first.usage.input_tokens
    # Everything up to the model's own call was evaluated last turn.
    assert second.usage.cached_tokens >= first.usage.input_tokens


@pytest.mark.slow
def test_an_interleaved_conversation_gets_its_cache_back(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=24)
    one = [Message(role="system", content="You answer weather questions."), ASK]
    other = [Message(role="system", content="Be brief."), Message(role="user", content="Hi!")]
    first = asyncio.run(model.generate(one, [WEATHER]))
    asyncio.run(model.generate(other, [WEATHER]))  # evicts `one` from the live KV cache
    follow = [*one, first.message, Message(role="user", content="And in Rome?")]
    again = asyncio.run(model.generate(follow, [WEATHER]))
    assert again.usage.cached_tokens >= first.usage.input_tokens


@pytest.mark.slow
def test_an_oversized_prompt_is_a_context_overflow(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=8)
    huge = Message(role="user", content="weather " * 9000)
    with pytest.raises(ContextOverflow, match="context window of 8192"):
        asyncio.run(model.generate([huge], [WEATHER]))


@pytest.mark.slow
def test_concurrent_calls_are_served_one_at_a_time(local_model_path: str) -> None:
    model = client(local_model_path, max_tokens=8)

    async def both() -> tuple[float, list[float]]:
        started = time.perf_counter()
        answers = await asyncio.gather(
            model.generate([Message(role="user", content="Say yes.")], []),
            model.generate([Message(role="user", content="Say no.")], []),
        )
        return time.perf_counter() - started, [a.latency_s for a in answers]

    wall, latencies = asyncio.run(both())
    assert all(latency > 0 for latency in latencies)
    assert wall >= 0.95 * sum(latencies)


@pytest.mark.slow
def test_the_model_runs_on_one_thread_whoever_calls_it(local_model_path: str) -> None:
    # llama.cpp called from a second OS thread runs its thread pools against the first one's.
    from toolproof.models.local import shared_engine

    model = client(local_model_path, max_tokens=4)
    engine = shared_engine(model.model_path, model.n_ctx, model.n_threads)
    llama = engine.thread.run(engine.load)
    callers: set[int] = set()
    evaluate = llama.eval

    def watched(tokens: Any) -> None:
        callers.add(threading.get_ident())
        evaluate(tokens)

    llama.eval = watched  # type: ignore[method-assign]
    try:
        asyncio.run(model.generate([Message(role="user", content="Say yes.")], []))
        other = threading.Thread(
            target=lambda: asyncio.run(
                model.generate([Message(role="user", content="Say no.")], [WEATHER])
            )
        )
        other.start()
        other.join()
    finally:
        del llama.eval
    assert len(callers) == 1
    assert callers.isdisjoint({threading.main_thread().ident, other.ident})


@pytest.mark.slow
def test_llama_cpp_python_s_own_chat_format_still_works(local_model_path: str) -> None:
    model = LocalLlamaClient(
        local_model_path,
        settings=ModelSettings(temperature=0, seed=7, max_tokens=48),
        chat_format="chatml-function-calling",
    )
    response = asyncio.run(model.generate([SYSTEM, ASK], [WEATHER]))
    [call] = response.message.tool_calls
    assert call.name == "get_weather" and isinstance(call.arguments, dict)
    assert call.id
    assert response.stop_reason == "tool_calls"
