"""``oriole check --aws``: after a deploy, exercise the deployed system through its own functions and roles, and
say of each part that it works, or exactly what to do about it.

The checks, in order: both stacks and their state; the code version every function of both flows runs; the
catalog's parameters and the shipped prompts under the deployment's prefix; then, all at once, real executions
of the deployed state machines: a short baseline experiment (which also shows that the functions reach the
database through the proxy), one turn of one action for each Bedrock model the deployment grants and each
allow-listed model server, under the agent function's own role and network, and a one-item sweep. Executions
are judged by Step Functions alone (no database connection is needed on this machine), and each failure's
reason is mapped to its fix (``bedrock_fix``, ``server_fix``, ``stack_fix``).

The experiments it runs are stored archived from their start (``archived`` in their input, the sweep file's for
the sweep's): they test the system, not a model, so they leave every view, report, comparison and export, as
``oriole experiments archive`` would have them. They keep their rows, tagged ``check:<stamp>`` in their comment
(the sweep's with ``sweep:check-<stamp>``).
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from botocore.exceptions import ClientError

from oriole import catalog
from oriole.config import parse_stored
from oriole.core import prices, sweep_plan
from oriole.core.sweep_plan import SweepFile, validate
from oriole.environment import BEDROCK_MODEL_IDS, Environment
from oriole.environment import CODE_VERSION as CODE_VERSION_VARIABLE
from oriole.errors import InvalidParameter, SweepFileError
from oriole.lifecycle import deployment
from oriole.lifecycle.experiments import failure_reason
from oriole.lifecycle.task_io import CaughtError
from oriole.provider_registry import PROVIDERS
from oriole.statuses import TERMINAL_EXECUTION_STATUSES, ExecutionStatus, NextStep
from oriole_workstation import cloud, prompts, sweep_runs
from oriole_workstation.database import CHECKOUT
from oriole_workstation.launcher import current_execution, execution_name

if TYPE_CHECKING:
    from mypy_boto3_bedrock import BedrockClient
    from mypy_boto3_cloudformation import CloudFormationClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_lambda.type_defs import AccountLimitTypeDef
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_stepfunctions import SFNClient

Execution = Mapping[str, Any]  # an execution as DescribeExecution gives it

OK, FAIL, SKIP = "ok", "FAIL", "skip"
USABLE_STACK_STATUSES = (
    "CREATE_COMPLETE",
    "UPDATE_COMPLETE",
    "UPDATE_ROLLBACK_COMPLETE",
    "IMPORT_COMPLETE",
    "IMPORT_ROLLBACK_COMPLETE",
)  # its resources exist: the rest can be checked
MAZE = "perfect-7"
# A turn of one action and nothing more: the model answers once; a model that answers without a tool call ends
# the experiment after that one turn (maxStalledTurns 1), which still shows that it answered.
ONE_ACTION = {"maxMoves": 1, "maxActionsPerTurn": 1, "maxStalledTurns": 1}
# The baseline's few turns each in an execution of its own: every turn after the first exercises ContinueAsNew
# (the successor's start, the hand-over of the experiment) on the deployed state machine.
CONTINUED = {"maxMoves": 100, "maxActionsPerTurn": 4, "maxTurnsPerExecution": 1}
# The run the check stops to see the status-change finalizer close it: a random walk on the largest perfect maze
# (thousands of moves from the goal), a move a turn; the wall clock ends it if the check is gone before it stops it.
STOP_MAZE = "perfect-31"
STOPPED = {"maxActionsPerTurn": 1, "maxDurationMinutes": 15}
START_STATE = "StartExperiment"
EARLY_EVENTS = 50  # an execution's first events, which hold StartExperiment's end (its retries included)
STOP_CAUSE = "oriole check --aws: the status-change finalizer closes the experiment of a stopped execution"
# The spend sweep (--paid): a cap far below one model call, and a limit that the first run's cost uses up, so the
# first experiment is censored by its maxCostUsd after one call and the spend limit keeps the second from starting.
SPEND_CAP_USD = 0.000001  # the least maxCostUsd (the cost columns' precision)
SPEND_LIMIT_USD = 0.00001
CAPPED = {"maxMoves": 2, "maxActionsPerTurn": 1, "maxStalledTurns": 1, "maxCostUsd": SPEND_CAP_USD}
TEST_EVENT_SOURCE = "oriole.check"  # the event the finalizer refuses, sent to see its dead letters
OUTPUT_MISSING = "this deployment has no output {output}: deploy this checkout (`make deploy`) to check it"
AGENT_ENDINGS = ("AgentStalled", "AgentGaveUp")  # the model answered, without a move: the path works
DATABASE_ERRORS = ("OperationalError", "InterfaceError", "DatabaseBusy", "DatabaseNotConfigured")
CHECKOUT_VERSION_SECONDS = 120
CODE_VERSION = re.compile(r"^\S+\+[0-9a-f]{12}$", re.MULTILINE)  # infra.bundling.code_version()
REQUIRED_OUTPUTS = ("StateMachineArn", "SweepStateMachineArn")
SEE_EXECUTION = "open the execution in the Step Functions console (its failed state says why)"


@dataclass(frozen=True)
class Check:
    """One line of the check: ``ok``, ``FAIL`` with the fix, or ``skip`` with why (in ``detail``)."""

    name: str
    status: str
    detail: str
    fix: str | None = None
    target: str | None = None  # the model or server a per-target check is about

    def as_json(self) -> dict:
        return asdict(self)


def ok(name: str, detail: str, target: str | None = None) -> Check:
    return Check(name, OK, detail, target=target)


def failed(name: str, detail: str, fix: str, target: str | None = None) -> Check:
    return Check(name, FAIL, detail, fix, target)


def skipped(name: str, why: str, target: str | None = None) -> Check:
    return Check(name, SKIP, why, target=target)


@dataclass(frozen=True)
class Aws:
    """The clients the check uses, with the researcher's own credentials."""

    cloudformation: CloudFormationClient
    sfn: SFNClient
    awslambda: LambdaClient
    ssm: SSMClient
    region: str
    bedrock: BedrockClient
    quotas: Any  # Service Quotas (its stubs are not among the project's)
    sqs: SQSClient


@dataclass(frozen=True)
class Options:
    server_models: Mapping[str, str] = field(default_factory=dict)  # provider -> the model its servers are asked for
    timeout_seconds: float = 900.0
    poll_seconds: float = 5.0
    paid: bool = False  # also the steps that call a model beyond one call per granted model (--paid)


# --- the stacks ------------------------------------------------------------------------------------------------


