"""The options of a run, checked once for the command line and the library alike.

`toolproof run --trials 4 --k 1,4` and `toolproof.run(suite, trials=4, k=[1, 4])` give the
same `RunRequest` through `run_request`, and a bad value is the same usage error, named as
its flag. The parsers of the command line's text forms (`1,5,10`, `KEY=VALUE`) are here too:
the library takes those forms as well as Python values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.errors import UsageError
from toolproof.metrics.summary import InfraPolicy
from toolproof.spec.limits import MAX_CONCURRENCY, MAX_TRIALS, MAX_TURNS

if TYPE_CHECKING:
    from toolproof.runner.config import RunRequest

RUN_OPTIONS: dict[str, tuple[tuple[type, ...], Any]] = {
    "base_url": ((str,), None),
    "request_timeout": ((int, float), None),
    "header": ((dict, list, tuple, str), None),
    "temperature": ((int, float), None),
    "max_tokens": ((int,), None),
    "tool_choice": ((str,), None),
    "parallel_tool_calls": ((bool,), None),
    "model_param": ((dict, list, tuple, str), None),
    "prompted": ((bool,), False),
    "threads": ((int,), None),
    "max_cost": ((int, float), None),
    "user_model": ((str,), None),
    "judge_model": ((str,), None),
    "faults": ((str,), None),
    "drift": ((str,), None),
    "load": ((int, list, tuple, str), None),
    "persona": ((str, list, tuple), None),
    "checkpoints": ((int, list, tuple, str), None),
    "profile": ((str,), None),
    "time_scale": ((int, float), 1.0),
    "concurrency": ((int,), None),
    "executor": ((str,), "local"),
    "ray_address": ((str,), None),
    "seed": ((int,), None),
    "tasks": ((str,), None),
    "max_steps": ((int,), None),
    "agent_timeout": ((int, float), None),
    "infra_errors": ((str,), "fail"),
}
"""Every option of a run besides the suite, the agent or models, trials and k: its Python
name (the flag's, `--max-cost` as `max_cost`), the types it takes, its default."""


def flag(name: str) -> str:
    """`max_cost` -> `--max-cost`: how errors name an option, whoever gave it."""
    return "--" + name.replace("_", "-")


def checked_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Every run option, the given ones over the defaults; an unknown name or a value of a
    type the option does not take is a usage error (None is always the default)."""
    unknown = sorted(set(given) - set(RUN_OPTIONS))
    if unknown:
        raise UsageError(
            f"unknown run option {unknown[0]!r}; besides suite, model, agent, trials, k, store, "
            f"resume, fresh and include_ungradable the options are {', '.join(RUN_OPTIONS)}"
        )
    options = {name: default for name, (_, default) in RUN_OPTIONS.items()}
    for name, value in given.items():
        if value is None:
            continue
        types = RUN_OPTIONS[name][0]
        wrong = isinstance(value, bool) and bool not in types and int in types
        if wrong or not isinstance(value, types):
            takes = " or ".join(t.__name__ for t in types)
            raise UsageError(f"{flag(name)} {value!r}: expected {takes}")
        options[name] = value
    return options


def run_request(
    *,
    agent: str | None,
    model: str | Sequence[str] | None,
    trials: int | None,
    k: int | Sequence[int] | str | None,
    resume: str | None,
    options: Mapping[str, Any],
) -> RunRequest:
    """The request of a run, every option checked as the command line checks its flags."""
    from toolproof.models.registry import DEFAULT_MODEL
    from toolproof.runner.config import RunRequest, model_overrides

    given = checked_options(options)
    for name, value in (("agent", agent), ("trials", trials), ("resume", resume)):
        want = str if name != "trials" else int
        if value is not None and (not isinstance(value, want) or isinstance(value, bool)):
            raise UsageError(f"{flag(name)} {value!r}: expected {want.__name__}")
    models = [model] if isinstance(model, str) else list(model or [])
    return RunRequest(
        agent=agent,
        models=models or ([] if agent or resume else [DEFAULT_MODEL]),
        model_flags=model_overrides(
            base_url=given["base_url"],
            request_timeout=given["request_timeout"],
            temperature=given["temperature"],
            max_tokens=given["max_tokens"],
            tool_choice=given["tool_choice"],
            parallel_tool_calls=given["parallel_tool_calls"],
            threads=given["threads"],
            prompted=given["prompted"],
            headers=parse_headers(given["header"]),
            extra=parse_params(given["model_param"]),
        ),
        max_cost=given["max_cost"],
        user_model=given["user_model"],
        judge_model=given["judge_model"],
        faults=given["faults"],
        drift=given["drift"],
        load=numbers(given["load"], "--load", MAX_CONCURRENCY) or [],
        personas=listed(given["persona"]),
        checkpoints=numbers(given["checkpoints"], "--checkpoints", MAX_TURNS) or [],
        profile=given["profile"],
        time_scale=given["time_scale"],
        trials=trials,
        k=numbers(k, "--k"),
        concurrency=given["concurrency"],
        seed=given["seed"],
        tasks=given["tasks"],
        max_steps=given["max_steps"],
        agent_timeout=given["agent_timeout"],
        infra_errors=parse_infra(given["infra_errors"]),
        executor=given["executor"],
        ray_address=given["ray_address"],
    )


def numbers(
    value: int | Sequence[int] | str | None, flag: str, most: int = MAX_TRIALS
) -> list[int] | None:
    """k values, load levels or checkpoints: `4`, `[1, 4]` or the flag's text `'1,4'`
    (the text is range-checked as it is read; numbers with the rest of the request)."""
    if value is None or isinstance(value, str):
        return parse_k(value, flag, most)
    values = [value] if isinstance(value, int) else list(value)
    if not values or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise UsageError(f"{flag} {value!r}: expected positive integers such as [1, 5, 10]")
    return values  # each in range: checked with the rest of the request (`check_request`)


def parse_k(text: str | None, flag: str = "--k", most: int = MAX_TRIALS) -> list[int] | None:
    """'1,5,10' -> [1, 5, 10]; None when not given. Each value at most `most`."""
    if not text:
        return None
    expected = f"expected positive integers such as 1,5,10, each at most {most:,}"
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: {expected}") from None
    if not values or any(not 1 <= v <= most for v in values):
        raise UsageError(f"{flag} {text!r}: {expected}")
    return values


_WORD = re.compile(r"[\w.:/+-]+")


def parse_json_value(flag: str, key: str, text: str) -> Any:
    """A KEY=JSON flag's value: JSON, or a plain word taken as a string (`effort=high`);
    anything else, JSON with nan or inf, or JSON nested too deep is a usage error."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        if _WORD.fullmatch(text):
            return text
        why = exc if isinstance(exc, ValueError) else "nested too deep"
        raise UsageError(
            f"{flag} {key}={text}: not JSON ({why}); give JSON, or a plain word as a string"
        ) from None


def parse_infra(text: str) -> InfraPolicy:
    if text not in ("fail", "exclude"):
        raise UsageError(f"--infra-errors {text!r}: use 'fail' or 'exclude'")
    return "fail" if text == "fail" else "exclude"


def parse_headers(texts: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    """--header NAME=VALUE flags as a mapping (a malformed one is refused without its value);
    a mapping is taken as it is, each value a string."""
    if isinstance(texts, Mapping):
        for name, value in texts.items():
            if not isinstance(name, str) or not isinstance(value, str) or not name.strip():
                raise UsageError(f"--header {str(name)[:20]!r}: expected a name and a string")
        return dict(texts)
    return dict(parse_pair("--header", text, secret=True) for text in listed(texts))


def parse_params(texts: Mapping[str, Any] | Sequence[str] | None) -> dict[str, Any]:
    """--model-param KEY=JSON flags as a mapping of JSON values; a mapping is taken as it
    is (its values JSON already)."""
    if isinstance(texts, Mapping):
        return dict(texts)
    params = {}
    for text in listed(texts):
        key, raw = parse_pair("--model-param", text)
        params[key] = parse_json_value("--model-param", key, raw)
    return params


def parse_pair(flag: str, text: str, *, secret: bool = False) -> tuple[str, str]:
    """'KEY=VALUE' -> ('KEY', 'VALUE'). A `secret` value (a header's: a token, often) is
    not repeated in the error."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        shown = f"{text[:4]!r}..." if secret and len(text) > 4 else repr(text)
        raise UsageError(f"{flag} {shown}: expected KEY=VALUE")
    return key.strip(), value.strip()


def listed(texts: Sequence[str] | str | None) -> list[str]:
    """A repeatable option's values: one string is one value."""
    return [texts] if isinstance(texts, str) else list(texts or [])
