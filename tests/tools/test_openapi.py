"""OpenAPI backends against a real local service (tests/tools/fixtures/tickets_api.py, a
FastAPI app started by the suite's `services:`), with its generated document and with a
hand-written document full of gaps."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import InfraError, SuiteError
from toolproof.runner.validate import validate_suite
from toolproof.runtime.http import HTTPChannel
from toolproof.spec.placeholders import expand, template_problem
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.tools.openapi import (
    OpenAPITool,
    Request,
    build_tools,
    read_operations,
)
from toolproof.world import World

FIXTURES = Path(__file__).parent / "fixtures"
TICKETS = FIXTURES / "tickets_suite"
GAPS = FIXTURES / "tickets-gaps.yaml"
FAIL = "import sys; print('boom: address in use', file=sys.stderr); sys.exit(4)"


def write_suite(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def call(suite: Suite, tool: str, args: dict[str, Any]) -> ToolResult:
    context = ToolContext(world=World(suite.world), seed=0)
    return asyncio.run(suite.tools[tool].tool.call(args, context))


# ---------------------------------------------------------------- the generated document


@pytest.fixture(scope="module")
def tickets() -> Iterator[Suite]:
    with load_suite(TICKETS) as suite:
        yield suite


@pytest.mark.slow
def test_tickets_suite_is_sound_against_the_live_service(tickets: Suite) -> None:
    checks = asyncio.run(validate_suite(tickets))
    assert [(c.task.id, c.oracle) for c in checks] == [
        ("open-high-priority", "passed"),
        ("close-typo", "passed"),
        ("report-checkout-bug", "passed"),
    ]
    assert [c.passing_baselines for c in checks] == [[], [], []]


@pytest.mark.slow
def test_operations_become_tools_with_their_schemas(tickets: Suite) -> None:
    tools = tickets.tools
    assert sorted(tools) == [
        "add_comment",
        "create_ticket",
        "get_ticket",
        "list_tickets",
        "update_ticket",
    ]
    create = tools["create_ticket"].schema.parameters
    # the JSON body's fields are arguments; the API key header is sent by the backend
    assert sorted(create["properties"]) == ["priority", "title"]
    assert create["required"] == ["title"]
    assert create["properties"]["priority"]["enum"] == ["low", "normal", "high"]
    assert create["additionalProperties"] is False
    assert tools["get_ticket"].schema.parameters["required"] == ["ticket_id"]
    assert tools["list_tickets"].schema.description == "List Tickets\n\nList tickets, newest last."
    assert not tools["list_tickets"].write and tools["update_ticket"].write
    assert all(not b.simulated for b in tools.values())
    warnings = "\n".join(tickets.warnings)
    assert "tool 'busy' is not listed under tools:" in warnings


@pytest.mark.slow
def test_status_codes_and_bodies_reach_the_agent_as_sent(tickets: Suite) -> None:
    found = call(tickets, "get_ticket", {"ticket_id": "T-1"})
    assert found.is_error is False and found.content["title"] == "Login page is slow"
    missing = call(tickets, "get_ticket", {"ticket_id": "T-404"})
    assert missing == ToolResult(
        content={"error": {"status": 404, "body": {"detail": "no ticket T-404"}}},
        is_error=True,
        error_kind="not_found",
    )
    invalid = call(tickets, "create_ticket", {"title": "x", "priority": "urgent"})
    assert invalid.error_kind == "invalid_request"
    assert invalid.content["error"]["status"] == 422
    assert {e["loc"][-1] for e in invalid.content["error"]["body"]["detail"]} == {
        "title",
        "priority",
    }
    conflict = call(tickets, "update_ticket", {"ticket_id": "T-3", "status": "closed"})
    assert conflict.error_kind == "conflict"
    assert conflict.content["error"]["body"] == {"detail": "T-3 is already closed"}
    unknown = call(tickets, "get_ticket", {"ticket_id": "T-1", "verbose": True})
    assert unknown.error_kind == "invalid_arguments"


@pytest.mark.slow
def test_rate_limits_and_server_errors(tickets: Suite) -> None:
    assert tickets.runtime is not None
    channel = tickets.runtime.channel("desk")
    document = asyncio.run(_get(channel, tickets.runtime.services["tickets"].url + "/openapi.json"))
    tools, _ = build_tools(document, tickets.runtime.services["tickets"].url, channel)
    by_name = {t.name: t for t in tools}
    context = ToolContext(world=World({}), seed=0)
    busy = asyncio.run(by_name["busy"].call({}, context))
    assert busy.error_kind == "rate_limit"
    assert busy.content == {
        "error": {"status": 429, "body": {"detail": "slow down"}, "retry_after_s": 2.0}
    }
    broken = asyncio.run(by_name["broken"].call({}, context))
    assert broken.error_kind == "server_error"
    assert broken.content["error"]["status"] == 500
    # a wrong key: the service's own 401
    intruder = HTTPChannel("intruder", tickets.runtime.host, {"X-Api-Key": "wrong"}, 5.0)
    tool = OpenAPITool(
        by_name["get_ticket"].operation, tickets.runtime.services["tickets"].url, intruder
    )
    denied = asyncio.run(tool.call({"ticket_id": "T-1"}, context))
    assert denied.error_kind == "unauthorized"
    assert denied.content["error"] == {"status": 401, "body": {"detail": "invalid API key"}}
    asyncio.run(tickets.runtime.host.run(intruder.aclose()))


async def _get(channel: HTTPChannel, url: str) -> dict[str, Any]:
    context = ToolContext(world=World({}), seed=0)
    response = await channel.send(Request("get", url, params=[], headers={}), context)
    document: dict[str, Any] = response.json()
    return document


# ---------------------------------------------------------------- a document with gaps

GAPS_SUITE = f"""
name: gaps
services:
  tickets:
    command: [python, -m, uvicorn, "tickets_api:app", --port, "{{port}}"]
    cwd: "{FIXTURES}"
