"""The runtime's environment, read in one place: the variables CDK sets on the functions (``infra/functions.py``), and
that the local runner, a test or a researcher's shell sets on one machine, as one frozen model.

``Environment.read()`` reads them when it is called (a local run or a test sets some after the import), and nothing
else in the runtime reads ``os.environ``. An unset variable is None (or empty): the behaviour is then the local one,
where the deployment restricts nothing and the researcher's own machine and credentials decide
(``oriole.lifecycle.deployment``). The lists a deployment sets (JSON) are read when they are asked for, so a
malformed one fails only what needs it, naming the variable.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from oriole.provider_registry import PROVIDERS

DEPLOYMENT = "ORIOLE_DEPLOYMENT"  # the deployment's name (CDK sets it on the functions; a researcher for a second one)
DEFAULT_DEPLOYMENT = "Oriole"
REGION = "AWS_REGION"  # Lambda's
DATABASE_URL = "DATABASE_URL"  # a local run's and the tests' database
DATABASE_SECRET_ARN = "DATABASE_SECRET_ARN"  # on AWS, the secret of the database login
DATABASE_HOST = "ORIOLE_DATABASE_HOST"  # the proxy's endpoint, in place of the secret's host
DATABASE_CA = "ORIOLE_DATABASE_CA"  # a file in oriole/certs: verify the server against it
CODE_VERSION = "ORIOLE_CODE_VERSION"  # package version and asset hash of the deployed code
CODE_COMMIT = "ORIOLE_CODE_COMMIT"  # the commit CDK synthesized the deployed code from (oriole.code_identity)
CODE_DIRTY = "ORIOLE_CODE_DIRTY"  # true when that checkout held uncommitted changes, else false
EXECUTION_TIMEOUT = "ORIOLE_EXECUTION_TIMEOUT_SECONDS"  # the state machine's TimeoutSeconds
BEDROCK_MODEL_IDS = "ORIOLE_BEDROCK_MODEL_IDS"  # JSON list: the deploy-time bedrockModelIds
VISION_MODELS = "ORIOLE_VISION_MODELS"  # JSON list: models marked as accepting images (the CDK context visionModels)
STATE_MACHINE_ARN = "ORIOLE_STATE_MACHINE_ARN"  # the reconciler's state machine
SWEEP_STATE_MACHINE_ARN = "ORIOLE_SWEEP_STATE_MACHINE_ARN"  # the version pruner's: running sweeps keep versions
STACK_ID = "ORIOLE_STACK_ID"  # the version pruner's: the versions its stack holds stay
PRUNED_FUNCTIONS = "ORIOLE_PRUNED_FUNCTIONS"  # JSON list: the functions whose old versions the pruner deletes
ROLE_SECRETS = "ORIOLE_ROLE_SECRETS"  # JSON: database role -> the secret of its password (the migrations)
CONNECT_PATIENCE = "ORIOLE_CONNECT_PATIENCE_SECONDS"  # how long a deployed function waits for its database
REQUIRE_SPEND_LIMIT = "ORIOLE_REQUIRE_SPEND_LIMIT"  # PlanSweep's on AWS: a sweep of models needs a spend limit
# Each provider's own (``oriole.provider_registry``): the model servers a deployment allows (``ModelServers.listed``,
# JSON), the secret of its API key on AWS (``Provider.api_key_secret``) and its API key locally (``Provider.api_key``).


class MalformedEnvironment(ValueError):
    """A variable the deployment sets is missing where a function needs it, or holds something else than it should
    (a list that is not JSON)."""


@dataclass(frozen=True)
class Environment:
    """The variables the runtime reads, as they were when ``read`` was called (``values``: name -> text)."""

    values: Mapping[str, str] = field(repr=False)

    @classmethod
    def read(cls, environ: Mapping[str, str] = os.environ) -> Environment:
        return cls(dict(environ))

    def _text(self, name: str) -> str | None:
        return self.values.get(name) or None

    def _required(self, name: str) -> str:
        """A variable the function that reads it cannot run without (CDK sets it on that function)."""
        text = self._text(name)
        if text is None:
            raise MalformedEnvironment(f"{name} is not set: this function was deployed without it (infra/functions.py)")
        return text

    def _listed(self, name: str) -> tuple[str, ...] | None:
        """A JSON list a deployment sets; None when unset (nothing restricted)."""
        text = self._text(name)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise MalformedEnvironment(f'{name} must be a JSON list of strings, like ["a", "b"]; got {text[:200]!r}')
        return tuple(value)

    @property
    def deployment(self) -> str:
        return self._text(DEPLOYMENT) or DEFAULT_DEPLOYMENT

    @property
    def region(self) -> str:
        return self.values.get(REGION, "")

    @property
    def database_url(self) -> str | None:
        return self._text(DATABASE_URL)

    @property
    def database_secret_arn(self) -> str | None:
        return self._text(DATABASE_SECRET_ARN)

    @property
    def database_host(self) -> str | None:
        """The proxy's endpoint; when it is set, connections go through RDS Proxy."""
        return self._text(DATABASE_HOST)

    @property
    def database_ca(self) -> str | None:
        return self._text(DATABASE_CA)

    @property
    def connect_patience_seconds(self) -> float | None:
        """How long a deployed function waits for a database that does not answer yet (``oriole.store.db``); None
        locally, where a database is up or it is not."""
        text = self._text(CONNECT_PATIENCE)
        return float(text) if text else None

    @property
    def spend_limit_required(self) -> bool:
        """Whether a sweep of models needs a spend limit (PlanSweep on AWS)."""
        return self._text(REQUIRE_SPEND_LIMIT) is not None

    @property
    def code_version(self) -> str | None:
        return self._text(CODE_VERSION)

    @property
    def code_commit(self) -> str | None:
        return self._text(CODE_COMMIT)

    @property
    def code_dirty(self) -> bool | None:
        """Whether the deployed code's checkout held uncommitted changes; None when the deployment did not say."""
        text = self._text(CODE_DIRTY)
        return None if text is None else text == "true"

    @property
    def execution_timeout_seconds(self) -> int | None:
        text = self._text(EXECUTION_TIMEOUT)
        return int(text) if text else None

    @functools.cached_property
    def bedrock_model_ids(self) -> tuple[str, ...] | None:
        """The Bedrock models a deployment grants; None locally (any model)."""
        return self._listed(BEDROCK_MODEL_IDS)

    @functools.cached_property
    def vision_models(self) -> tuple[str, ...]:
        return self._listed(VISION_MODELS) or ()

    @property
    def state_machine_arn(self) -> str:
        """The experiment state machine the reconciler looks after."""
        return self._required(STATE_MACHINE_ARN)

    @property
    def sweep_state_machine_arn(self) -> str:
        """The version pruner's: the definitions of running sweeps keep their versions."""
        return self._required(SWEEP_STATE_MACHINE_ARN)

    @property
    def stack_id(self) -> str:
        """The version pruner's: the versions its stack holds stay."""
        return self._required(STACK_ID)

    @functools.cached_property
    def pruned_functions(self) -> tuple[str, ...]:
        """The version pruner's: the functions whose old versions it deletes."""
        return self._listed(PRUNED_FUNCTIONS) or ()

    @property
    def execution_timeout(self) -> int:
        """The execution timeout, for a function that cannot run without it (the version pruner's grace)."""
        return int(self._required(EXECUTION_TIMEOUT))

    @functools.cached_property
    def role_secrets(self) -> dict[str, str]:
        """Database role -> the ARN of the secret of its password (the migrations give each its login)."""
        text = self._text(ROLE_SECRETS)
        try:
            roles = json.loads(text) if text else {}
        except json.JSONDecodeError:
            roles = None
        if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
            raise MalformedEnvironment(f"{ROLE_SECRETS} must be a JSON object of role -> secret ARN")
        return roles

    def model_servers(self, provider: str) -> tuple[str, ...] | None:
        """The model servers a deployment allows a provider's experiments to name; None when it lists none (a
        local run: any server)."""
        servers = PROVIDERS[provider].servers
        return None if servers is None else self._listed(servers.listed)

    def api_key_secret(self, provider: str) -> str | None:
        """The ARN of the secret holding a provider's API key, when the deployment sends one."""
        variable = PROVIDERS[provider].api_key_secret
        return None if variable is None else self._text(variable)

    def api_key(self, provider: str) -> str | None:
        """A provider's API key in a local run's environment (unchecked: ``transport.check_api_key`` checks it)."""
        variable = PROVIDERS[provider].api_key
        return None if variable is None else self._text(variable)
