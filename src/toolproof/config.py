"""The user's config file: API keys, model settings and prices shared by all suites.

Looked up at $TOOLPROOF_CONFIG, else ./toolproof.yaml, else ~/.config/toolproof/config.yaml.
Environment variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) take precedence over keys here.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolproof.errors import SuiteError
from toolproof.spec.model_settings import ModelEntry, Price
from toolproof.spec.yamlload import load_yaml


class Config(BaseModel):
    """`toolproof.yaml`."""

    model_config = ConfigDict(extra="forbid")

    keys: dict[str, str] = Field(
        default_factory=dict, description="API keys by provider (openai, anthropic) or model."
    )
    models: dict[str, ModelEntry] = Field(default_factory=dict)
    prices: dict[str, Price] = Field(default_factory=dict)


def config_path() -> Path | None:
    candidates = [
        os.environ.get("TOOLPROOF_CONFIG"),
        "toolproof.yaml",
        str(Path.home() / ".config" / "toolproof" / "config.yaml"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def load_config() -> Config:
    """The config file's content, or an empty config when there is none."""
    from toolproof.spec.source import shown, validation_problems

    path = config_path()
    if path is None:
        return Config()
    data = load_yaml(path, shown(path)) or {}
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, data, shown(path))) from None