backends:
  hand:
    type: openapi
    spec: "{GAPS}"
    base_url: "{{services.tickets.url}}"
    headers: {{X-Api-Key: "${{TOOLPROOF_TEST_TICKETS_KEY:-test-key-123}}"}}
tools:
  get_tickets: {{tier: 1}}
  get_ticket: {{tier: 1}}
  update_ticket: {{tier: 2}}
  post_tickets_ticket_id_tags: {{tier: 3}}
  get_search: {{tier: 2}}
tasks:
  - id: list
    user: {{opening: List open tickets}}
    expect:
      actions: [{{tool: get_tickets, args: {{status: open, limit: "2"}}}}]
      must_say: [T-1]
      check: [{{command: ["true"]}}]
allow_outside: ["{FIXTURES}"]
"""


@pytest.mark.slow
def test_a_document_with_gaps_loads_with_warnings_and_works(tmp_path: Path) -> None:
    with load_suite(write_suite(tmp_path, {"suite.yaml": GAPS_SUITE})) as suite:
        warnings = [w.removeprefix("backend 'hand': ") for w in suite.warnings]
        assert warnings == [
            "GET /tickets: no operationId; the tool is named 'get_tickets'",
            "GET /tickets: parameter 'status' has no schema; it is taken as a string",
            "GET /tickets: parameter 'limit' has no type; it is taken as a string",
            "GET /tickets/{ticket_id}: operationId 'get ticket!' is not a valid tool name; "
            "using 'get_ticket'",
            "POST /tickets/{ticket_id}/tags: no operationId; the tool is named "
            "'post_tickets_ticket_id_tags'",
            "POST /tickets/{ticket_id}/tags: request body has no schema; the argument 'body' "
            "takes any JSON",
            "GET /search: $ref #/components/parameters/Missing points nowhere (any value is "
            "accepted there)",
            "GET /search: no operationId; the tool is named 'get_search'",
            "GET /search: cookie parameter 'session' is not supported; it is left out",
            "3 operation(s) document no error responses (get_tickets, "
            "post_tickets_ticket_id_tags, get_search); their errors reach the agent as the "
            "service sends them",
        ]
        tools = suite.tools
        # the configured x-api-key header is not an argument, even where it is documented
        assert sorted(tools["get_tickets"].schema.parameters["properties"]) == ["limit", "status"]
        assert tools["get_ticket"].schema.parameters["required"] == ["ticket_id"]
        update = tools["update_ticket"].schema.parameters["properties"]["status"]
        assert update["type"] == ["string", "null"]  # OpenAPI 3.0 nullable
        listed = call(suite, "get_tickets", {"status": "open", "limit": "1"})
        assert [t["id"] for t in listed.content] == ["T-1"]
        search = call(suite, "get_search", {"q": "page", "fields": ["id", "title"]})
        assert search.content == {"q": "page", "fields": ["id", "title"], "hits": ["T-1", "T-2"]}
        tags = call(suite, "post_tickets_ticket_id_tags", {"ticket_id": "T-2", "body": ["ui"]})
        assert tags.content == {"ticket": "T-2", "tags": ["ui"]}
        missing = call(suite, "get_ticket", {"ticket_id": "T-9"})
        assert missing.content == {"error": {"status": 404, "body": {"detail": "no ticket T-9"}}}
        closed = call(suite, "update_ticket", {"ticket_id": "T-1", "status": "closed"})
        assert closed.content["status"] == "closed"
        # the service dies: the next call is an infrastructure error with its log
        assert suite.runtime is not None
        service = suite.runtime.services["tickets"]
        assert service.process is not None
        service.process.kill()
        service.process.wait()
        with pytest.raises(InfraError) as caught:
            call(suite, "get_ticket", {"ticket_id": "T-1"})
        assert "service of backend 'hand' is unreachable" in str(caught.value)
        assert "service 'tickets' died" in str(caught.value)


@pytest.mark.slow
def test_document_and_service_problems_are_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = f"""
    name: broken
    services:
      api:
        command: [python, -c, "{FAIL}"]
    backends:
      hand:
        type: openapi
        spec: "{GAPS}"
    tools:
      get_tickets: {{tier: 1}}
    tasks:
      - {{id: t, user: {{opening: hi}}, expect: {{must_say: [x]}}}}
    allow_outside: ["{FIXTURES}"]
    """
    root = write_suite(tmp_path, {"suite.yaml": suite, "notes.txt": "not an API\n"})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    [problem] = caught.value.problems
    assert (problem.path, problem.line) == ("suite.yaml", 3)
    assert problem.message.startswith("service 'api' exited with status 4")
    assert "boom: address in use" in problem.message
    without_service = suite.replace("    services:\n      api:\n", "").replace(
        f'        command: [python, -c, "{FAIL}"]\n', ""
    )
    write_suite(tmp_path, {"suite.yaml": without_service})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert [str(p) for p in caught.value.problems] == [
        "suite.yaml:3: backend 'hand': give base_url (the document names no absolute server URL)"
    ]
    write_suite(tmp_path, {"suite.yaml": without_service.replace(str(GAPS), "notes.txt")})
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert [str(p) for p in caught.value.problems] == [
        "suite.yaml:5: backend 'hand': not an OpenAPI document (a mapping is expected)"
    ]


# ---------------------------------------------------------------- documents and requests


def document(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths, **extra}


def test_names_collisions_cycles_and_bodies() -> None:
    loaded = read_operations(
        document(
            {
                "/a": {
                    "get": {"operationId": "same", "responses": {"200": {}}},
                    "post": {
                        "operationId": "same",
                        "requestBody": {
                            "content": {
                                "application/x-www-form-urlencoded": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"n": {"type": "integer"}},
                                    }
                                }
                            }
                        },
                    },
                },
                "/nodes/{id}": {
                    "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}}],
                    "put": {
                        "requestBody": {
                            "required": True,
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Node"}
                                }
                            },
                        },
                        "responses": {"default": {}},
                    },
                },
            },
            components={
                "schemas": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "child": {"$ref": "#/components/schemas/Node"},
                        },
                    }
                }
            },
        )
    )
    names = [op.name for op in loaded.operations]
    assert names == ["same", "same_2", "put_nodes_id"]
    assert "POST /a: tool name 'same' is taken; using 'same_2'" in loaded.warnings
    form = loaded.operations[1]
    assert form.body is not None and form.body.media_type == "application/x-www-form-urlencoded"
    assert form.body.fields == ("n",)
    put = loaded.operations[2]
    # body fields clash with the path parameter 'id': the body is one argument
    assert (
        "PUT /nodes/{id}: body fields clash with parameters (id); the body is the argument 'body'"
        in loaded.warnings
    )
    assert put.schema["required"] == ["id", "body"]
    child = put.schema["properties"]["body"]["properties"]["child"]
    assert child == {"type": "object", "description": "(recursive: Node)"}


def test_requests_are_built_as_the_document_says() -> None:
    loaded = read_operations(
        document(
            {
                "/orgs/{org}/items": {
                    "post": {
                        "operationId": "find",
                        "parameters": [
                            {
                                "name": "org",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            },
                            {"name": "tag", "in": "query", "schema": {"type": "array"}},
                            {"name": "deep", "in": "query", "schema": {"type": "boolean"}},
                            {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                        ],
                        "requestBody": {
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"q": {"type": "string"}},
                                    }
                                }
                            }
                        },
                        "responses": {"200": {}},
                    }
                }
            }
        )
    )
    op = loaded.operations[0]
    channel = HTTPChannel("b", None, {}, 1.0)  # type: ignore[arg-type]
    tool = OpenAPITool(op, "http://127.0.0.1:1/api/", channel)
    request = tool.request(
        {"org": "a b/c", "tag": ["x", "y"], "deep": True, "X-Trace": 7, "q": "hi"}
    )
    assert request == Request(
        method="post",
        url="http://127.0.0.1:1/api/orgs/a%20b%2Fc/items",
        params=[("tag", "x"), ("tag", "y"), ("deep", "true")],
        headers={"X-Trace": "7"},
        content=b'{"q": "hi"}',
        media_type="application/json",
    )
    assert tool.request({"tag": ["x"]}) == ToolResult.error(
        "invalid_arguments", "org: missing required argument"
    )
    assert tool.check_arguments({"org": 5}) == ["org: 5 is not of type 'string'"]
    bare = tool.request({"org": "a"})  # no body fields given: no body
    assert isinstance(bare, Request) and bare.content is None


def test_placeholders_and_environment() -> None:
    names = {"port": "8000"}
    assert (
        expand("http://127.0.0.1:{port}/${TOOLPROOF_TEST_X:-v1}", names, {})
        == "http://127.0.0.1:8000/v1"
    )
    assert expand("Bearer ${TOKEN}", names, {"TOKEN": "s3"}) == "Bearer s3"
    assert template_problem("{port}/{host}", {"port"}) == (
        "unknown placeholder '{host}' here (known: {port})"
    )
    assert template_problem('{"json": 1}', set()) is None  # not a placeholder
