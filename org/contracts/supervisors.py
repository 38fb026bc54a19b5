"""The LLM-backed supervisors' configuration: ``<organizations>/supervisors.yaml``.

One ``model`` block says which OpenAI-compatible endpoint and model the supervisors use
(OpenRouter by default), where the key comes from (the name of an environment variable,
never the key itself) and the limits of every call: timeout, retries, a token cap per run
and a daily cost budget. Each supervisor may override parts of that block, and has its
own triggers and time budget. ``roles/organizations/supervisors.example.yaml`` is a commented example (installed as ``<organizations>/supervisors.example.yaml``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from .common import Contract, SchemaVersion
from .vocabulary import SUPERVISOR_NAMES  # noqa: F401  (re-exported)

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_KEY_ENV = "OPENROUTER_API_KEY"

SupervisorName = Literal["code_style", "design", "internaliser"]

BaseUrl = Annotated[str, Field(pattern=r"^https?://[^\s/?#]+[^\s?#]*$", description="The endpoint's API root; /chat/completions is appended.")]
#: Upper case only: a key pasted here by mistake (they have lower-case letters) fails
#: validation instead of being echoed in a "variable ... is not set" message.
EnvName = Annotated[str, Field(pattern=r"^[A-Z_][A-Z0-9_]{0,127}$")]
Seconds = Annotated[float, Field(gt=0, le=3600)]

_KEY_ENV_HELP = ("Name of the environment variable that holds the API key (upper case; read at every call, never logged). "
                 "null: the endpoint needs no key (a local server).")
_JSON_MODE_HELP = ("Ask for structured output: response_format json_schema, falling back by itself to json_object "
                   "and then none where the endpoint refuses it. false: never send response_format; "
                   "the prompt asks for JSON either way.")
_BUDGET_HELP = "US dollars the supervisors may spend per UTC day, from the usage ledger; null: no daily limit."
_PRICE_HELP = ("US dollars per million {} tokens, used for the cost when the endpoint does not report it "
               "(OpenRouter does, in usage.cost).")


class ModelConfig(Contract):
    """The endpoint, model and limits of the supervisors' model calls."""

    base_url: BaseUrl = OPENROUTER_BASE_URL
    model: str = Field(min_length=1, max_length=200, description="Model id as the endpoint names it, e.g. anthropic/claude-sonnet-4.")
    api_key_env: EnvName | None = Field(DEFAULT_KEY_ENV, description=_KEY_ENV_HELP)
    json_mode: bool = Field(True, description=_JSON_MODE_HELP)
    temperature: float = Field(0.2, ge=0, le=2)
    timeout_seconds: float = Field(60.0, gt=0, le=600, description="Longest wait for one answer; never past the run's time budget.")
    max_retries: int = Field(3, ge=0, le=10, description="Retries after 429, 5xx, timeouts and connection errors; other errors are not retried.")
    backoff_seconds: float = Field(1.0, ge=0, le=60, description="First retry delay; it doubles on each retry, with jitter. A 429's Retry-After wins when longer.")
    max_tokens_per_request: int = Field(8000, ge=16, le=200_000, description="Most tokens one answer may have (the request's max_tokens); one answer may hold six documents.")
    max_tokens_per_run: int = Field(40_000, ge=64, le=2_000_000, description="Prompt plus answer tokens one supervisor run may use, repair round included; a call that would pass it is refused.")
    daily_budget_usd: float | None = Field(1.0, ge=0, description=_BUDGET_HELP)
    price_per_million_input: float = Field(0.0, ge=0, description=_PRICE_HELP.format("prompt"))
    price_per_million_output: float = Field(0.0, ge=0, description=_PRICE_HELP.format("answer"))


#: Override fields where an explicit null is a choice ("no key", "no daily limit"), not "unset".
_NULL_MEANS_SOMETHING = frozenset({"api_key_env", "daily_budget_usd"})


