"""Schema drift: the API the agent sees changes; calls are mapped back to the suite's tools.

A drift variant is a list of declarative transforms applied in order to the suite's tools.
The world never drifts: every call the agent makes through a drifted API reaches the suite's
own tool with the suite's own argument names, so expected final states stay valid.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from toolproof.spec.conditions import (
    AddDistractors,
    AddRequiredParam,
    ChangeType,
    DriftTransform,
    MergeTools,
    RemoveOptionalParam,
    RenameField,
    RenameParam,
    RenameTool,
    SplitTool,
)
from toolproof.tools.base import ToolResult, ToolSchema


class DriftError(ValueError):
    """A transform that does not fit the suite's tools (a suite error)."""


@dataclass
class Route:
    """One tool as the agent sees it, and how its calls reach a suite tool."""

    name: str
    target: str | None
    description: str
    properties: dict[str, Any]
    required: list[str]
    params: dict[str, str] = field(default_factory=dict)
    integers: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    merged: dict[str, Route] = field(default_factory=dict)

    def schema(self) -> ToolSchema:
        parameters: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            parameters["required"] = self.required
        parameters["additionalProperties"] = False
        return ToolSchema(name=self.name, description=self.description, parameters=parameters)


def _error(kind: str, message: str) -> ToolResult:
    return ToolResult.error(kind, message)


