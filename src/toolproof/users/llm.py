"""An LLM-simulated user (tau-bench style), as an alternative to scripted turns.

A user model gets the task's persona and instructions, answers the agent turn by turn,
reveals what it knows only when asked, and ends the conversation with a stop token. Its model
calls are recorded in the transcript as the user's, so its cost is kept apart from the agent's.
"""

from __future__ import annotations

from toolproof.models.base import Message, ModelClient
from toolproof.seeds import stream_seed
from toolproof.spec.user import UserSpec
from toolproof.transcript import ModelCallEvent, Transcript
from toolproof.users.scripted import User

STOP = "###STOP###"
MAX_TURNS = 30

PROMPT = """You are a customer writing to a support agent. Stay in character; never act as the
agent and never call tools.
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
        persona = f"Your manner: {spec.persona}" if spec.persona else ""
        instructions = spec.instructions or story or spec.opening
        self.messages = [
            Message(
                role="system",
                content=PROMPT.format(persona=persona, instructions=instructions, stop=STOP),
            ),
            Message(role="assistant", content=spec.opening),
        ]
        self.turns = 0

    def opening(self) -> str:
        return self.spec.opening

    async def respond(self, agent_reply: str) -> str | None:
        if self.turns >= MAX_TURNS:
            return None
        self.turns += 1
        self.messages.append(Message(role="user", content=agent_reply))
        started = self.transcript.now()
        response = await self.client.generate(
            self.messages, [], seed=stream_seed(self.seed, "user", self.turns)
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
        text = response.message.content
        self.messages.append(Message(role="assistant", content=text))
        if STOP in text:
            return None
        return text.strip() or None
