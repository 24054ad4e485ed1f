"""The model providers' adapters: each turns the turn loop's neutral ``ModelRequest`` into its wire format, calls
the model and turns the answer back into a ``ModelResponse``. Nothing else differs between them.

``wire`` holds the pieces of wire format the adapters share, ``transport`` the HTTP of those that speak HTTP;
``bedrock``, ``ollama``, ``openai`` and ``baseline`` are one module each, and each module's ``agent(setup,
api_key)`` builds its agent. A provider is its module, its catalog entries and its entry in
``oriole.provider_registry``.
"""