def stack_fix(stack: str, status: str | None) -> str | None:
    """What to do about a stack in ``status`` (None: it does not exist); None when there is nothing to do."""
    events = (
        f"`aws cloudformation describe-stack-events --stack-name {stack} --query "
        "\"StackEvents[?contains(ResourceStatus, 'FAILED')].[LogicalResourceId,ResourceStatusReason]\"` "
        "says why"
    )
    if status is None:
        return "deploy both stacks: `make deploy` (`npx cdk deploy --all -c deployment=<Name>` for a named one)"
    if status in ("CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"):
        return None
    if status == "ROLLBACK_COMPLETE":
        return (
            f"its first deploy failed and rolled back, and such a stack cannot be updated: {events}; fix that, "
            f"delete it (`aws cloudformation delete-stack --stack-name {stack}`) and `make deploy` again"
        )
    if status == "UPDATE_ROLLBACK_COMPLETE":
        return f"the last deploy failed and rolled back (the previous version runs): {events}; fix that, `make deploy`"
    if status == "UPDATE_ROLLBACK_FAILED":
        return (
            f"{events}; then `aws cloudformation continue-update-rollback --stack-name {stack}` (with "
            "`--resources-to-skip` for what cannot roll back) and `make deploy` again"
        )
    if status.endswith("_FAILED"):
        return (
            f"{events}; delete it (`aws cloudformation delete-stack --stack-name {stack}`, with "
            "`--retain-resources` for what cannot be deleted) and `make deploy` again"
        )
    if status.endswith("_IN_PROGRESS"):
        return (
            "CloudFormation is still at work on it: wait for it to end (its console shows the progress) and check again"
        )
    return f"{events}; `make deploy`"


def stacks_check(statuses: dict[str, str | None], missing_outputs: list[str]) -> Check:
    """Both stacks exist and are complete, and the orchestrator has the outputs the check uses; the first stack at
    fault names the fix."""
    shown = ", ".join(f"{stack} {status or 'missing'}" for stack, status in statuses.items())
    for stack, status in statuses.items():
        fix = stack_fix(stack, status)
        if fix is not None:
            return failed("stacks", shown, f"{stack}: {fix}")
    if missing_outputs:
        return failed(
            "stacks",
            f"{shown}; no output {', '.join(missing_outputs)}",
            "an earlier version deployed it: `make deploy` from this checkout",
        )
    return ok("stacks", shown)


def stacks_usable(statuses: dict[str, str | None]) -> bool:
    return all(status in USABLE_STACK_STATUSES for status in statuses.values())


def not_found_message(deployment_name: str, others: list[str], region: str) -> str:
    """Why there is nothing to check, and how to point the check at a deployment (or make one)."""
    found = (
        f"this account has {', '.join(others)}: run `ORIOLE_DEPLOYMENT={others[0]} oriole check --aws`"
        if others
        else "deploy with `make deploy` (`npx cdk deploy --all -c deployment=<Name>` for a named one)"
    )
    return (
        f"no deployment {deployment_name} (stack {catalog.orchestrator_stack(deployment_name)}) in region "
        f"{region} of these credentials; {found}; or choose the account and region with AWS_PROFILE and "
        "AWS_REGION"
    )


# --- the code the functions run --------------------------------------------------------------------------------


@functools.cache
def checkout_code_version() -> str | None:
    """What ``make deploy`` from this checkout would deploy (``infra.bundling.code_version``), when the CLI runs
    from a checkout with the CDK toolchain; None otherwise. In a child process: importing the CDK starts its
    Node.js kernel, which this process should not keep."""
    if not (CHECKOUT / "infra" / "bundling.py").is_file():
        return None
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from infra.bundling import code_version; print(code_version())"],
            cwd=CHECKOUT,
            capture_output=True,
            text=True,
            timeout=CHECKOUT_VERSION_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = CODE_VERSION.search(done.stdout)
    return found.group(0) if done.returncode == 0 and found else None


def code_check(versions: dict[str, str | None], checkout: str | None) -> Check:
    """Every function of the flows runs one code version, the one this checkout would deploy (when known)."""
    by_version: dict[str | None, list[str]] = {}
    for function, version in sorted(versions.items()):
        by_version.setdefault(version, []).append(function)
    if len(by_version) != 1 or None in by_version:
        *odd, (most, rest) = sorted(by_version.items(), key=lambda item: (len(item[1]), str(item[0])))
        shown = [f"{version or 'no ORIOLE_CODE_VERSION'} in {', '.join(functions)}" for version, functions in odd]
        shown.append(f"{most or 'no ORIOLE_CODE_VERSION'} in the other {len(rest)}")
        return failed("code", f"the functions run different code: {'; '.join(shown)}", "deploy again: `make deploy`")
    [version] = by_version
    detail = f"{version} in all {len(versions)} functions"
    if checkout is None:
        return ok("code", f"{detail} (not compared: this CLI does not run from a checkout with the CDK toolchain)")
    if checkout != version:
        return failed(
            "code",
            f"{detail}; this checkout would deploy {checkout}",
            "deploy this checkout (`make deploy`), or check out the commit that was deployed",
        )
    return ok("code", f"{detail}, as this checkout would deploy")


# --- parameters and prompts ------------------------------------------------------------------------------------


def parameters_check(values: dict[str, str], prefix: str) -> Check:
    """Every catalog parameter read at start exists under ``prefix`` with a value the catalog accepts."""
    expected = [p for p in catalog.CATALOG if p.overridable]
    missing, invalid = [], []
    for param in expected:
        name = f"{prefix}/{param.path}"
        if name not in values:
            missing.append(name)
            continue
        try:
            parse_stored(param, values[name])
        except InvalidParameter as err:
            invalid.append((param, str(err)))
    if not missing and not invalid:
        return ok("parameters", f"{len(expected)} catalog parameters under {prefix}, every value valid")
    problems = ([f"missing: {', '.join(missing)}"] if missing else []) + [why for _, why in invalid]
    fixes = (
        [
            "`make deploy` creates the missing ones again (or `oriole params set KEY VALUE --aws`, defaults in "
            "`oriole params list`)"
        ]
        if missing
        else []
    ) + [
        f"`oriole params set {param.key} {param.default_text} --aws` restores the default of {param.key}"
        for param, _ in invalid
    ]
    return failed("parameters", "; ".join(problems), "; ".join(fixes))


def prompts_check(stored: dict[str, str]) -> Check:
    """The shipped prompt versions exist and are usable; other versions are listed."""
    bad = []
    for version in catalog.SHIPPED_PROMPT_VERSIONS:
        if version not in stored:
            bad.append(f"{version} missing")
            continue
        try:
            prompts.check(version, stored[version])
        except prompts.PromptRejected as err:
            bad.append(f"{version}: {err}")
    if bad:
        return failed(
            "prompts",
            "; ".join(bad),
            "`make deploy` stores the shipped prompts again (or `oriole prompts put VERSION --file PROMPT.md --aws`)",
        )
    shipped = [
        f"{v}{'' if stored[v] == catalog.shipped_prompt(v) else ' (changed since shipped)'}"
        for v in catalog.SHIPPED_PROMPT_VERSIONS
    ]
    others = sorted(set(stored) - set(catalog.SHIPPED_PROMPT_VERSIONS))
    return ok("prompts", ", ".join(shipped) + (f"; also {', '.join(others)}" if others else ""))


