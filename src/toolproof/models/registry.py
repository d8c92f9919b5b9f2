"""Models by name: `provider/model`, with settings from the config file, the suite and flags.

Providers are registered in `PROVIDERS`: `openai/MODEL`, `anthropic/MODEL`,
`openai-compatible/MODEL` (any server speaking the OpenAI API, given a base URL),
`local/smollm2` (the embedded model) and `scripted/FILE` (canned turns per task, for CI).
A provider is one `ModelClient` plus one registration here; its SDK is imported only when
one of its clients is made. Keys come from the usual environment variables or the config
file; a missing key is a usage error before any trial starts.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof.config import Config
from toolproof.errors import UsageError
from toolproof.models.base import ModelClient, ModelSettings
from toolproof.models.pricing import Metered, PriceTable
from toolproof.registry import Registry
from toolproof.spec.model_settings import ModelEntry
from toolproof.spec.overrides import ModelOverrides

DEFAULT_MODEL = "local/smollm2"
DEFAULT_CONCURRENCY = 16


@dataclass(frozen=True)
class ModelChoice:
    """A model to run: its name and merged entry (config, then suite, then flags)."""

    name: str
    provider: str
    model: str
    entry: ModelEntry

    @property
    def identity(self) -> str:
        """The name plus a hash of the settings that change its behaviour."""
        settings = self.entry.model_dump(
            exclude={"headers", "api_key_env", "max_concurrency", "timeout_s", "n_threads"}
        )
        blob = json.dumps(settings, sort_keys=True, default=str).encode()
        if self.provider == "scripted" and Path(self.model).is_file():
            blob += Path(self.model).read_bytes()  # another script is another model
        return f"{self.name}#{hashlib.sha256(blob).hexdigest()[:12]}"


Connect = Callable[[ModelChoice, ModelSettings, str | None], ModelClient]
"""Makes a provider's client for a model, from its settings and its key (if any)."""


@dataclass(frozen=True)
class Provider:
    """How the models of one provider are reached."""

    connect: Connect
    key_variable: str | None = None
    """The environment variable its key is read from; a provider with one needs a key."""
    needs_base_url: bool = False
    remote: bool = True
    """Its calls go over the network: retried, with an adaptive limit of calls in flight."""


PROVIDERS: Registry[Provider] = Registry("provider", plugins="provider")


@PROVIDERS.register("openai")
def openai_api() -> Provider:
    """OpenAI's Chat Completions API."""
    return Provider(openai_chat, key_variable="OPENAI_API_KEY")


@PROVIDERS.register("anthropic")
def anthropic_api() -> Provider:
    """Anthropic's Messages API."""

    def connect(choice: ModelChoice, settings: ModelSettings, key: str | None) -> ModelClient:
        from toolproof.models.anthropic import AnthropicClient

        entry = choice.entry
        return AnthropicClient(
            choice.model,
            settings=settings,
            api_key=key,
            base_url=entry.base_url,
            headers=entry.headers or None,
            timeout_s=entry.timeout_s,
        )

    return Provider(connect, key_variable="ANTHROPIC_API_KEY")


@PROVIDERS.register("openai-compatible")
def compatible_server() -> Provider:
    """Any server speaking the OpenAI API (vLLM, llama.cpp, Ollama...), at its base URL."""
    return Provider(openai_chat, needs_base_url=True)


@PROVIDERS.register("local", packages=("llama_cpp",), extra="local")
def embedded_model() -> Provider:
    """The embedded model, run in this process: nothing to retry, no limit to find."""

    def connect(choice: ModelChoice, settings: ModelSettings, key: str | None) -> ModelClient:
        from toolproof.models.local import DEFAULT_CONTEXT, DEFAULT_THREADS, LocalLlamaClient

        return LocalLlamaClient(
            local_model_path(choice.model),
            name=choice.name,
            settings=settings,
            n_threads=choice.entry.n_threads or DEFAULT_THREADS,
            n_ctx=choice.entry.n_ctx or DEFAULT_CONTEXT,
        )

    return Provider(connect, remote=False)


@PROVIDERS.register("scripted")
def scripted_file() -> Provider:
    """Canned model turns from a script file (`scripted/FILE`), per task: no key, no network."""

    def connect(choice: ModelChoice, settings: ModelSettings, key: str | None) -> ModelClient:
        from toolproof.models.scripted import ScriptedProvider, load_script

        if not Path(choice.model).is_file():
            raise UsageError(f"--model {choice.name}: no script file {choice.model}")
        return ScriptedProvider(load_script(choice.model), choice.name)

    return Provider(connect, remote=False)


