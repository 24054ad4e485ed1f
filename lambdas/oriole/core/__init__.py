"""The pure domain: the maze rules and vision (``maze``), the maze set (``mazeset``), the tools (``tools``), the turn
loop every agent plays through (``turn_loop``, with ``text_tool_calls`` for models without native tool calling),
the baselines (``baselines``, with the map an agent has seen: ``known_map``), the memory modes (``memory``), the
maze as a picture (``picture``, written as PNG by ``png``), the limits and the next-step decision
(``progress``) and a sweep's matrix and plan (``sweep_plan``).

Plain data in, plain data out: nothing here imports boto3, psycopg or an HTTP client (a test of the layers
checks it), so all of it is tested without a server.
"""