def lambda_quota_check(account_limit: AccountLimitTypeDef) -> Check:
    """The account's Lambda concurrency (``GetAccountSettings``' ``AccountLimit``) and what it leaves a sweep:
    PlanSweep shares a sweep's caps out within it (``sweep_plan.experiments_at_once``), so a new account's 10 runs a
    sweep slowly rather than throttled; too little for one experiment at once is a failure with its fix."""
    total = account_limit.get("ConcurrentExecutions", 0)
    unreserved = account_limit.get("UnreservedConcurrentExecutions", total)
    quota = f"{total} concurrent executions ({unreserved} unreserved)"
    try:
        at_once = sweep_plan.experiments_at_once(unreserved, 1)
    except SweepFileError as err:
        return failed("lambda", quota, str(err))
    defaults = sum(p.sweep_cap for p in PROVIDERS.values())
    detail = f"{quota}: a sweep runs at most {at_once} experiments at once"
    if at_once is not None and at_once < defaults:
        detail += (
            f", fewer than the providers' default caps ({defaults}); before a large sweep ask for 1,000 "
            "(Service Quotas, AWS Lambda, Concurrent executions)"
        )
    return ok("lambda", detail)


def bedrock_quotas(service_quotas: Any) -> list[dict[str, Any]]:
    """Every Amazon Bedrock quota of the account in this region (Service Quotas' ``ListServiceQuotas``)."""
    pages = service_quotas.get_paginator("list_service_quotas").paginate(ServiceCode="bedrock")
    return [quota for page in pages for quota in page["Quotas"]]


def bedrock_quota_check(model_id: str, model: Mapping[str, Any], quotas: list[dict[str, Any]]) -> Check:
    """The account's per-minute quotas for a granted model (``model``: its ``GetFoundationModel`` details), as
    Service Quotas names them (``... per minute for Anthropic Claude Haiku 4.5``). A quota of 0 (what a new
    account may get) throttles every call of the experiments: a failure with the increase to ask for."""
    named = f" for {model.get('providerName', '')} {model.get('modelName', '')}".lower()
    found = [q for q in quotas if q["QuotaName"].lower().endswith(named) and "per minute" in q["QuotaName"]]
    if not found:
        return skipped("quotas", f"Service Quotas names no per-minute quota{named}", model_id)
    values = "; ".join(f"{q['QuotaName'].split(' for ')[0]}: {q['Value']:,.0f}" for q in found)
    zero = [q["QuotaName"] for q in found if not q["Value"]]
    if zero:
        return failed(
            "quotas",
            values,
            "every call of this model is throttled until these quotas are raised: ask for an increase in Service "
            f"Quotas (Amazon Bedrock): {'; '.join(zero)}",
            model_id,
        )
    return ok("quotas", values, model_id)


# --- experiments through the deployed state machine -------------------------------------------------------------


class Outcome(NamedTuple):
    """How an execution the check started ended: ``worked`` when the path it tests works."""

    worked: bool
    detail: str
    error: str | None = None  # the execution's error name
    reason: str | None = None  # ``Error: message``


def experiment_outcome(execution: Execution | None, waited: float) -> Outcome:
    """Judge an experiment by its (last) execution alone: SUCCEEDED is a run to its goal or its limit; an agent
    ending (stalled, gave up) means the model answered; anything else failed with its reason."""
    if execution is None or execution["status"] not in TERMINAL_EXECUTION_STATUSES:
        return Outcome(False, f"still running after {waited:.0f} s", "Timeout", "the check stopped waiting")
    if execution["status"] == ExecutionStatus.SUCCEEDED:
        state = json.loads(execution.get("output") or "{}")
        decision = state.get("progress") or {}
        actions = decision.get("actions")
        ending = "found the goal" if decision.get("decision") == NextStep.SUCCESS else "reached its limit"
        return Outcome(True, f"experiment {state.get('experimentId')} {ending} after {actions} action(s)")
    caught = CaughtError(Error=execution.get("error"), Cause=execution.get("cause"))
    reason = (
        failure_reason(caught)
        if execution["status"] == ExecutionStatus.FAILED
        else f"execution {execution['status']}" + (f": {failure_reason(caught)}" if caught.Error else "")
    )
    if execution.get("error") in AGENT_ENDINGS:
        return Outcome(True, f"the model answered without a move ({reason})")
    return Outcome(False, reason, execution.get("error") or execution["status"], reason)


def console_link(region: str, execution_arn: str) -> str:
    return f"https://{region}.console.aws.amazon.com/states/home?region={region}#/v2/executions/details/{execution_arn}"


def bedrock_fix(model_id: str, outcome: Outcome, region: str) -> str:
    """The one thing to do about a Bedrock call that failed, from its error and Bedrock's message."""
    reason, text = outcome.reason or "", (outcome.reason or "").lower()
    again = "then run `oriole check --aws` again"
    if "marketplace" in text:
        return (
            "the first call of a third-party model subscribes the account through AWS Marketplace, and that "
            "call must come from a principal allowed aws-marketplace:Subscribe and aws-marketplace:"
            "ViewSubscriptions (the functions' role is not, on purpose): once per account, as an administrator, "
            f"call the model once (`aws bedrock-runtime converse --region {region} --model-id {model_id} "
            '--messages \'[{"role":"user","content":[{"text":"hi"}]}]\'`, or its Bedrock console '
            f"playground), wait up to 15 minutes for the subscription, {again}"
        )
    if "use case" in text:
        return (
            "Anthropic models need the one-time use-case form: in the Bedrock console of this region, open an "
            "Anthropic model in the Model catalog and submit the use-case details (once per account; an "
            "organization's management account can submit it for all), wait up to 15 minutes, " + again
        )
    if "service control policy" in text:
        return (
            "an SCP of your organization denies the call: a cross-region profile routes to other regions of "
            "its geography, so ask the organization's administrator to allow bedrock:InvokeModel in every "
            "region the profile routes to (`aws bedrock get-inference-profile --inference-profile-identifier "
            f"{model_id}` lists them), or grant a model in this region's geography only"
        )
    if "not authorized to perform" in text:
        return (
            f"the agent function's role may not invoke {model_id}: deploy with it granted (`npx cdk deploy "
            "--all -c bedrockModelIds='[\"<base model id>\"]'`: a base id grants its profiles and the "
            "foundation model in the regions they route to); a permissions boundary may also deny it"
        )
    if "on-demand throughput" in text:
        return (
            f"{model_id} is served through an inference profile only: run experiments with the profile id "
            f"({deployment.geography(region)}.{deployment.base_model(model_id)})"
        )
    if "model identifier is invalid" in text or "(ResourceNotFoundException)" in reason:
        return (
            f"Bedrock does not offer {model_id} in {region}: `aws bedrock list-inference-profiles` and `aws "
            "bedrock list-foundation-models` list what it offers; deploy with one of those in bedrockModelIds"
        )
    if "have access to the model" in text:
        return (
            "the account has no access to the model yet: as an administrator, call it once (the Marketplace "
            "subscription) and, for Anthropic models, submit the use-case form in the Bedrock console; " + again
        )
    if outcome.error == "ModelThrottled":
        return (
            "Bedrock throttled even one call: Service Quotas, Amazon Bedrock, the model's (cross-region) "
            "on-demand requests and tokens per minute in this region; ask for more, " + again
        )
    if outcome.error in ("ModelUnavailable", "ModelTimeout"):
        return (
            "the agent function did not get an answer from Bedrock: with egress=endpoints the bedrock-runtime "
            "interface endpoint must exist (it is part of the data stack); otherwise retry later"
        )
    if outcome.error == "ModelNotAllowed":
        return f"StartExperiment does not accept {model_id}: deploy with it in bedrockModelIds"
    return SEE_EXECUTION


