"""Run the real state machines on one machine: moto's Step Functions interpreter executes the ASL files (the
experiment flow, and the sweep flow beside it), Parameter Store is moto's, seeded from the catalog, the local
prompt versions and the local prices file, and every Lambda invoke is routed to the real handler in this process.
Everything but the AWS services is the production code path.

EventBridge has no local counterpart: the runner's launcher sends the status change of an execution that
ended with its experiment open to the status-change finalizer itself, and the runner holds every
execution it runs (``run_locks``), so ``oriole doctor`` can tell an experiment whose process died. The
finalizer and the reconciler are deployed beside the flows as CDK deploys them (the reconciler with its state
machine in its environment; the finalizer retried twice on an asynchronous invoke, then sent to its dead-letter
queue), so what invokes them by name (``oriole check --aws``) meets them as on AWS: moto keeps a function's
event-invoke configuration but does not act on it, so the runner does, at once instead of minutes apart.

moto does not answer Lambda's GetAccountSettings, which PlanSweep asks (how many functions the account runs at
once): the runner answers it for the account it stands for (``LocalAws(account_concurrency=...)``, by default a
standard account's 1,000).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import io
import json
import logging
import os
import re
import threading
import time
import traceback
import uuid
import weakref
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar, Self
from unittest import mock

import boto3
import botocore.loaders
import botocore.session
import psycopg
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.handlers import BUILTIN_HANDLERS

from oriole import catalog, flows
from oriole.environment import EXECUTION_TIMEOUT, STATE_MACHINE_ARN
from oriole.handlers import FUNCTIONS, OUTSIDE_FLOWS
from oriole.lifecycle.reconcile import status_change_detail
from oriole.store import db
from oriole_workstation import price_list, prompts
from oriole_workstation.interpreter_speed import interpreter_patches
from oriole_workstation.launcher import Launcher
from oriole_workstation.run_locks import RunLocks

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions.type_defs import HistoryEventTypeDef

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's account
STATE_MACHINE_NAME = "oriole-experiment"
SWEEP_STATE_MACHINE_NAME = "oriole-sweep"
EXECUTION_PREFIX = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{STATE_MACHINE_NAME}:"  # every local execution


def function_name(placeholder: str) -> str:
    """``StartExperimentFunctionArn`` -> ``oriole-StartExperiment``."""
    return "oriole-" + placeholder.removesuffix("FunctionArn")


START_FUNCTION = function_name("StartExperimentFunctionArn")
STATUS_FINALIZER = "oriole-ExecutionStatusFinalizer"
RECONCILER = "oriole-Reconciler"
DEAD_LETTERS = "oriole-FinalizerDeadLetters"
FINALIZER_RETRIES = 2  # infra.functions: the finalizer's retries of an asynchronous invoke before its dead letters
FINALIZERS = frozenset(function_name(f"Finalize{end}FunctionArn") for end in ("Success", "Timeout", "Failure"))
MOTO_INTERPRETER_LOG = "moto.stepfunctions.parser"  # logs every caught task error with its whole payload
STANDARD_CONCURRENCY = 1000  # Lambda's concurrent executions in a standard account (a new one's may be 10)
_ACCOUNT: dict[str, int | None] = {"concurrency": None}  # the active LocalAws's account, while one runs


def _account_settings(**_: object) -> tuple[AWSResponse, dict[str, Any]] | None:
    """botocore's ``before-call`` of Lambda's GetAccountSettings (which moto does not implement), while a local run
    is active: the account's concurrency, all of it unreserved. Registered once, like moto's own stubber, so every
    client made under moto has it."""
    concurrency = _ACCOUNT["concurrency"]
    if concurrency is None:
        return None
    limit = {"ConcurrentExecutions": concurrency, "UnreservedConcurrentExecutions": concurrency}
    return AWSResponse("", 200, HTTPHeaders(), None), {"AccountLimit": limit, "AccountUsage": {"FunctionCount": 0}}


BUILTIN_HANDLERS.append(("before-call.lambda.GetAccountSettings", _account_settings))


@dataclass(frozen=True)
class LambdaContext:
    """The attributes of a Lambda context object that Powertools and the agent tasks read; locally every
    invocation has the model tasks' timeout from when it started."""

    function_name: str
    invoked_function_arn: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    deadline: float = field(default_factory=lambda: time.monotonic() + catalog.MODEL_TASK_SECONDS)

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def _scaled_waits(scale: float) -> list:
    """moto's interpreter waits out a Retry's interval with ``time.sleep`` in its retrier, and a Wait state on the
    execution's stop event (a stop ends the wait): both for ``scale`` times the seconds asked."""
    if scale == 1:
        return []
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

    def wait_interval(function, env, wait_seconds: int) -> None:
        if wait_seconds > 0:
            env.program_state_event.wait(wait_seconds * scale)

    return [
        mock.patch.object(retrier_decl, "time", SimpleNamespace(sleep=lambda seconds: time.sleep(seconds * scale))),
        mock.patch.object(WaitFunction, "_wait_interval", wait_interval),
    ]


