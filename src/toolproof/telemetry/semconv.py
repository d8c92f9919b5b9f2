"""The attribute names toolproof writes and reads, in one place: the OpenTelemetry GenAI
semantic conventions (the development-status names of mid-2026), OpenInference's names for
the traces other tools produce, and toolproof's own under a `toolproof.` prefix."""

from __future__ import annotations

# GenAI semantic conventions: operations and their spans.
OPERATION = "gen_ai.operation.name"
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
ERROR_TYPE = "error.type"
# The verdict: an evaluation event on the span it judges.
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE = "gen_ai.evaluation.score.value"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
# A message as said, at its time, on the agent span: the conventions' earlier message events
# (their body's `content` as an attribute). The order of a conversation whose agent makes no
# model calls (a Python or HTTP agent) is nowhere else.
USER_MESSAGE = "gen_ai.user.message"
ASSISTANT_MESSAGE = "gen_ai.assistant.message"
MESSAGE_CONTENT = "content"
# Older producers name the provider `gen_ai.system`; it is read, never written.
LEGACY_PROVIDER = "gen_ai.system"

# OpenInference (Arize Phoenix and the instrumentations built on it).
OI_SPAN_KIND = "openinference.span.kind"
OI_SESSION = "session.id"
OI_MODEL = "llm.model_name"
OI_PROVIDER = "llm.provider"
OI_INPUT_MESSAGES = "llm.input_messages"
OI_OUTPUT_MESSAGES = "llm.output_messages"
OI_PROMPT_TOKENS = "llm.token_count.prompt"
OI_COMPLETION_TOKENS = "llm.token_count.completion"
OI_TOOL_NAME = "tool.name"
OI_TOOL_CALL_ID = "tool_call.id"
OI_TOOL_PARAMETERS = "tool.parameters"
OI_INPUT_VALUE = "input.value"
OI_OUTPUT_VALUE = "output.value"

# toolproof's own.
PREFIX = "toolproof."
RUN_ID = "toolproof.run_id"
TASK = "toolproof.task"
VARIANT = "toolproof.variant"
SEED = "toolproof.seed"
TRIAL = "toolproof.trial"
OUTCOME = "toolproof.outcome"
FAULT = "toolproof.fault"
DRIFT_TOOL = "toolproof.drift.tool"
TOOL_ERROR_KIND = "toolproof.tool.error_kind"
TOOL_CALLER = "toolproof.tool.caller"
"""Who made a tool call: `agent`, or `user` for a call of the suite's user tools."""
ENDED = "toolproof.ended"
COST_USD = "toolproof.cost_usd"


def provider_and_model(model: str) -> tuple[str, str]:
    """`openai/gpt-4o` → (openai, gpt-4o); a name without a provider is toolproof's own
    (the scripted model, a baseline agent)."""
    provider, slash, name = model.partition("/")
    return (provider, name) if slash else ("toolproof", model)