def server_fix(provider: str, url: str, model: str, outcome: Outcome) -> str:
    """The one thing to do about a model server the agent function could not use."""
    reason = outcome.reason or ""
    if outcome.error == "ModelUnavailable":
        return (
            f"the functions cannot reach {url}: the server must accept connections from the deployment's NAT "
            "gateway address (egress=nat; egress=endpoints has no route to the internet) on that port, and "
            "answer there"
        )
    if outcome.error == "ModelTimeout":
        return (
            f"{url} answered too slowly: give it more time (`oriole params set requestTimeoutSeconds 300 --aws`) "
            "or check the server's load"
        )
    if "HTTP 401" in reason or "HTTP 403" in reason:
        return (
            f"{url} refused the API key: put the right key in the secret the deployment names "
            f"({provider}ApiKeySecretArn), or deploy without one if the server needs none"
        )
    if "HTTP 404" in reason:
        where = (
            f"`ollama pull {model}` on that server"
            if provider == "ollama"
            else f"serve {model} there, and check that the base URL ends where /chat/completions follows (often /v1)"
        )
        return f"{url} has no model {model}: {where}"
    if outcome.error == "InvalidConfig":
        return f"StartExperiment refuses {url}: deploy with it allow-listed"
    return SEE_EXECUTION


def database_check(outcome: Outcome, proxy: str | None, migrations: str | None) -> Check:
    """What the baseline run shows of the database: its functions wrote and read the experiment through the
    ``proxy`` endpoint (none: an existing database the functions reach directly)."""
    via = f"the proxy {proxy}" if proxy else "their own connection (an existing database)"
    if outcome.worked:
        return ok("database", f"the functions wrote and read the baseline experiment through {via}")
    if outcome.error in DATABASE_ERRORS or "UndefinedTable" in (outcome.reason or ""):
        target = (
            (
                f"the proxy's target is AVAILABLE (`aws rds describe-db-proxy-targets --db-proxy-name "
                f"{proxy.split('.', 1)[0]}`)"
            )
            if proxy
            else "the database accepts the functions' security group"
        )
        migrate = f"aws lambda invoke --function-name {migrations or '<the MigrationsFunction output>'} out.json"
        return failed(
            "database",
            outcome.detail,
            f"the functions cannot use the database through {via}: check "
            f"that {target} and that this deploy's migrations ran (`{migrate}` runs them again)",
        )
    return skipped("database", "not shown: the baseline experiment failed before it (see baseline)")


@dataclass
class Probe:
    """One execution the check runs: its line, the inputs to try in order (a later one when ``retry_when`` says
    the ended execution asked for it), how its execution is followed, and how its end is judged."""

    name: str
    target: str | None
    inputs: list[dict]
    starter: Callable[[dict], str]  # starts an execution of this input; its ARN
    judge: Callable[[Probe], Check]
    follow: Callable[[str], Execution]
    retry_when: Callable[[Execution], bool] = lambda execution: False
    execution_arn: str | None = None
    execution: Execution | None = None  # once ended
    tried: int = 0
    waited: float = 0.0

    @property
    def input(self) -> dict:
        """The input of the execution started last."""
        return self.inputs[self.tried - 1]

    @property
    def started(self) -> str:
        """The ARN of the execution started last: a probe is followed and judged once started."""
        if self.execution_arn is None:
            raise RuntimeError(f"the {self.name} probe was never started")
        return self.execution_arn

    def start(self) -> None:
        self.tried += 1
        self.execution_arn = self.starter(self.input)

    def poll(self, waited: float) -> bool:
        """Look at the execution once; True when it has ended (a retry with the next input is started here)."""
        execution = self.follow(self.started)
        self.waited = waited
        if execution["status"] not in TERMINAL_EXECUTION_STATUSES:
            return False
        if self.tried < len(self.inputs) and self.retry_when(execution):
            self.start()
            return False
        self.execution = execution
        return True


def first_start(probes: list[Probe]) -> datetime | None:
    """When the check's first execution started, by Step Functions' clock (None when none was followed to its end)."""
    starts = [probe.execution["startDate"] for probe in probes if probe.execution and "startDate" in probe.execution]
    return min(starts, default=None)


def split_by_start(closed: list[dict], began: datetime | None) -> tuple[list[dict], list[dict]]:
    """The reconciler's closed experiments split into those whose execution started at or after ``began`` (the
    check's own runs, or runs beside it) and older ones (started before, or unknown to Step Functions any more)."""
    if began is None:
        return closed, []
    since = began.timestamp() * 1000
    ours = [e for e in closed if e.get("startDate") is not None and e["startDate"] >= since]
    return ours, [e for e in closed if e not in ours]


def closed_ids(closed: list[dict], shown: int = 5) -> str:
    """The ids of closed experiments as the reconciler line names them: the first ``shown``, then a count."""
    ids = [f"#{e['experimentId']}" for e in closed if "experimentId" in e]
    if not ids:
        return "their ids not reported"
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def settle(probes: list[Probe], timeout_seconds: float, poll_seconds: float, progress: Callable[[str], None]) -> None:
    """Start every probe, then follow them all until each ended or the time is up."""
    for probe in probes:
        probe.start()
    started = time.monotonic()
    pending = list(probes)
    while True:
        waited = time.monotonic() - started
        pending = [probe for probe in pending if not probe.poll(waited)]
        if not pending or waited > timeout_seconds:
            return
        progress(
            f"{len(probes) - len(pending)} of {len(probes)} executions ended ({waited:.0f} s); waiting for "
            + ", ".join(probe.target or probe.name for probe in pending)
        )
        time.sleep(poll_seconds)


