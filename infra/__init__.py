"""CDK constructs, one per concern, and the stacks that compose them (``app.py`` only instantiates)."""