class ModelOverride(Contract):
    """Fields of the model block that one supervisor changes; the others come from ``model``."""

    base_url: BaseUrl | None = None
    model: str | None = Field(None, min_length=1, max_length=200)
    api_key_env: EnvName | None = Field(None, description="As in model; null here means no key.")
    json_mode: bool | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    timeout_seconds: float | None = Field(None, gt=0, le=600)
    max_retries: int | None = Field(None, ge=0, le=10)
    backoff_seconds: float | None = Field(None, ge=0, le=60)
    max_tokens_per_request: int | None = Field(None, ge=16, le=200_000)
    max_tokens_per_run: int | None = Field(None, ge=64, le=2_000_000)
    daily_budget_usd: float | None = Field(None, ge=0)
    price_per_million_input: float | None = Field(None, ge=0)
    price_per_million_output: float | None = Field(None, ge=0)


class SupervisorSettings(Contract):
    """When one supervisor runs, and how long a run may take."""

    enabled: bool = True
    every_tasks: int | None = Field(None, ge=1, le=1000, description="Run after this many completed tasks; null: not periodically.")
    on_milestone: bool = Field(True, description="Run when a milestone is marked (a0org supervisors run, or milestone_every_tasks).")
    on_abort: bool = Field(False, description="Run after a task ends in a PACE emergency or an error.")
    on_replan: bool = Field(False, description="Run after a task that abandoned its plan for another (its PACE level reached contingent).")
    time_budget_seconds: Seconds = Field(120.0, description="A run's deadline, retries and the repair round included. The agent waits at most wait_seconds of it.")
    model: ModelOverride | None = None


class CodeStyleSettings(SupervisorSettings):
    """Code style: every 5 tasks and on milestones."""

    every_tasks: int | None = Field(5, ge=1, le=1000)


class DesignSettings(SupervisorSettings):
    """Design: on milestones, after aborted tasks and after a re-plan."""

    on_abort: bool = True
    on_replan: bool = True


class InternaliserSettings(SupervisorSettings):
    """Internaliser: every 3 tasks and on milestones."""

    every_tasks: int | None = Field(3, ge=1, le=1000)


class Supervisors(Contract):
    code_style: CodeStyleSettings = Field(default_factory=CodeStyleSettings)
    design: DesignSettings = Field(default_factory=DesignSettings)
    internaliser: InternaliserSettings = Field(default_factory=InternaliserSettings)


class UrgencyWeights(Contract):
    """How much each signal adds to the urgency that pulls the next runs forward."""

    qa_failure: float = Field(0.3, ge=0)
    task_abort: float = Field(1.0, ge=0)
    carry_forward_churn: float = Field(0.2, ge=0)
    assessor_drift: float = Field(0.5, ge=0)


class Urgency(Contract):
    weights: UrgencyWeights = Field(default_factory=UrgencyWeights)
    threshold: float = Field(1.0, gt=0, description="At this urgency the supervisors run regardless of their counters; then it resets to 0.")


class KnowledgeSettings(Contract):
    root: str | None = Field(None, min_length=1, description="The knowledge store's folder; relative to the organizations folder. Default: knowledge.")
    injection_token_budget: int = Field(2000, ge=100, le=50_000, description="Most tokens the PROJECT KNOWLEDGE section may take.")
    establish_after_tasks: int = Field(5, ge=1, le=1000, description="Clean tasks that were shown a provisional document, after which it becomes established.")
    recent_lessons: int = Field(5, ge=0, le=100)