def _stops_that_stay_stopped() -> list:
    """Step Functions ends a stopped execution ABORTED, whatever its running task does after the stop. moto's
    interpreter lets an error that the stop itself provokes in that task (its frame is pulled away mid-invoke:
    "'dict' object has no attribute 'region'") replace the stop, so the execution ends FAILED, and an EventBridge
    rule on ABORTED never fires. Here an error raised after the stop leaves the stop standing."""
    from moto.stepfunctions.parser.asl.eval.environment import Environment
    from moto.stepfunctions.parser.asl.eval.program_state import ProgramStopped

    set_error = Environment.set_error

    def keep_the_stop(env: Environment, error: Any) -> None:
        with env._state_mutex:  # re-entrant: set_error takes it again, so no stop can come in between
            if not isinstance(env._program_state, ProgramStopped):
                set_error(env, error)

    return [mock.patch.object(Environment, "set_error", keep_the_stop)]


UNHANDLED = "Unhandled"  # the FunctionError of a handler that raised, as the Lambda runtime reports it
RESPONSE_LIMIT_BYTES = 6_291_556  # Lambda's limit on a synchronous invocation's response payload


def _function_error(error_type: str, message: str, stack: list[str] | None = None) -> bytes:
    """The payload the Lambda runtime returns for a failed invocation."""
    error: dict[str, Any] = {"errorType": error_type, "errorMessage": message}
    if stack is not None:
        error["stackTrace"] = stack
    return json.dumps(error).encode()


class CountingCursor(psycopg.Cursor[Any]):
    """Counts the statements sent through its connection (one round trip each in autocommit), so the
    benchmark reports database round trips per turn from the handlers' own connection, and the seconds the
    handlers waited for them (the server's work, its commit's WAL flush and the trip: ``waited``)."""

    sent: ClassVar[weakref.WeakKeyDictionary[psycopg.Connection[Any], int]] = weakref.WeakKeyDictionary()
    waited: ClassVar[weakref.WeakKeyDictionary[psycopg.Connection[Any], float]] = weakref.WeakKeyDictionary()

    def _count(self, started: float) -> None:
        self.sent[self.connection] = self.sent.get(self.connection, 0) + 1
        self.waited[self.connection] = self.waited.get(self.connection, 0.0) + time.perf_counter() - started

    def execute(self, *args: Any, **kwargs: Any) -> Self:
        started = time.perf_counter()
        try:
            return super().execute(*args, **kwargs)
        finally:
            self._count(started)

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            super().executemany(*args, **kwargs)
        finally:
            self._count(started)


@contextlib.contextmanager
def _setup_left_out_of_collections() -> Iterator[None]:
    """The objects alive once the runner is set up (moto's, botocore's and the handlers' modules, models and parsed
    flows: some 350,000) left out of the cyclic collector's full collections until the runner closes
    (``gc.freeze``): each full collection walked all of them again, three a 10,000-action run for 0.6 s. What the run
    itself makes is collected as before. Garbage not yet collected at the freeze waits for the runner to close."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_connect = db.connect


def _counting_connect(url: str | None = None) -> psycopg.Connection[Any]:
    conn = _connect(url)
    conn.cursor_factory = CountingCursor
    return conn


def _statements() -> int:
    """Statements sent so far through the handlers' shared connection."""
    conn = db.current()
    return 0 if conn is None else CountingCursor.sent.get(conn, 0)