def bedrock_candidates(model_id: str, region: str) -> list[str]:
    """The ids to call a granted model by, in order: a profile id as granted; for a base id, its profile of the
    region's geography (how most models are served) and then the base id itself."""
    if deployment.profile_prefix(model_id):
        return [model_id]
    return [f"{deployment.geography(region)}.{model_id}", model_id]


def not_served_by_that_id(execution: Execution) -> bool:
    """Bedrock's answer when a model is not called by that id in this region (try the next candidate)."""
    text = (experiment_outcome(execution, 0).reason or "").lower()
    return "model identifier is invalid" in text or "on-demand throughput" in text


def _experiment_judge(fix: Callable[[str, Outcome], str], region: str) -> Callable[[Probe], Check]:
    """Judge a probe's experiment: ``<model> on <maze>: ...`` when it worked, else its reason and
    ``fix(model, outcome)`` with a link to the execution."""

    def judge(probe: Probe) -> Check:
        outcome = experiment_outcome(probe.execution, probe.waited)
        model = probe.input["modelName"]
        if outcome.worked:
            return ok(probe.name, f"{model} on {MAZE}: {outcome.detail}", probe.target)
        link = console_link(region, probe.started)
        if probe.execution is None:
            return failed(
                probe.name,
                outcome.detail,
                f"follow it in the console ({link}), or give the check more time (--timeout-seconds)",
                probe.target,
            )
        return failed(probe.name, outcome.detail, f"{fix(model, outcome)} ({link})", probe.target)

    return judge


# --- closing what ended, and spending ---------------------------------------------------------------------------

# The lines the executions decide, in order (each skipped when the stacks are not deployed).
EXECUTION_LINES = (
    "database",
    "baseline",
    "bedrock",
    "sweep",
    "finalizer",
    "deadletter",
    "prices",
    "global",
    "spend",
    "reconciler",
    "limit",
)
NO_MODEL = "no Bedrock model is granted (bedrockModelIds)"


def finalizer_fix(stack: str) -> str:
    """What to do when a stopped execution's experiment stays open."""
    return (
        "the status-change finalizer did not close it: the EventBridge rule on the state machine's status changes "
        f"must be enabled (`aws events list-rules --name-prefix {stack}`), and the deadletter line and the "
        "finalizer's log group say why it failed; the reconciler closes the experiment within 15 minutes, and "
        "the sweep ends then"
    )


def dead_letter_fix(queue: str) -> str:
    """What to do when the finalizer's refused event is not in its dead-letter queue."""
    return (
        "Lambda retries a failed asynchronous invoke twice, a minute and then two minutes apart: give the check "
        "more time (--timeout-seconds); otherwise the finalizer may not send to the queue (`make deploy` restores "
        "its on-failure destination and the grant). Should the event arrive later, it waits there and its alarm "
        f"goes off: `aws sqs receive-message --queue-url {queue}` shows it (source oriole.check)"
    )


def take_record(sqs: SQSClient, queue: str, detail: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The on-failure record of the check's own event (its ``detail``) among the messages of ``queue``, deleted
    from it; the others are only looked at (received with no visibility timeout, so they stay as they were)."""
    answer = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=0, WaitTimeSeconds=1)
    for message in answer.get("Messages", []):
        record = _json_object(message.get("Body", ""))
        if (record.get("requestPayload") or {}).get("detail") == detail:
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
            return [record]
    return []


def price_check(model_id: str, region: str, stored: Mapping[str, str]) -> Check:
    """The price the bedrock line's experiment is charged at (``oriole.core.prices``: Parameter Store's, else the
    list price shipped); without one its cost is unknown and a sweep with a spend limit refuses it."""
    called = bedrock_candidates(model_id, region)[0]
    found = prices.price("bedrock", called, None, stored.get(catalog.pricing_name(called)))
    if found is None:
        return failed(
            "prices",
            f"no price is known for {called}: its experiments' cost is unknown, and a sweep with a spend limit "
            "refuses it",
            f"`oriole prices set {called} --input USD --output USD --aws` (per million tokens, from "
            f"{prices.BEDROCK_PRICING})",
            model_id,
        )
    return ok("prices", f"{called}: {found.describe()}", model_id)


def spend_limit_check(planner: Mapping[str, str]) -> Check:
    """PlanSweep's environment says whether it refuses a sweep of models without a spend limit (the check does not
    submit one: the refused sweep's failed execution would set off the SweepsFailed alarm)."""
    if Environment.read(planner).spend_limit_required:
        return ok("limit", "PlanSweep refuses a sweep of models without spend_limit_usd (or unlimited_spend = true)")
    return failed(
        "limit",
        "PlanSweep runs a sweep of models without a spend limit",
        "deploy this checkout (`make deploy`): it requires a spend limit on AWS",
    )


def _running(sfn: SFNClient, state_machine_arn: str, prefix: str) -> list[str]:
    """The running executions of a state machine whose names start with ``prefix``."""
    pages = sfn.get_paginator("list_executions").paginate(stateMachineArn=state_machine_arn, statusFilter="RUNNING")
    return [e["executionArn"] for page in pages for e in page["executions"] if e["name"].startswith(prefix)]


def _started_experiment(sfn: SFNClient, execution_arn: str) -> bool:
    """Whether an execution has left ``StartExperiment`` with its experiment (it exists and is its own): one stopped
    before would leave the finalizer no experiment to close, and the run's row to the reconciler. A start that
    failed leaves the state too, its error caught for FinalizeFailure, but without an ``experimentId``."""
    events = sfn.get_execution_history(executionArn=execution_arn, maxResults=EARLY_EVENTS)["events"]
    exits = (e["stateExitedEventDetails"] for e in events if "stateExitedEventDetails" in e)
    return any(x["name"] == START_STATE and "experimentId" in _json_object(x.get("output", "")) for x in exits)


