"""One suite run as the process that judges drives it, one concern per module:

- ``run_options``: the run's options, validated once for the command line and the pytest plugin, and
  recorded as the report's ``options``; ``target_option``: ``--target`` and ``--runner`` checked;
- ``run_command``: the command line of a run started as a process of its own;
- ``check_reports``: what pytest's report of a check's test says, as the check's outcome;
- ``check_results``: the results, operator rows, model rows and sections a run collects from them;
- ``certify_plugins``: the pytest plugins a certify run refuses;
- ``console``: what the run shows on the terminal.

The plugin (``conformance.plugin``) wires them into pytest's hooks and writes the report and its files.
This package is the top of the judging side: it may import the checks, ``conformance.models``,
``conformance.operators``, ``conformance.context``, ``conformance.registry``, ``conformance.outcomes``,
``conformance.targets``, ``conformance.plugin`` and ``conformance.results``; only the entry points
(``conformance.cli``, ``conformance.plugin``, ``conformance.testing``) and the commands that start a run
(``run_command``) import it.
"""
