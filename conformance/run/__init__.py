"""One suite run as the process that judges drives it: ``run_options`` (the run's options, validated
once for the command line and the pytest plugin) and ``console`` (what the run shows on the terminal).
It is the top of the judging side: it may import the checks, ``conformance.models``,
``conformance.operators``, ``conformance.context``, ``conformance.registry``, ``conformance.outcomes``,
``conformance.plugin`` and ``conformance.results``; only the entry points (``conformance.cli``,
``conformance.plugin``, ``conformance.testing``) import it."""