class DriftLayer:
    """The drifted API of one variant: schemas, and mappings both ways."""

    def __init__(self, transforms: list[DriftTransform], schemas: dict[str, ToolSchema]) -> None:
        self.routes: list[Route] = [_identity(s) for s in schemas.values()]
        self.field_renames: dict[str, dict[str, str]] = {}
        for transform in transforms:
            self._apply(transform)
            names = [route.name for route in self.routes]
            twice = sorted({name for name in names if names.count(name) > 1})
            if twice:
                raise DriftError(f"two tools would be named '{twice[0]}'")

    @property
    def schemas(self) -> list[ToolSchema]:
        return [route.schema() for route in self.routes]

    def _find(self, tool: str, *, merged_ok: bool = False) -> Route:
        for route in self.routes:
            if route.target == tool or route.name == tool:
                if route.merged and not merged_ok:
                    raise DriftError(
                        f"'{tool}' is a merged tool: transform its tools before merging them"
                    )
                return route
        raise DriftError(f"no tool '{tool}' to transform (it may have been renamed or merged)")

    def _targets(self) -> list[str]:
        """Every suite tool the drifted API reaches, merged ones included."""
        out = []
        for route in self.routes:
            for member in route.merged.values() or [route]:
                if member.target:
                    out.append(member.target)
        return out

    def _apply(self, t: DriftTransform) -> None:
        if isinstance(t, RenameTool):
            self._find(t.tool, merged_ok=True).name = t.to
        elif isinstance(t, RenameParam):
            route = self._find(t.tool)
            if t.param not in route.properties:
                raise DriftError(f"{t.tool} has no parameter '{t.param}'")
            route.properties = {
                (t.to if k == t.param else k): v for k, v in route.properties.items()
            }
            route.required = [t.to if r == t.param else r for r in route.required]
            route.params[t.to] = route.params.pop(t.param, t.param)
            if t.param in route.integers:
                route.integers[t.to] = route.integers.pop(t.param)
        elif isinstance(t, RenameField):
            if t.tool == "*":
                targets = self._targets()
            else:
                route = self._find(t.tool, merged_ok=True)
                members = route.merged.values() or [route]
                targets = [m.target for m in members if m.target]
            for target in targets:
                self.field_renames.setdefault(target, {})[t.field] = t.to
        elif isinstance(t, AddRequiredParam):
            route = self._find(t.tool)
            route.properties[t.param] = {**t.schema_, "description": t.description or t.param}
            route.required.append(t.param)
            route.fixed[t.param] = t.value
        elif isinstance(t, ChangeType):
            route = self._find(t.tool)
            if t.param not in route.properties:
                raise DriftError(f"{t.tool} has no parameter '{t.param}'")
            old = route.properties[t.param]
            route.properties[t.param] = {
                "type": "integer",
                "description": old.get("description", ""),
            }
            route.integers[t.param] = t.prefix
        elif isinstance(t, RemoveOptionalParam):
            route = self._find(t.tool)
            if t.param not in route.properties:
                raise DriftError(f"{t.tool} has no parameter '{t.param}'")
            if t.param in route.required:
                raise DriftError(f"{t.tool}: '{t.param}' is required, so it cannot be removed")
            del route.properties[t.param]
        elif isinstance(t, SplitTool):
            self._split(t)
        elif isinstance(t, MergeTools):
            self._merge(t)
        elif isinstance(t, AddDistractors):
            for d in t.tools:
                properties = copy.deepcopy(d.parameters.get("properties", {}))
                required = list(d.parameters.get("required", []))
                self.routes.append(Route(d.name, None, d.description, properties, required))

    def _split(self, t: SplitTool) -> None:
        route = self._find(t.tool)
        index = self.routes.index(route)
        parts = []
        for name, params in t.into.items():
            unknown = [p for p in params if p not in route.properties]
            if unknown:
                raise DriftError(f"split of {t.tool}: no parameter {unknown[0]!r}")
            parts.append(
                Route(
                    name=name,
                    target=route.target,
                    description=f"{route.description} (by {', '.join(params)})",
                    properties={p: route.properties[p] for p in params},
                    required=[r for r in route.required if r in params] or list(params[:1]),
                    params={p: route.params.get(p, p) for p in params},
                    integers={p: v for p, v in route.integers.items() if p in params},
                    fixed=dict(route.fixed),
                )
            )
        self.routes[index : index + 1] = parts

    def _merge(self, t: MergeTools) -> None:
        members = [self._find(name) for name in t.tools]
        if any(m.target is None for m in members):
            raise DriftError("only tools that reach the suite can be merged (not distractors)")
        properties: dict[str, Any] = {
            "action": {"type": "string", "enum": [m.name for m in members],
                       "description": "Which operation to perform."}
        }  # fmt: skip
        for member in members:
            for key, value in member.properties.items():
                properties.setdefault(key, value)
        merged = Route(
            name=t.into,
            target=None,
            description="; ".join(f"{m.name}: {m.description}" for m in members),
            properties=properties,
            required=["action"],
            merged={m.name: m for m in members},
        )
        first = self.routes.index(members[0])
        self.routes = [r for r in self.routes if r not in members]
        self.routes.insert(min(first, len(self.routes)), merged)

    # ------------------------------------------------------------ calls

    def route(self, name: str) -> Route | None:
        return next((r for r in self.routes if r.name == name), None)

    def to_suite(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[Route, str, dict[str, Any]] | ToolResult:
        """(route, suite tool, suite arguments) for an agent's call, or the error it gets."""
        route = self.route(name)
        if route is None:
            return _error("unknown_tool", f"no tool named '{name}'")
        args = dict(arguments)
        if route.merged:
            action = args.pop("action", None)
            if action not in route.merged:
                options = ", ".join(route.merged)
                return _error("invalid_arguments", f"action: must be one of {options}")
            route = route.merged[action]
        if route.target is None:
            return _error("deprecated", f"410 Gone: '{name}' is deprecated and no longer served")
        for param, value in route.fixed.items():
            if param not in args:
                return _error("invalid_arguments", f"{param}: missing required argument")
            if args.pop(param) != value:
                return _error("invalid_arguments", f"{param}: invalid value")
        unknown = [k for k in args if k not in route.properties]
        if unknown:
            return _error("invalid_arguments", f"{unknown[0]}: unexpected argument")
        out: dict[str, Any] = {}
        for key, value in args.items():
            if key in route.integers:
                if not isinstance(value, int) or isinstance(value, bool):
                    return _error("invalid_arguments", f"{key}: must be an integer")
                value = f"{route.integers[key]}{value}"
            out[route.params.get(key, key)] = value
        return route, route.target, out

    def present(self, tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """How the agent must call a suite tool with these arguments under this drift."""
        for route in self.routes:
            candidates = list(route.merged.values()) if route.merged else [route]
            for candidate in candidates:
                if candidate.target != tool:
                    continue
                inverse = {suite: agent for agent, suite in candidate.params.items()}
                names = {key: inverse.get(key, key) for key in arguments}
                if not set(names.values()) <= set(candidate.properties):
                    continue
                args: dict[str, Any] = {}
                for key, value in arguments.items():
                    agent_key = names[key]
                    if agent_key in candidate.integers:
                        digits = str(value).removeprefix(candidate.integers[agent_key])
                        if not digits.isdigit():
                            raise DriftError(
                                f"{tool}.{key} = {value!r} has no integer form under change_type"
                            )
                        value = int(digits)
                    args[agent_key] = value
                args.update(candidate.fixed)
                if route.merged:
                    args["action"] = candidate.name
                return route.name, args
        raise DriftError(f"the drifted API cannot express {tool}({', '.join(arguments)})")

    def result_to_agent(self, tool: str, content: Any) -> Any:
        renames = self.field_renames.get(tool)
        return _rename_fields(content, renames) if renames else content


def _identity(schema: ToolSchema) -> Route:
    parameters = schema.parameters
    return Route(
        name=schema.name,
        target=schema.name,
        description=schema.description,
        properties=copy.deepcopy(parameters.get("properties", {})),
        required=list(parameters.get("required", [])),
    )


def _rename_fields(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {renames.get(k, k): _rename_fields(v, renames) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_fields(v, renames) for v in value]
    return value
