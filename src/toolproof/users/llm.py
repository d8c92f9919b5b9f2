"""An LLM-simulated user (tau-bench style), as an alternative to scripted turns.

A user model gets the task's persona and instructions, answers the agent turn by turn,
reveals what it knows only when asked, and ends the conversation with a stop token. Its model
calls are recorded in the transcript as the user's, so its cost is kept apart from the agent's.
Where the suite gives the user tools of their own (`user: tools:`), the model may call them
before it answers (restart the phone, check the status bar): the calls go through the
gateway and are recorded as the user's.
"""

from __future__ import annotations

import json

from toolproof.models.base import Message, ModelClient, ModelResponse
from toolproof.seeds import stream_seed
from toolproof.spec.user import UserSpec
from toolproof.transcript import ModelCallEvent, Transcript
from toolproof.users.scripted import User

STOP = "###STOP###"
MAX_TURNS = 30
MAX_ACTIONS = 10
"""Rounds of tool calls the user may make before answering one agent message."""

PROMPT = """You are a customer writing to a support agent. Stay in character; never act as the
agent{tools}.
{persona}
What you want and what you know:
{instructions}

Rules:
- Say only what you need for the next step; give a detail (an id, an email, a choice) only
  when the agent asks for it, and never make up details you were not given.
- If the agent asks you to confirm something that matches what you want, say yes.
- When what you wanted is done, or clearly cannot be done, reply with {stop} alone: the
  conversation ends there.
"""

NO_TOOLS = " and never call tools"
OWN_TOOLS = (
    ". You have tools for your own device or account: call one only to do what the agent "
    "asks of you or to see what it shows, and tell the agent what the results show, never "
    "more"
)


class LLMUser(User):
    """A user played by a model."""

    def __init__(
        self,
        client: ModelClient,
        spec: UserSpec,
        story: str,
        transcript: Transcript,
        seed: int = 0,
    ) -> None:
        self.client = client
        self.seed = seed
        """The trial's seed: each turn samples with a seed of its `user` stream."""
        self.spec = spec
        self.transcript = transcript
        self.persona = f"Your manner: {spec.persona}" if spec.persona else ""
        self.instructions = spec.instructions or story or spec.opening
        self.messages = [Message(role="assistant", content=spec.opening)]
        """The conversation after the system prompt, which says whether the user has tools."""
        self.turns = 0

    def opening(self) -> str:
        return self.spec.opening

    async def respond(self, agent_reply: str) -> str | None:
        if self.turns >= MAX_TURNS:
            return None
        self.turns += 1
        self.messages.append(Message(role="user", content=agent_reply))
        response = await self._generate(0)
        for step in range(1, MAX_ACTIONS + 1):
            if not response.message.tool_calls or self.tools is None:
                break
            self.messages.append(response.message)
            for call in response.message.tool_calls:
                result = await self.tools.call(call.name, call.arguments or call.raw_arguments)
                content = result.content
                self.messages.append(
                    Message(
                        role="tool",
                        content=content if isinstance(content, str) else json.dumps(content),
                        tool_call_id=call.id,
                        name=call.name,
                        is_error=result.is_error,
                    )
                )
            response = await self._generate(step)
        text = response.message.content
        self.messages.append(Message(role="assistant", content=text))
        if STOP in text:
            return None
        return text.strip() or None

    def _system(self) -> Message:
        """The system prompt, saying whether the user has tools of their own."""
        told = OWN_TOOLS if self.tools is not None and self.tools.schemas else NO_TOOLS
        prompt = PROMPT.format(
            tools=told, persona=self.persona, instructions=self.instructions, stop=STOP
        )
        return Message(role="system", content=prompt)

    async def _generate(self, step: int) -> ModelResponse:
        """One model turn of the user, recorded as the user's."""
        started = self.transcript.now()
        schemas = self.tools.schemas if self.tools is not None else []
        draw = self.turns + (MAX_TURNS + 1) * step  # each turn's first draw as before tools
        response = await self.client.generate(
            [self._system(), *self.messages],
            schemas,
            seed=stream_seed(self.seed, "user", draw),
        )
        self.transcript.add(
            ModelCallEvent(
                t=started,
                model=self.client.name,
                role="user",
                content=response.message.content,
                usage=response.usage,
                latency_s=response.latency_s,
                cost_usd=response.cost_usd,
                stop_reason=response.stop_reason,
            )
        )
        return response