def statement_seconds() -> float:
    """Seconds the handlers have waited so far for the statements of their shared connection."""
    conn = db.current()
    return 0.0 if conn is None else CountingCursor.waited.get(conn, 0.0)


@functools.cache
def _service_models() -> botocore.loaders.Loader:
    """One loader of botocore's service models for the process: each JSON model read once, not by every session."""
    return botocore.loaders.create_loader()


def _session_sharing_service_models() -> boto3.Session:
    """A new default session (moto clears boto3's, so that clients take its test credentials) that reads the
    service models through the process's one loader: a ``LocalAws`` makes five clients and the handlers more, and
    reading their models again for each was a fifth of starting one."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _service_models())
    return boto3.Session(botocore_session=core)


class ExecutionEnds:
    """Wakes a follower as soon as an execution of the local state machines ends, instead of at its next poll:
    moto ends each execution in a thread of its own, and a follower sleeping out its poll interval added half of it,
    on average, to every run (a quarter of a second for the benchmark's half-second polls)."""

    def __init__(self) -> None:
        self._ended = threading.Event()

    def patches(self) -> list:
        """moto's end of an execution (its status set from the interpreter's last state) followed by the wake."""
        from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

        terminated = BaseExecutionWorkerCommunication.terminated

        def terminated_and_told(communication: BaseExecutionWorkerCommunication) -> None:
            terminated(communication)
            self._ended.set()

        return [mock.patch.object(BaseExecutionWorkerCommunication, "terminated", terminated_and_told)]

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when an execution ends meanwhile. An end between the wake and the follower's
        next look is seen by that look (the wake is cleared before it)."""
        self._ended.wait(seconds)
        self._ended.clear()


class LocalAws:
    """A context manager holding moto's AWS, the state machine and the handler routing."""

    def __init__(
        self,
        database_url: str,
        bedrock_client=None,
        bedrock_control=None,
        execution_timeout_seconds: int = catalog.BY_KEY["maxExecutionSeconds"].int_default,
        functions_url: str | None = None,
        time_scale: float = 1.0,
        account_concurrency: int = STANDARD_CONCURRENCY,
    ):
        """``bedrock_client`` replaces the agents' Bedrock client: one holding the user's real credentials
        (its endpoint then passes through moto), or a stubbed client in tests; ``bedrock_control`` the control-plane
        client StartExperiment looks the model up with (its model identity), made likewise.
        ``execution_timeout_seconds`` is the deploy-time ``max-execution-seconds``, the state machine's
        ``TimeoutSeconds``.
        ``functions_url`` is what the functions connect with (on AWS the application role), when it is not
        ``database_url`` (which the runner's own bookkeeping uses). ``time_scale``: the state machines' waits (a
        Retry's interval, a Wait state) last this fraction of what they ask for; 1, as on AWS, unless a test that
        must not wait on real time runs them faster (the flows' own numbers, waitSeconds and followedSeconds, stay
        what the definition says). ``account_concurrency``: the Lambda concurrency of the account it stands for."""
        self.database_url = database_url
        self.time_scale = time_scale
        self.functions_url = functions_url or database_url
        self.bedrock_client = bedrock_client
        self.bedrock_control = bedrock_control
        self.execution_timeout_seconds = execution_timeout_seconds
        self.account_concurrency = account_concurrency
        self._substitutions: dict[str, str] = {}
        self._handlers: dict[str, Callable] = {}
        self.invocations: dict[str, int] = {}
        self.statements: dict[str, int] = {}
        self._execution_ends = ExecutionEnds()

    def __enter__(self) -> LocalAws:
        """Start moto and the patches, deploy the state machine; whatever fails on the way is undone, so a
        failed start (a prompt file that cannot be read, a database that is away) leaves no patch behind."""
        with contextlib.ExitStack() as stack:
            stack.callback(db.reset)
            stack.enter_context(mock.patch.dict(_ACCOUNT, {"concurrency": self.account_concurrency}))
            for patch in self._make_patches():
                stack.enter_context(patch)
            if self.bedrock_client is not None:  # imported only now, so its logger sees the log level set above
                from oriole.providers import bedrock

                stack.enter_context(mock.patch.object(bedrock, "shared_client", lambda timeout: self.bedrock_client))
            if self.bedrock_control is not None:
                from oriole.providers import bedrock

                stack.enter_context(mock.patch.object(bedrock, "control_client", lambda timeout: self.bedrock_control))
            db.reset()
            self._locks = RunLocks(self.database_url)
            stack.callback(self._locks.close)
            interpreter_log = logging.getLogger(MOTO_INTERPRETER_LOG)
            stack.callback(interpreter_log.setLevel, interpreter_log.level)
            interpreter_log.setLevel(logging.CRITICAL)  # the state machine reports those errors; no dump on stderr
            self.sfn = boto3.client("stepfunctions", region_name=REGION)
            self._deploy()
            stack.enter_context(_setup_left_out_of_collections())
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def _make_patches(self) -> list:
        """moto's AWS and the patches that route every invoke to the real handlers, in the order they start."""
        from moto import mock_aws
        from moto.awslambda_simple.models import LambdaSimpleBackend

        passthrough = [
            re.escape(client.meta.endpoint_url) + ".*"
            for client in (self.bedrock_client, self.bedrock_control)
            if client is not None
        ]
        return [
            mock.patch.dict(
                os.environ,
                {
                    "DATABASE_URL": self.functions_url,
                    "AWS_DEFAULT_REGION": REGION,
                    EXECUTION_TIMEOUT: str(self.execution_timeout_seconds),
                    "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
                    "POWERTOOLS_METRICS_DISABLED": "true",
                },
            ),
            mock_aws(
                config={
                    "stepfunctions": {"execute_state_machine": True},
                    "lambda": {"use_docker": False},
                    "core": {"passthrough": {"urls": passthrough, "services": []}},
                }
            ),
            mock.patch.object(boto3, "DEFAULT_SESSION", _session_sharing_service_models()),
            mock.patch.object(LambdaSimpleBackend, "invoke", self._make_invoke()),
            *self._direct_task_invocations(),
            mock.patch.object(db, "connect", _counting_connect),
            *interpreter_patches(),
            *_scaled_waits(self.time_scale),
            *_stops_that_stay_stopped(),
            *self._execution_ends.patches(),
        ]

    def _make_invoke(self):
        def invoke(backend, function_name, qualifier, body, headers, response_headers):
            """moto's Lambda backend: the real handler for ``function_name``, an exception reported as Lambda does;
            an asynchronous invoke is retried and its failure sent on as Lambda's event-invoke configuration says."""
            name = function_name.rsplit(":", 1)[-1]
            if headers.get("X-Amz-Invocation-Type") == "Event":
                self._invoke_async(backend, name, body)
                return b""
            payload, error = self._invoke(name, body)
            if error is not None:
                response_headers["x-amz-function-error"] = error
            return payload

        return invoke

    def _invoke_async(self, backend: Any, name: str, body: bytes | None) -> None:
        """Lambda's asynchronous invoke: the handler, retried as often as the function's event-invoke configuration
        says (twice by default); when every attempt failed, the record Lambda sends to the on-failure destination,
        sent there (an SQS queue)."""
        configs = backend.get_function(name).event_invoke_config
        config = configs[0].config if configs else {}
        attempts = 1 + config.get("MaximumRetryAttempts", 2)
        for _ in range(attempts):
            payload, error = self._invoke(name, body)
            if error is None:
                return
        destination = config.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
        if destination is None:
            return
        record = {
            "version": "1.0",
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "requestContext": {
                "requestId": str(uuid.uuid4()),
                "functionArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}:$LATEST",
                "condition": "RetriesExhausted",
                "approximateInvokeCount": attempts,
            },
            "requestPayload": json.loads(body or "{}"),
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": error},
            "responsePayload": json.loads(payload),
        }
        sqs = boto3.client("sqs", region_name=REGION)
        queue = sqs.get_queue_url(QueueName=destination.rsplit(":", 1)[-1])["QueueUrl"]
        sqs.send_message(QueueUrl=queue, MessageBody=json.dumps(record))

    def _direct_task_invocations(self) -> list:
        """The state machine's Lambda tasks call the real handler for one of our functions straight from moto's
        interpreter, as the payload bytes Lambda would carry, instead of through a signed boto3 request that moto
        parses again, which was a fifth of a local turn. The response is what moto's Lambda gives the interpreter
        (status, payload, function error); any other function (a version, an alias, a name we do not deploy) still
        goes through moto."""
        from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

        through_moto = lambda_eval_utils._invoke_lambda_function

        def invoke(parameters: dict, region: str, state_credentials: Any) -> dict[str, Any]:
            name = parameters["FunctionName"].rsplit(":", 1)[-1]
            if name not in self._handlers or set(parameters) - {"FunctionName", "Payload"}:
                return through_moto(parameters=parameters, region=region, state_credentials=state_credentials)
            payload, error = self._invoke(name, parameters.get("Payload"))
            response = {"StatusCode": 200, "Payload": lambda_eval_utils._from_payload(io.BytesIO(payload))}
            if error is not None:
                response["FunctionError"] = error
            return response

        return [mock.patch.object(lambda_eval_utils, "_invoke_lambda_function", invoke)]

    def _invoke(self, name: str, body: bytes | None) -> tuple[bytes, str | None]:
        """Run the real handler of function ``name`` on the request payload; the response payload and, when the
        handler raised or its answer is over Lambda's limit, the function error, as the Lambda runtime reports
        them."""
        context = LambdaContext(name, f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}", str(uuid.uuid4()))
        before = _statements()
        try:
            event = json.loads(body or "{}")
            if name == START_FUNCTION:  # every execution starts here, a successor too: held from the start
                self._locks.hold(event["executionArn"])
            result = self._handlers[name](event, context)
            self._track(name, event, result)
        except Exception as err:  # noqa: BLE001 - reported to the state machine like the Lambda runtime does
            return _function_error(type(err).__name__, str(err), traceback.format_tb(err.__traceback__)), UNHANDLED
        finally:
            self.invocations[name] = self.invocations.get(name, 0) + 1
            self.statements[name] = self.statements.get(name, 0) + _statements() - before
        payload = json.dumps(result, default=str).encode()
        if len(payload) > RESPONSE_LIMIT_BYTES:
            message = (
                f"Response payload size ({len(payload)} bytes) exceeded maximum allowed payload size"
                f" ({RESPONSE_LIMIT_BYTES} bytes)."
            )
            return _function_error("Function.ResponseSizeTooLarge", message), UNHANDLED
        return payload, None

    def _track(self, function: str, event: dict, result: dict) -> None:
        """Tie a held execution to its experiment once started; let the experiment's executions go once closed."""
        if function == START_FUNCTION:
            self._locks.started(event["executionArn"], result["experimentId"])
        elif function in FINALIZERS and result.get("experimentId") is not None:
            self._locks.let_go(result["experimentId"])

    def _deploy(self) -> None:
        """Deploy what CDK deploys: the functions, the parameters, the experiment flow and the sweep flow."""
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="oriole-local", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        awslambda = boto3.client("lambda", region_name=REGION)
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as archive:
            archive.writestr("handler.py", "# the local runner routes invocations to the real handlers\n")
        for placeholder, target in FUNCTIONS.items():
            name = function_name(placeholder)
            module, attribute = target.rsplit(".", 1)
            self._handlers[name] = getattr(importlib.import_module(module), attribute)
            arn = awslambda.create_function(
                FunctionName=name, Runtime="python3.12", Role=role, Handler=target, Code={"ZipFile": code.getvalue()}
            )["FunctionArn"]
            self._substitutions[placeholder] = arn
        ssm = boto3.client("ssm", region_name=REGION)
        values = catalog.defaults()
        values.update({catalog.prompt_name(v): text for v, text in prompts.local_prompts().items()})
        values.update(price_list.parameters())
        for name, value in values.items():
            ssm.put_parameter(Name=name, Value=value, Type="String", Overwrite=True, Tier="Advanced")
        self.state_machine_arn = self.sfn.create_state_machine(
            name=STATE_MACHINE_NAME, definition=self.definition(self.execution_timeout_seconds), roleArn=role
        )["stateMachineArn"]
        self._substitutions[flows.EXPERIMENT_STATE_MACHINE] = self.state_machine_arn
        self.sweep_state_machine_arn = self.sfn.create_state_machine(
            name=SWEEP_STATE_MACHINE_NAME,
            definition=json.dumps(flows.definition(flows.SWEEP, substitutions=self._substitutions)),
            roleArn=role,
        )["stateMachineArn"]
        self._deploy_outside_flows(awslambda, role, code.getvalue())

    def _deploy_outside_flows(self, awslambda: Any, role: str, code: bytes) -> None:
        """The status-change finalizer (retried twice, then its dead-letter queue) and the reconciler (which looks
        after the experiment state machine), as ``infra.functions`` deploys them."""
        for name, variables in ((STATUS_FINALIZER, {}), (RECONCILER, {STATE_MACHINE_ARN: self.state_machine_arn})):
            target = OUTSIDE_FLOWS[name.removeprefix("oriole-")]
            module, attribute = target.rsplit(".", 1)
            self._handlers[name] = getattr(importlib.import_module(module), attribute)
            os.environ.update(variables)  # the handlers share this process's environment (restored on exit)
            awslambda.create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role,
                Handler=target,
                Code={"ZipFile": code},
                Environment={"Variables": variables},
            )
        queue = boto3.client("sqs", region_name=REGION).create_queue(QueueName=DEAD_LETTERS)["QueueUrl"]
        queue_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue.rsplit('/', 1)[-1]}"
        awslambda.put_function_event_invoke_config(
            FunctionName=STATUS_FINALIZER,
            MaximumRetryAttempts=FINALIZER_RETRIES,
            DestinationConfig={"OnFailure": {"Destination": queue_arn}},
        )

    def definition(self, execution_timeout_seconds: int) -> str:
        """The experiment flow's ASL file with the function ARNs substituted and the execution timeout set,
        as deployed."""
        return json.dumps(
            flows.definition(timeout_seconds=execution_timeout_seconds, substitutions=self._substitutions)
        )

    def launcher(self, poll_seconds: float = 0.1) -> Launcher:
        """A launcher on this state machine that reports lost execution ends itself (there is no EventBridge) and
        looks again as soon as an execution ends (``ExecutionEnds``)."""
        return Launcher(
            self.sfn,
            self.state_machine_arn,
            poll_seconds=poll_seconds,
            report_status_change=self.report_status_change,
            wait=self._execution_ends.wait,
        )

    def report_status_change(self, execution: Mapping[str, Any]) -> dict[str, Any]:
        """Send an ended execution (as ``describe`` gives it) to the status-change finalizer in the shape of
        EventBridge's "Step Functions Execution Status Change" event."""
        from oriole.handlers import execution_status

        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": ACCOUNT,
            "region": REGION,
            "resources": [execution["executionArn"]],
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "detail": status_change_detail(execution),
        }
        name = STATUS_FINALIZER
        result = execution_status.handler(
            event, LambdaContext(name, f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}", str(uuid.uuid4()))
        )
        if result["closed"]:
            self._locks.let_go(result["experimentId"])
        return result

    def history(self, execution_arn: str) -> list[HistoryEventTypeDef]:
        """Every event of the execution's history, oldest first."""
        pages = self.sfn.get_paginator("get_execution_history").paginate(
            executionArn=execution_arn, PaginationConfig={"PageSize": 1000}
        )
        return [event for page in pages for event in page["events"]]