def _json_object(text: str | bytes) -> dict[str, Any]:
    """A JSON object from text (a message body, a function's answer); anything else as {}."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class DeploymentCheck:
    """The checks of one deployment, yielded one by one as they are decided."""

    def __init__(self, aws: Aws, deployment_name: str, options: Options, progress: Callable[[str], None]):
        self.aws, self.options, self.progress = aws, options, progress
        self.deployment = deployment_name
        self.data_stack = catalog.data_stack(deployment_name)
        self.orchestrator_stack = catalog.orchestrator_stack(deployment_name)
        stamp = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self.tag, self.comment = f"check-{stamp}", f"check:{stamp}"  # the sweep id and agent ids; the comment

    def run(self) -> Iterator[Check]:
        data = cloud.describe_stack(self.aws.cloudformation, self.data_stack)
        orchestrator = cloud.describe_stack(self.aws.cloudformation, self.orchestrator_stack)
        if orchestrator is None:
            others = cloud.deployments(self.aws.cloudformation)
            raise cloud.DeploymentNotFound(not_found_message(self.deployment, others, self.aws.region))
        statuses = {self.data_stack: data and data["StackStatus"], self.orchestrator_stack: orchestrator["StackStatus"]}
        outputs = cloud.outputs(orchestrator)
        missing = [key for key in REQUIRED_OUTPUTS if key not in outputs] if stacks_usable(statuses) else []
        yield stacks_check(statuses, missing)
        if not stacks_usable(statuses) or missing:
            for name in ("code", "parameters", "prompts", "lambda", *EXECUTION_LINES):
                yield skipped(name, "the stacks are not deployed (see stacks)")
            return
        functions = {
            **cloud.task_functions(self.aws.sfn, outputs["SweepStateMachineArn"]),
            **cloud.task_functions(self.aws.sfn, outputs["StateMachineArn"]),
        }
        environments = {arn: cloud.function_environment(self.aws.awslambda, arn) for arn in set(functions.values())}
        versions = {arn.split(":function:", 1)[-1]: env.get(CODE_VERSION_VARIABLE) for arn, env in environments.items()}
        self.progress("computing the code version of this checkout")
        yield code_check(versions, checkout_code_version())
        stored = cloud.parameter_values(self.aws.ssm)
        yield parameters_check(stored, catalog.PREFIX)
        yield prompts_check(prompts.aws_prompts(self.aws.ssm))
        yield lambda_quota_check(self.aws.awslambda.get_account_settings()["AccountLimit"])
        yield from self._bedrock_quotas(_listed(environments[functions["StartExperiment"]], BEDROCK_MODEL_IDS))
        proxy = cloud.outputs(data).get("DatabaseProxyEndpoint") if data is not None else None
        yield from self._executions(
            outputs, environments[functions["StartExperiment"]], environments[functions["PlanSweep"]], proxy, stored
        )

    def _bedrock_quotas(self, model_ids: list[str]) -> Iterator[Check]:
        """One ``quotas`` line per granted Bedrock model; skipped when these credentials may not read them."""
        if not model_ids:
            return
        try:
            quotas = bedrock_quotas(self.aws.quotas)
        except ClientError as err:
            for model_id in model_ids:
                yield skipped("quotas", f"Service Quotas could not be read: {err}", model_id)
            return
        for model_id in model_ids:
            try:
                model = self.aws.bedrock.get_foundation_model(modelIdentifier=deployment.base_model(model_id))
            except ClientError as err:
                yield skipped("quotas", f"Bedrock does not describe it: {err}", model_id)
                continue
            yield bedrock_quota_check(model_id, model["modelDetails"], quotas)

    def _executions(
        self,
        outputs: dict[str, str],
        environment: dict[str, str],
        planner: dict[str, str],
        proxy: str | None,
        stored: dict[str, str],
    ) -> Iterator[Check]:
        """Run every execution at once and judge each; ``environment`` is StartExperiment's, which lists the
        granted models and the allow-listed servers, ``planner`` PlanSweep's, ``stored`` the deployment's
        parameters (its prices among them). Lines in order: database, baseline, models, servers, sweep, then the
        steps of ``EXECUTION_LINES`` after them."""
        experiments = outputs["StateMachineArn"]
        baseline = self._probe(
            experiments,
            "baseline",
            None,
            [self._input("baseline", "baseline", "oracle", **CONTINUED)],
            lambda model, outcome: SEE_EXECUTION,
        )
        lines: list[Probe | Check] = [baseline]
        granted = _listed(environment, BEDROCK_MODEL_IDS)
        for model_id in granted:
            candidates = bedrock_candidates(model_id, self.aws.region)
            lines.append(
                self._probe(
                    experiments,
                    "bedrock",
                    model_id,
                    [self._input(f"bedrock/{n}", "bedrock", c, **ONE_ACTION) for n, c in enumerate(candidates)],
                    lambda model, outcome: bedrock_fix(model, outcome, self.aws.region),
                    retry_when=not_served_by_that_id,
                )
            )
        for provider, servers in ((p.name, p.servers) for p in PROVIDERS.values() if p.servers is not None):
            model = self.options.server_models.get(provider)
            for url in _listed(environment, servers.listed):
                lines.append(
                    skipped(provider, f"no model named to ask {url} for: pass --{provider}-model NAME", url)
                    if model is None
                    else self._probe(
                        experiments,
                        provider,
                        url,
                        [self._input(provider, provider, model, **{servers.key: url}, **ONE_ACTION)],
                        functools.partial(server_fix, provider, url),
                    )
                )
        lines.append(self._sweep_probe(outputs["SweepStateMachineArn"]))
        lines.append(self._stop_probe(outputs["SweepStateMachineArn"], experiments))
        finalizer = outputs.get("StatusFinalizerFunction")
        lines.append(
            self._dead_letter_probe(finalizer)
            if finalizer
            else skipped("deadletter", OUTPUT_MISSING.format(output="StatusFinalizerFunction"))
        )
        priced = [price_check(model_id, self.aws.region, stored) for model_id in granted]
        lines += priced
        lines += self._paid_lines(outputs, granted, priced)
        probes = [line for line in lines if isinstance(line, Probe)]
        self.progress(f"running {len(probes)} executions")
        settle(probes, self.options.timeout_seconds, self.options.poll_seconds, self.progress)
        yield database_check(
            experiment_outcome(baseline.execution, baseline.waited), proxy, outputs.get("MigrationsFunction")
        )
        for line in lines:
            yield line.judge(line) if isinstance(line, Probe) else line
        self.progress("invoking the reconciler")
        yield self._reconciler_check(outputs.get("ReconcilerFunction"), first_start(probes))
        yield spend_limit_check(planner)

    def _paid_lines(self, outputs: dict[str, str], granted: list[str], priced: list[Check]) -> list[Probe | Check]:
        """With ``--paid``: each granted model called once through its ``global.`` profile, and the spend sweep of
        the first priced one; without it, a line that says how to run them."""
        if not self.options.paid:
            return [skipped(name, "pass --paid to run it (a few Bedrock calls)") for name in ("global", "spend")]
        lines: list[Probe | Check] = [self._global_line(outputs["StateMachineArn"], m) for m in granted]
        first_priced = next((line.target for line in priced if line.status == OK and line.target), None)
        lines.append(
            self._spend_probe(outputs["SweepStateMachineArn"], bedrock_candidates(first_priced, self.aws.region)[0])
            if first_priced
            else skipped("spend", "no granted Bedrock model has a known price (see prices)" if granted else NO_MODEL)
        )
        return lines

    def _input(self, name: str, provider: str, model: str, **config) -> dict:
        """An experiment's input, tagged as the check's (agent id ``<tag>/<name>``, comment ``check:<stamp>``) and
        archived from its start."""
        return {
            "mazeId": MAZE,
            "llmProvider": provider,
            "modelName": model,
            "agentId": f"{self.tag}/{name}",
            "comment": self.comment,
            "archived": True,
            "config": config,
        }

    def _probe(
        self,
        state_machine_arn: str,
        name: str,
        target: str | None,
        inputs: list[dict],
        fix: Callable[[str, Outcome], str],
        retry_when: Callable[[Execution], bool] = lambda execution: False,
    ) -> Probe:
        def start(execution_input: dict) -> str:
            return self.aws.sfn.start_execution(
                stateMachineArn=state_machine_arn, name=execution_name(self.tag), input=json.dumps(execution_input)
            )["executionArn"]

        return Probe(
            name,
            target,
            inputs,
            start,
            _experiment_judge(fix, self.aws.region),
            lambda arn: current_execution(self.aws.sfn, arn),
            retry_when,
        )

    def _sweep_probe(self, state_machine_arn: str) -> Probe:
        spec = validate(
            SweepFile,
            {"id": self.tag, "agents": ["baseline/oracle"], "mazes": [MAZE], "repetitions": 1, "archived": True},
            "the check's sweep",
        )

        def judge(probe: Probe) -> Check:
            execution = probe.execution
            link = console_link(self.aws.region, probe.started)
            if execution is None:
                return failed(
                    "sweep",
                    f"{self.tag} still running after {probe.waited:.0f} s",
                    f"follow it: `oriole sweep status {self.tag} --aws` ({link})",
                )
            try:
                summary = sweep_runs.outcome(execution)
            except sweep_runs.SweepFailed as err:
                return failed("sweep", str(err), f"open the sweep's execution in the Step Functions console ({link})")
            line = sweep_runs.summary_line(summary).strip()
            if summary.get("succeeded") != 1:
                return failed(
                    "sweep",
                    f"{self.tag}: {line}",
                    f"`oriole sweep status {self.tag} --aws` shows its repetition ({link})",
                )
            return ok("sweep", f"{self.tag}: {line}")

        return self._sweep_of("sweep", None, state_machine_arn, spec, judge)

    def _stop_probe(self, sweeps_arn: str, experiments_arn: str) -> Probe:
        """A one-item sweep of a long baseline run whose execution the check stops once it runs: the sweep ends
        only once its item sees the experiment closed, which for a stopped execution only the status-change
        finalizer does (EventBridge delivers the execution's end to it)."""
        sweep_id = f"{self.tag}-stop"
        spec = validate(
            SweepFile,
            {
                "id": sweep_id,
                "agents": ["baseline/random"],
                "mazes": [STOP_MAZE],
                "configs": [STOPPED],
                "archived": True,
            },
            "the check's sweep",
        )
        stopped: dict[str, float] = {}  # the experiment's execution the check stopped -> when

        def follow(arn: str) -> Execution:
            sweep = self.aws.sfn.describe_execution(executionArn=arn)
            if not stopped and sweep["status"] == ExecutionStatus.RUNNING:
                for execution_arn in _running(self.aws.sfn, experiments_arn, f"{sweep_id}-"):
                    if _started_experiment(self.aws.sfn, execution_arn):
                        self.aws.sfn.stop_execution(executionArn=execution_arn, error="OrioleCheck", cause=STOP_CAUSE)
                        stopped[execution_arn] = time.monotonic()
            return sweep

        def judge(probe: Probe) -> Check:
            link = console_link(self.aws.region, probe.started)
            follow_it = f"`oriole sweep status {sweep_id} --aws` shows its repetition ({link})"
            if not stopped:
                if probe.execution is None:
                    return failed("finalizer", f"{sweep_id} started no experiment in {probe.waited:.0f} s", follow_it)
                try:
                    seen = sweep_runs.summary_line(sweep_runs.outcome(probe.execution)).strip()
                except sweep_runs.SweepFailed as err:
                    seen = str(err)
                return failed(
                    "finalizer",
                    f"sweep {sweep_id} ended before the check could stop its experiment: {seen}",
                    f"the sweep line says why the check's experiments do not run; {follow_it}",
                )
            [(execution_arn, when)] = stopped.items()
            name = execution_arn.rsplit(":", 1)[-1]
            if probe.execution is None:
                return failed(
                    "finalizer",
                    f"the check stopped {name} {time.monotonic() - when:.0f} s ago and its experiment is still open",
                    finalizer_fix(self.orchestrator_stack),
                )
            try:
                summary = sweep_runs.outcome(probe.execution)
            except sweep_runs.SweepFailed as err:
                return failed(
                    "finalizer", str(err), f"open the sweep's execution in the Step Functions console ({link})"
                )
            line = sweep_runs.summary_line(summary).strip()
            if summary.get("aborted") != 1:
                return failed("finalizer", f"the check stopped {name}; the sweep saw {line}", follow_it)
            return ok(
                "finalizer",
                f"the check stopped {name}; the status-change finalizer closed its experiment (aborted, censored) "
                f"and the sweep saw it: {line}",
            )

        return self._sweep_of("finalizer", None, sweeps_arn, spec, judge, follow)

    def _sweep_of(
        self,
        name: str,
        target: str | None,
        sweeps_arn: str,
        spec: SweepFile,
        judge: Callable[[Probe], Check],
        follow: Callable[[str], Execution] | None = None,
    ) -> Probe:
        """A probe that runs ``spec`` through the sweep state machine as the check runs its sweeps, followed by
        DescribeExecution unless ``follow`` says otherwise."""
        return Probe(
            name,
            target,
            [sweep_runs.run_input(spec, **self._sweep_settings())],
            lambda sweep_input: sweep_runs.submit(self.aws.sfn, sweeps_arn, sweep_input)[0],
            judge,
            follow or (lambda arn: self.aws.sfn.describe_execution(executionArn=arn)),
        )

    def _sweep_settings(self) -> dict[str, Any]:
        """How the check runs its sweeps: one experiment at once, its row looked at as often as the check looks."""
        return {
            "concurrency": 1,
            "provider_concurrency": {},
            "retry_failed": False,
            "wait_seconds": max(1, round(self.options.poll_seconds)),
        }

    def _dead_letter_probe(self, finalizer: str) -> Probe | Check:
        """An event the finalizer refuses, invoked asynchronously as EventBridge invokes it: after Lambda's two
        retries (about three minutes on AWS) its on-failure destination, the dead-letter queue, holds it; the check
        takes it out again (its alarm watches the messages that wait there)."""
        try:
            config = self.aws.awslambda.get_function_event_invoke_config(FunctionName=finalizer)
            destination = config.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination", "")
        except ClientError as err:
            if err.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
            destination = ""
        if ":sqs:" not in destination:
            return failed(
                "deadletter",
                f"{finalizer} has no dead-letter queue: a status change it cannot process would be lost",
                "deploy this checkout: `make deploy`",
            )
        *_, account, queue_name = destination.split(":")
        queue = self.aws.sqs.get_queue_url(QueueName=queue_name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        detail = {"check": self.tag}
        event = {"source": TEST_EVENT_SOURCE, "detail-type": "oriole check", "detail": detail}
        found: list[dict[str, Any]] = []  # the record Lambda sent there, once seen

        def start(_: dict) -> str:
            self.aws.awslambda.invoke(FunctionName=finalizer, InvocationType="Event", Payload=json.dumps(event))
            return queue

        def follow(_: str) -> Execution:
            if not found:
                found.extend(take_record(self.aws.sqs, queue, detail))
            return {"status": ExecutionStatus.SUCCEEDED if found else ExecutionStatus.RUNNING}

        def judge(probe: Probe) -> Check:
            attributes = self.aws.sqs.get_queue_attributes(
                QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"]
            )
            others = int(attributes["Attributes"]["ApproximateNumberOfMessages"])
            waiting = (
                f"; {others} other message(s) wait there: status changes it could not process, whose experiments "
                f"the reconciler closed (read them: `aws sqs receive-message --queue-url {queue}`)"
                if others
                else ""
            )
            if not found:
                return failed(
                    "deadletter",
                    f"an event {finalizer} refuses did not reach its dead-letter queue {queue_name} in "
                    f"{probe.waited:.0f} s{waiting}",
                    dead_letter_fix(queue),
                )
            context = found[0].get("requestContext") or {}
            return ok(
                "deadletter",
                f"an event {finalizer} refuses reached its dead-letter queue {queue_name} after "
                f"{context.get('approximateInvokeCount')} attempts, and the check removed it{waiting}",
            )

        return Probe("deadletter", None, [event], start, judge, follow)

    def _reconciler_check(self, reconciler: str | None, began: datetime | None) -> Check:
        """The reconciler run now, as its schedule runs it: once the check's executions have ended it must look
        (they ran lately) and find none of them left open (the finalizer closed them all). An experiment it closes
        whose execution started before the check's first (``began``) is an older loss, named but not the check's."""
        if reconciler is None:
            return skipped("reconciler", OUTPUT_MISSING.format(output="ReconcilerFunction"))
        answer = self.aws.awslambda.invoke(FunctionName=reconciler, Payload=b"{}")
        result = _json_object(answer["Payload"].read())
        if answer.get("FunctionError"):
            return failed(
                "reconciler",
                f"{result.get('errorType')}: {result.get('errorMessage')}",
                f"its log group (/aws/lambda/{reconciler}) says why; the database line says whether the functions "
                "reach the database",
            )
        if not result.get("lookedAt"):
            return failed(
                "reconciler",
                "it saw no execution of the last hours, though the check has just run some",
                "it looks after another state machine than the check ran: deploy this checkout (`make deploy`)",
            )
        listed = result.get("closedExperiments")
        if listed is None:  # a reconciler deployed before it listed what it closed: every closure counts
            listed, began = [{} for _ in range(result.get("closed") or 0)], None
        ours, older = split_by_start(listed, began)
        earlier = (
            f"; it also closed {len(older)} older experiment(s) left open before the check began "
            f"({closed_ids(older)}): their status changes were lost earlier"
            if older
            else ""
        )
        if ours:
            return failed(
                "reconciler",
                f"it closed {len(ours)} of the check's experiment(s) ({closed_ids(ours)}) whose execution had ended "
                f"without the finalizer closing them{earlier}",
                "their status changes were lost: the deadletter line and the finalizer's log group say why",
            )
        return ok(
            "reconciler",
            f"it read Step Functions and the database: none of the check's experiments was left for it to close"
            f"{earlier}",
        )

    def _global_line(self, experiments_arn: str, model_id: str) -> Probe | Check:
        """A granted model called once through its ``global.`` profile (which routes to any commercial region, and
        costs Anthropic's list price), when the deployment grants it and the bedrock line did not already call it."""
        if deployment.geography(self.aws.region) == deployment.GLOBAL or deployment.profile_prefix(model_id):
            why = (
                f"this region's geography is {deployment.GLOBAL}: the bedrock line called that profile"
                if deployment.geography(self.aws.region) == deployment.GLOBAL
                else f"granted as this profile only: grant {deployment.base_model(model_id)} to allow its "
                f"{deployment.GLOBAL}. profile too"
            )
            return skipped("global", why, model_id)
        profile = f"{deployment.GLOBAL}.{model_id}"
        probe = self._probe(
            experiments_arn,
            "global",
            model_id,
            [self._input("global", "bedrock", profile, **ONE_ACTION)],
            lambda model, outcome: bedrock_fix(model, outcome, self.aws.region),
        )
        judge = probe.judge

        def judged(ended: Probe) -> Check:
            if ended.execution is not None and not_served_by_that_id(ended.execution):
                return skipped("global", f"Bedrock serves no {profile} in {self.aws.region}", model_id)
            return judge(ended)

        probe.judge = judged
        return probe

    def _spend_probe(self, sweeps_arn: str, model: str) -> Probe:
        """A sweep of two runs of ``model`` under a cap below one call's cost and a spend limit the first run uses
        up: the first is censored by its maxCostUsd after one call (its cost landed, at its price), the spend limit
        keeps the second from starting."""
        sweep_id = f"{self.tag}-spend"
        spec = validate(
            SweepFile,
            {
                "id": sweep_id,
                "agents": [f"bedrock/{model}"],
                "mazes": [MAZE],
                "repetitions": 2,
                "configs": [CAPPED],
                "spend_limit_usd": SPEND_LIMIT_USD,
                "archived": True,
            },
            "the check's sweep",
        )

        def judge(probe: Probe) -> Check:
            link = console_link(self.aws.region, probe.started)
            follow_it = f"`oriole sweep status {sweep_id} --aws` shows its repetitions ({link})"
            if probe.execution is None:
                return failed("spend", f"{sweep_id} still running after {probe.waited:.0f} s", follow_it, model)
            try:
                summary = sweep_runs.outcome(probe.execution)
            except sweep_runs.SweepFailed as err:
                return failed("spend", str(err), f"open the sweep's execution in the Step Functions console ({link})")
            line = sweep_runs.summary_line(summary).strip()
            if summary.get("censored") != 1 or summary.get("skipped") != 1 or not summary.get("spentUsd"):
                return failed("spend", f"{sweep_id}: {line}", follow_it, model)
            return ok(
                "spend",
                f"its first run cost ${summary['spentUsd']:.6f} at its price and was censored by maxCostUsd "
                f"${SPEND_CAP_USD:.6f}; the spend limit ${SPEND_LIMIT_USD:.6f} kept the second from starting: {line}",
                model,
            )

        return self._sweep_of("spend", model, sweeps_arn, spec, judge)


def _listed(environment: dict[str, str], variable: str) -> list[str]:
    """A deploy-time list the functions' environment carries (JSON), empty when unset."""
    return list(json.loads(environment.get(variable) or "[]"))