def openai_chat(choice: ModelChoice, settings: ModelSettings, key: str | None) -> ModelClient:
    """A Chat Completions client, for OpenAI itself or a compatible server."""
    from toolproof.models.openai import OpenAIChatClient

    entry = choice.entry
    return OpenAIChatClient(
        choice.model,
        settings=settings,
        api_key=key or "none",
        base_url=entry.base_url,
        headers=entry.headers or None,
        timeout_s=entry.timeout_s,
        provider=choice.provider,
    )


def local_model_path(model: str) -> str | None:
    """`local/smollm2` is the bundled model; `local/PATH.gguf` any GGUF file."""
    if model == "smollm2":
        return None
    if model.endswith(".gguf"):
        return os.path.expanduser(model)
    raise UsageError(
        f"--model local/{model}: local models are local/smollm2 (bundled) or local/PATH.gguf"
    )


def split_name(name: str) -> tuple[str, str]:
    provider, _, model = name.partition("/")
    if not model or provider not in PROVIDERS:
        raise UsageError(
            f"--model {name!r}: name models as provider/model with provider one of "
            f"{PROVIDERS.known()} (for example openai/gpt-4o or local/smollm2)"
        )
    return provider, model


def choose_model(
    name: str, config: Config, suite_models: dict[str, ModelEntry], overrides: ModelOverrides
) -> ModelChoice:
    """Merge a model's settings: config file, then the suite, then the run's overrides (the
    command line's flags)."""
    provider, model = split_name(name)
    merged: dict[str, Any] = {}
    for layer in (config.models.get(name), suite_models.get(name)):
        if layer is not None:
            merged.update(layer.model_dump(exclude_unset=True))
    merged.update(overrides.given())
    try:
        entry = ModelEntry.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise UsageError(f"model {name}: {where}: {message}" if where else message) from None
    if PROVIDERS.get(provider, where=f"model {name}").needs_base_url and not entry.base_url:
        raise UsageError(
            f"model {name}: an {provider} model needs a base URL "
            "(--base-url, or base_url under models: in the suite or toolproof.yaml)"
        )
    return ModelChoice(name=name, provider=provider, model=model, entry=entry)


def key_variables() -> set[str]:
    """The environment variables the installed providers read their keys from."""
    found = (PROVIDERS.get(name).key_variable for name in PROVIDERS.installed())
    return {variable for variable in found if variable}


def api_key(choice: ModelChoice, config: Config) -> str | None:
    """The key for a model; raises a usage error when a provider needs one and none is set."""
    needed = PROVIDERS.get(choice.provider).key_variable
    variable = choice.entry.api_key_env or needed
    if variable and os.environ.get(variable):
        return os.environ[variable]
    key = config.keys.get(choice.name) or config.keys.get(choice.provider)
    if key:
        return key
    if needed or choice.entry.api_key_env:
        raise UsageError(
            f"model {choice.name}: no API key; set {variable} or add "
            f"keys: {{{choice.provider}: ...}} to toolproof.yaml"
        )
    return None


def build_client(
    choice: ModelChoice, config: Config, prices: PriceTable, concurrency: int | None = None
) -> ModelClient:
    """The client for a model: the provider's client, retries, prompted calls, prices.

    A remote provider's limit of calls in flight starts at the model's `max_concurrency`,
    else at the run's `concurrency` (so a run is never held below the trials it runs at once
    until the provider rate-limits it), else at 16.
    """
    provider = PROVIDERS.get(choice.provider)
    key = api_key(choice, config)
    entry = choice.entry
    settings = ModelSettings.model_validate(
        entry.model_dump(include=set(ModelSettings.model_fields))
    )
    client = provider.connect(choice, settings, key)
    if provider.remote:
        from toolproof.models.retry import AdaptiveLimiter, RetryingClient

        start = entry.max_concurrency or concurrency or DEFAULT_CONCURRENCY
        client = RetryingClient(client, limiter=AdaptiveLimiter(start))
    if entry.prompted:
        from toolproof.models.prompted import PromptedToolCalling

        client = PromptedToolCalling(client)
    return Metered(client, prices)
