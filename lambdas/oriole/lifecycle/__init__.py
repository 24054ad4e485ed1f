"""One function per state-machine task: the experiment flow's (``experiments``), the sweep flow's
(``sweep_tasks``), closing experiments whose execution ended (``reconcile``), and what a deployment allows
(``deployment``). Each is given its adapters (the store, a parameter reader, an agent factory, the Step Functions
calls) by its handler, validates its input, calls the core and writes the result; each is safe to retry.
"""