class DirectiveSettings(Contract):
    """The directive queue: what waits for a person, how long each kind may wait, how many, and the section's size."""

    require_approval: bool = Field(False, description="true: every new directive waits in the review queue until a person accepts it. "
                                   "false: a directive reaches the agent unless screening quarantines it (or it is critical).")
    cleanup_max_age_tasks: int = Field(15, ge=1, le=1000, description="Cleanup directives unaddressed for this many tasks are dropped.")
    cleanup_cap: int = Field(10, ge=1, le=100, description="Most pending cleanup directives; the oldest goes when a new one arrives.")
    functional_max_age_tasks: int = Field(30, ge=1, le=1000, description="Functional directives unaddressed for this many tasks are dropped.")
    functional_cap: int = Field(10, ge=1, le=100, description="Most pending functional directives; the oldest goes when a new one arrives.")
    critical_max_age_tasks: int = Field(20, ge=1, le=1000, description="Critical directives (a person's) unaddressed for this many tasks are dropped.")
    critical_cap: int = Field(3, ge=1, le=100, description="Most pending critical directives; the oldest goes when a new one arrives.")
    injection_token_budget: int = Field(800, ge=100, le=20_000, description="Most tokens the ACTIVE DIRECTIVES section may take; "
                                        "directives that do not fit wait, and the section says how many.")


class SupervisorsConfig(Contract):
    """``supervisors.yaml``: the model, the three supervisors, urgency, knowledge and directives."""

    schema_version: SchemaVersion = 1
    enabled: bool = Field(True, description="false switches every LLM-backed supervisor off.")
    model: ModelConfig | None = Field(None, validate_default=True, description="Required while enabled is true.")
    supervisors: Supervisors = Field(default_factory=Supervisors)
    milestone_every_tasks: int | None = Field(None, ge=1, le=10_000, description="Treat every Nth completed task as a milestone; null: only when marked by hand.")
    wait_seconds: float = Field(20.0, ge=0, le=3600, description="Longest a task's start waits for supervisor runs still going; "
                                "later results are applied at the next task's start or end. 0: never wait.")
    urgency: Urgency = Field(default_factory=Urgency)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    directives: DirectiveSettings = Field(default_factory=DirectiveSettings)
    prompt_token_budget: int = Field(3000, ge=200, le=60_000,
                                     description="Most tokens the supervisors add to one prompt, both sections together: the "
                                                 "directives first (within directives.injection_token_budget), then as much "
                                                 "knowledge as fits (within knowledge.injection_token_budget).")
    never_read: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=200,
        description="Glob patterns of more files the supervisors never read (besides the built-in credential files), "
                    "matched against the end of the path: '*.secret', 'config/prod.yaml'.")

    @field_validator("model")
    @classmethod
    def _model_when_enabled(cls, value: ModelConfig | None, info: ValidationInfo) -> ModelConfig | None:
        if value is None and info.data.get("enabled", True):
            raise ValueError("required while enabled is true (at least model: {model: <model id>})")
        return value

    def settings_for(self, name: str) -> SupervisorSettings:
        """One supervisor's settings; ``KeyError`` for an unknown name."""
        if name not in SUPERVISOR_NAMES:
            raise KeyError(name)
        return getattr(self.supervisors, name)

    def model_for(self, name: str) -> ModelConfig:
        """The model block with the supervisor's overrides applied; ``KeyError`` for an unknown name.

        ``ValueError`` when there is no model block at all (only when ``enabled`` is false).
        """
        override = self.settings_for(name).model
        if self.model is None:
            raise ValueError("supervisors.yaml has no model block")
        if override is None:
            return self.model
        changes: dict[str, Any] = {key: value for key, value in override.model_dump(exclude_unset=True).items()
                                   if value is not None or key in _NULL_MEANS_SOMETHING}
        return ModelConfig.model_validate({**self.model.model_dump(), **changes})

    def enabled_supervisors(self) -> list[str]:
        """Names of the supervisors that may run, in running order (none when switched off)."""
        if not self.enabled:
            return []
        return [name for name in SUPERVISOR_NAMES if self.settings_for(name).enabled]

    def knowledge_root(self, organizations_root: Path) -> Path:
        """The knowledge store folder: ``knowledge.root`` (relative to the organizations folder) or ``knowledge``."""
        configured = Path(self.knowledge.root) if self.knowledge.root else Path("knowledge")
        return configured if configured.is_absolute() else organizations_root / configured
