"""The CRM example's in-house API is a real service (examples/crm-consolidation/custdb): its
incomplete OpenAPI document, its own answers, a tenant per trial, faults through the gateway,
checks of its final state, and what happens when it dies."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolproof.agents.base import Agent
from toolproof.agents.baselines import OracleAgent, RetryingOracle
from toolproof.errors import InfraError
from toolproof.gateway import Conditions, Gateway
from toolproof.records.trial import TrialResult
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.regrade import regrade_run
from toolproof.runner.run import RunRequest, run_suite
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.runtime import services_on_demand
from toolproof.store.journal import Store
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.world import World

# Slow: the CRM example's REST service runs as a process.
pytestmark = pytest.mark.slow

CRM = Path(__file__).parents[2] / "examples" / "crm-consolidation"
INHOUSE = ["get_cust_search", "inhouse_get_customer", "inhouse_update_contact"]
STALE = "conflict-fix-inhouse-stale-contact"


@pytest.fixture(scope="module")
def crm() -> Iterator[Suite]:
    with load_suite(CRM) as suite:
        yield suite


class Calls(Agent):
    """Makes the given calls through the gateway (waiting for `after` first, setting `done`
    after), keeps the results, and says "Done."."""

    def __init__(
        self,
        calls: list[tuple[str, dict[str, Any]]],
        after: asyncio.Event | None = None,
        done: asyncio.Event | None = None,
    ) -> None:
        self.calls, self.after, self.done = calls, after, done
        self.results: list[ToolResult] = []

    async def reply(self, message: str, tools: Gateway) -> str:
        if self.after is not None:
            await self.after.wait()
        for name, args in self.calls:
            self.results.append(await tools.call(name, args))
        self.calls = []
        if self.done is not None:
            self.done.set()
        return "Done."


async def trial(
    suite: Suite,
    task_id: str,
    agent: Any = OracleAgent,
    seed: int = 1,
    conditions: Conditions | None = None,
) -> TrialResult:
    make = agent if isinstance(agent, type) else (lambda _ctx: agent)
    replay = await replay_gold(suite, suite.task(task_id))
    spec = PlannedTrial(task_id, 0, seed)
    return await run_trial(
        Trial(spec, suite, make, "test", replay.hash, max_steps=40, conditions=conditions)
    )


def test_the_hand_written_document_loads_with_its_gaps_listed(crm: Suite) -> None:
    warnings = [w for w in crm.warnings if w.startswith("backend 'custdb'")]
    assert [w.removeprefix("backend 'custdb': ") for w in warnings] == [
        "GET /ping: no operationId; the tool is named 'get_ping'",
        "GET /cust/search: no operationId; the tool is named 'get_cust_search'",
        "GET /cust/search: parameter 'by' has no schema; it is taken as a string",
        "GET /cust/search: parameter 'limit' has no type; it is taken as a string",
        "POST /ctct/{cid}: parameter 'cid' has no schema; it is taken as a string",
        "3 operation(s) document no error responses (get_ping, get_cust_search, "
        "inhouse_update_contact); their errors reach the agent as the service sends them",
        "tool 'get_ping' is not listed under tools:, so no agent sees it",
    ]
    search = crm.tools["get_cust_search"]
    assert (search.tier, search.weight, search.write, search.simulated) == (2, 0.06, False, False)
    # the tenant header is the backend's to send, not an argument
    assert sorted(search.schema.parameters["properties"]) == ["by", "limit", "q"]
    update = crm.tools["inhouse_update_contact"]
    assert sorted(update.schema.parameters["properties"]) == ["cid", "e_mail", "tel"]
    assert update.write and update.tier == 2


def test_each_trial_gets_a_tenant_seeded_as_the_world(crm: Suite) -> None:
    customers = crm.world["inhouse"]["customers"]
    agent = Calls([("inhouse_get_customer", {"id": key}) for key in customers])
    result = asyncio.run(trial(crm, "golden-nickname-three-systems", agent))
    served = {str(r.content["cust_id"]): r.content for r in agent.results}
    assert served == {k: {"cust_id": int(k), **v} for k, v in customers.items()}
    assert [(c.name, c.passed) for c in result.transcript.checks()] == [
        ("checks.py:custdb_unchanged", True)
    ]


def test_the_service_answers_in_its_own_style(crm: Suite) -> None:
    agent = Calls(
        [
            ("inhouse_get_customer", {"id": "cust 88999"}),
            ("get_cust_search", {"q": "example"}),
            ("get_cust_search", {"q": "raman", "by": "phone"}),
            ("get_cust_search", {"q": "ARAMAN@", "by": "email", "limit": 1}),
            ("inhouse_update_contact", {"cid": "88079-2", "e_mail": "not-an-email"}),
            ("inhouse_update_contact", {"cid": "ih:88079-2"}),
            ("inhouse_update_contact", {"cid": "88079-9", "tel": "303 555 4495"}),
            ("inhouse_update_contact", {"cid": "ih:88079-2", "tel": "+1 (303) 555-4495"}),
        ]
    )
    result = asyncio.run(trial(crm, STALE, agent))
    missing, everyone, bad_by, by_email, bad_email, nothing, no_contact, updated = agent.results
    assert missing == ToolResult(
        content={"error": {"status": 404, "body": "ERR 404: cust 'cust 88999' not found"}},
        is_error=True,
        error_kind="not_found",
    )
    assert everyone.content["n"] == 85 and len(everyone.content["rows"]) == 10
    assert bad_by.error_kind == "bad_request"
    assert bad_by.content["error"]["body"] == "ERR 400: bad by=phone"
    assert by_email.content["rows"][0]["hits"] == ["88079-2"]
    assert bad_email.error_kind == "invalid_request"
    assert bad_email.content["error"] == {
        "status": 422,
        "body": "ERR 422: 'not-an-email' is not an email address",
    }
    assert nothing.content["error"]["body"] == "ERR 400: nothing to update"
    assert no_contact.error_kind == "not_found"
    assert updated.content["tel"] == "3035554495" and updated.content["upd"] == "12/02/2026"
    checks = {c.name: (c.passed, c.message) for c in result.transcript.checks()}
    assert checks["checks.py:custdb_changed"] == (True, "holds")
    assert checks["checks.py:custdb_contact"][0] is False  # the e-mail is still the old one


def test_tools_with_a_tenant_header_need_a_trial(crm: Suite) -> None:
    context = ToolContext(world=World(crm.world), seed=0)
    tool = crm.tools["inhouse_get_customer"].tool
    with pytest.raises(InfraError, match=r"backend 'custdb': headers: .*\(outside a trial\)"):
        asyncio.run(tool.call({"id": "88079"}, context))


def test_gold_actions_with_real_reads_still_judge_the_world(crm: Suite) -> None:
    replay = asyncio.run(replay_gold(crm, crm.task("golden-nickname-three-systems")))
    assert replay.real_tools == ["inhouse_get_customer"] and replay.hash is not None
    gold = crm.task("golden-nickname-three-systems").spec.expect.actions or []
    calls = [(a.tool, dict(a.args)) for a in gold]
    calls[-1][1]["phone_from"] = "sf:0035g00000qVPfv"  # not the newest record's phone
    result = asyncio.run(trial(crm, "golden-nickname-three-systems", Calls(calls)))
    assert result.outcome == "failed"
    assert "final state differs from the gold actions' result" in result.reason


def test_oracle_passes_inhouse_tasks_through_the_service_under_faults(crm: Suite) -> None:
    tasks = [t.id for t in crm.tasks if any(a.tool in INHOUSE for a in t.spec.expect.actions or [])]
    assert len(tasks) == 8
    setup = VariantSetup(crm, Variant(faults="degraded"), time_scale=0.001)

    async def all_tasks() -> list[TrialResult]:
        runs = []
        for i, task_id in enumerate(tasks):
            conditions = setup.conditions(crm.task(task_id), seed=100 + i)
            runs.append(trial(crm, task_id, RetryingOracle, 100 + i, conditions))
        return await asyncio.gather(*runs)

    results = asyncio.run(all_tasks())
    assert [(r.task_id, r.outcome) for r in results] == [(t, "passed") for t in tasks]
    calls = [c for r in results for c in r.transcript.tool_calls() if c.name in INHOUSE]
    faults = {c.fault for c in calls if c.fault}
    assert {"server_error", "malformed_json"} <= faults
    served = [c for c in calls if c.fault in (None, "latency") and not c.is_error]
    assert {c.name for c in served} == set(INHOUSE)
    stale = next(r for r in results if r.task_id == STALE)
    assert [(c.name, c.passed) for c in stale.transcript.checks()] == [
        ("checks.py:custdb_contact", True),
        ("checks.py:custdb_changed", True),
    ]


def test_concurrent_trials_do_not_see_each_others_writes(crm: Suite) -> None:
    async def both() -> tuple[Calls, Calls, list[TrialResult]]:
        wrote, read = asyncio.Event(), asyncio.Event()
        writer = Calls(
            [("inhouse_update_contact", {"cid": "88079-2", "tel": "3035554495"})], done=wrote
        )
        reader = Calls([("inhouse_get_customer", {"id": "88079"})], after=wrote, done=read)
        after = Calls([("inhouse_get_customer", {"id": "88079"})], after=read)

        class Twice(Agent):
            async def reply(self, message: str, tools: Gateway) -> str:
                await writer.reply(message, tools)
                return await after.reply(message, tools)

        # the same task and seed, as two models' trials would have
        results = await asyncio.gather(trial(crm, STALE, Twice()), trial(crm, STALE, reader))
        return reader, after, list(results)

    reader, after, (written, untouched) = asyncio.run(both())
    seeded = crm.world["inhouse"]["customers"]["88079"]["ctcts"][1]
    assert seeded["cid"] == "88079-2" and seeded["tel"] != "3035554495"
    assert reader.results[0].content["ctcts"][1]["tel"] == seeded["tel"]
    assert after.results[0].content["ctcts"][1]["tel"] == "3035554495"
    changed = [
        c.message
        for r in (written, untouched)
        for c in r.transcript.checks()
        if c.name == "checks.py:custdb_changed"
    ]
    assert changed == ["holds", "CUSTDB records changed: none; expected 88079-2"]


def test_the_service_dying_mid_trial_is_an_infra_error() -> None:
    with load_suite(CRM) as suite:
        assert suite.runtime is not None
        service = suite.runtime.services["custdb"]

        class Killer(Agent):
            async def reply(self, message: str, tools: Gateway) -> str:
                await tools.call("get_cust_search", {"q": "raman"})
                assert service.process is not None
                service.process.kill()
                service.process.wait()
                await tools.call("inhouse_get_customer", {"id": "88079"})
                return "Done."

        result = asyncio.run(trial(suite, STALE, Killer()))
        assert (result.outcome, result.ended) == ("infra_error", "infra_error")
        assert "service of backend 'custdb' is unreachable" in result.reason
        assert "service 'custdb' died" in result.reason
        assert result.transcript.checks() == []


def test_regrade_starts_no_service_and_trials_start_it_on_demand(
    crm: Suite, tmp_path: Path
) -> None:
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(
        agent="oracle", trials=1, k=[1], tasks=f"{STALE},golden-nickname-three-systems"
    )
    report = asyncio.run(run_suite(crm, request, store))
    assert report.summary.counts.passed == 2
    with services_on_demand(), load_suite(CRM) as suite:
        assert suite.runtime is not None
        service = suite.runtime.services["custdb"]
        assert service.process is None and service.port > 0  # its address, not a process
        assert suite.content_hash == crm.content_hash
        assert asyncio.run(regrade_run(suite, store, report.run_id)) == 0
        assert service.process is None
        # what does need it starts it
        assert asyncio.run(trial(suite, STALE)).outcome == "passed"
        assert service.alive()
