"""What a deployment allows, fixed when it is deployed: on AWS an OpenAI-compatible base URL must be one the
operator listed (context ``openaiBaseUrls``), because the API key is sent there and its answers land in the
database. CDK puts the list on StartExperiment as ``ORIOLE_OPENAI_BASE_URLS`` (JSON), always, so a
deployment that lists none runs no OpenAI experiment; StartExperiment checks before it writes anything.
Locally the variable is not set and nothing is restricted: the researcher's own machine decides.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from oriole.errors import InvalidConfig

OPENAI_BASE_URLS = "ORIOLE_OPENAI_BASE_URLS"


def check_openai_base_url(base_url: str, environ: Mapping[str, str] = os.environ) -> None:
    """Refuse a base URL the deployment does not list (compared without a trailing slash), naming the ones
    it does."""
    listed = environ.get(OPENAI_BASE_URLS)
    if listed is None:
        return
    allowed = [str(url).rstrip("/") for url in json.loads(listed)]
    if base_url.rstrip("/") not in allowed:
        raise InvalidConfig(f"config.baseUrl {base_url!r} is not an OpenAI-compatible base URL this deployment "
                            f"allows (allowed: {', '.join(allowed) or 'none'}); deploy with `cdk deploy -c "
                            "openaiBaseUrls='[\"https://your-server/v1\"]'` and use one of them")
