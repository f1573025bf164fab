"""The long tier: tests that CI leaves out, each with its reason (CONTRIBUTING.md, "Tests come in three
tiers"). A family of slow tests keeps one case, or a few, in the full tier, which CI runs; the rest of it
is listed here and runs with ``bash scripts/test.sh --long``.

Keys are pytest node ids, or a node id's prefix ending in ``[`` for every case of a parametrized test
(``test_x[`` = all of ``test_x[...]``). The root ``conftest.py`` marks each matching test ``long``;
tests/ci/test_long_tier.py holds every key to a test that exists and to a family whose one case stays.
"""

from __future__ import annotations

GOLDEN = "tests/api/test_golden_descriptors.py::test_golden_descriptor_is_judged_as_its_release_judged_it"
MISBEHAVING = "tests/conformance/test_misbehaving_runtimes.py"
QEMU = "tests/conformance/test_target_qemu.py"
PORTABILITY = "tests/conformance/test_target_qemu_portability.py"
INTERRUPT = "tests/conformance/test_interrupt_points.py"
JUDGE = "tests/conformance/test_judge_environment.py"
TRUST = "tests/conformance/test_trustworthy_verdicts.py"
BROKEN = "tests/conformance/test_broken_backends.py::test_defect_is_caught_by_the_right_check"
CRASHES = "tests/conformance/test_operator_crashes.py"
CPP = "tests/cpp/test_cpp_integration.py"

#: node id (or prefix ending in "[") -> why it is in the long tier, and which case of its family CI keeps
LONG: dict[str, str] = {
    # a certify run of today's suite per golden descriptor of 0.2-0.4 (2-4 min each)
    f"{GOLDEN}[suite_0_2_0.narrowed:DESCRIPTOR-AOT]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_2_0.narrowed:NARROWED-AOT]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_2_0.reference:DESCRIPTOR-certify]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_3_0.reference:DESCRIPTOR-certify]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_4_0.mixed:GOOD-AOT]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_4_0.narrowed:NARROWED-AOT]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    f"{GOLDEN}[suite_0_4_0.reference:DESCRIPTOR-certify]": "golden runs: CI keeps 0.4.0 every_field and 0.2.0 getitem",
    # runtime faults, a whole run each: CI keeps execute:segv (default tier), destroy:hang (a real hang)
    # and init:memory-bomb
    f"{MISBEHAVING}::test_fault_fails_the_checks_that_met_it[": "fault matrix: the default tier keeps execute:segv",
    f"{MISBEHAVING}::test_more_faults_fail_rt3_with_the_right_reason[execute:exit0]": "fault matrix",
    f"{MISBEHAVING}::test_more_faults_fail_rt3_with_the_right_reason[execute:_exit0 (xdist)]": "fault matrix",
    f"{MISBEHAVING}::test_more_faults_fail_rt3_with_the_right_reason[init:quick_exit]": "fault matrix",
    f"{MISBEHAVING}::test_more_faults_fail_rt3_with_the_right_reason[execute:imitate-then-segv]": "fault matrix",
    f"{MISBEHAVING}::test_more_faults_fail_rt3_with_the_right_reason[execute:spew]": "300 MB of log lines",
    f"{MISBEHAVING}::test_a_runtime_that_writes_into_the_suites_pipes_costs_only_its_own_check": "fault matrix",
    f"{MISBEHAVING}::test_a_runtime_thread_that_aborts_between_tasks_fails_the_check_that_meets_it": "fault matrix",
    # the aarch64 runner under QEMU: CI keeps the RT checks there, the input errors and one fault
    f"{QEMU}::test_certify_on_aarch64_under_qemu_matches_in_process": "a whole certify run under QEMU",
    f"{QEMU}::test_after_a_switch_of_target_the_operator_cases_run_again_there": "operator cases under QEMU",
    f"{QEMU}::test_a_fault_of_the_emulated_runtime_is_the_checks_outcome[None-passed-]": "QEMU faults: CI keeps segv",
    f"{QEMU}::test_a_fault_of_the_emulated_runtime_is_the_checks_outcome[execute:hang-timed_out-reason2]": (
        "QEMU faults: CI keeps segv; the hang path is proven in process (destroy:hang)"
    ),
    # every released blob at every alignment on aarch64: CI keeps the newest format
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.1.0 golden (format 1.1, header 1)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.2.0 default (format 1.2, header 2)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.2.0 header-format-1 (format 1.2, header 1)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.2.0 format-1.1-header-1 (format 1.1, header 1)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.3.0 default (format 1.3, header 2)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.3.0 header-format-1 (format 1.3, header 1)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.3.0 format-1.1-header-1 (format 1.1, header 1)]": "older blob",
    f"{PORTABILITY}::test_a_blob_runs_alike_at_every_alignment_on_aarch64[0.4.0 format-1.1-header-1 (format 1.1, header 1)]": "older format",
    # Ctrl-C at each point of a run: CI keeps in-process (default tier), xdist and lowering
    f"{INTERRUPT}::test_ctrl_c_at_any_point_ends_the_run_cleanly[starting]": "interrupt points: CI keeps lowering",
    f"{INTERRUPT}::test_ctrl_c_at_any_point_ends_the_run_cleanly[starting-xdist]": "interrupt points",
    f"{INTERRUPT}::test_ctrl_c_at_any_point_ends_the_run_cleanly[describing]": "interrupt points",
    f"{INTERRUPT}::test_ctrl_c_at_any_point_ends_the_run_cleanly[collecting-xdist]": "interrupt points",
    f"{INTERRUPT}::test_an_interrupted_run_is_never_conformant_and_writes_no_badge[in-process-sigterm]": "SIGTERM",
    # a probed run per code-loading variable: CI keeps PYTHONPATH and LD_PRELOAD
    **{
        f"{JUDGE}::test_a_code_loading_variable_is_named_and_its_code_never_reaches_the_judge[{v}]": (
            "code-loading variables: CI keeps PYTHONPATH and LD_PRELOAD"
        )
        for v in (
            "PYTEST_PLUGINS",
            "PYTEST_ADDOPTS",
            "PYTHONWARNINGS",
            "PYTHONSTARTUP",
            "PYTHONINSPECT",
            "PYTHONUSERBASE",
            "PYTHONPYCACHEPREFIX",
            "PYTHONBREAKPOINT",
            "LD_AUDIT",
            "LD_LIBRARY_PATH",
        )
    },
    # broken vendors, a run each: CI keeps the partitioner that raises, the library that did not register
    # and the one that steals exp from XNNPACK
    **{
        f"{TRUST}::test_broken_backend_fails_the_right_check[{case}]": "broken vendors: CI keeps three"
        for case in (
            "process-dependent blob",
            "sample whose make() raises",
            "runtime_libraries() raises",
            "runtime library that does not exist",
            "runtime that runs a newer minor",
            "runtime that crashes above a dynamic bound",
        )
    },
    f"{TRUST}::test_a_descriptor_module_that_crashes_exits_or_hangs_on_import_is_a_descriptor_error[exit0]": (
        "CI keeps segv (default tier) and hang"
    ),
    # broken backends: CI keeps the state defects and NONDETERMINISTIC
    **{
        f"{BROKEN}[{name}]": "broken backends: the default tier keeps five, CI four more"
        for name in (
            "PRIVATE_IMPORT",
            "CLAIMS_TOO_MUCH",
            "CLAIMS_NEWER_MINOR",
            "UNDERSTATES_OLD_FORMATS",
            "REQUANT_OFF_BY_ONE",
        )
    },
    # operator crashes: CI keeps the cases named one by one and the hang in execute
    f"{CRASHES}::test_a_runtime_that_crashes_on_every_execute_stops_after_a_few_crashes": "operator crashes",
    f"{CRASHES}::test_a_crash_in_load_or_destroy_stops_the_operator_after_its_first_case[": "operator crashes",
    f"{CRASHES}::test_a_partitioner_that_crashes_on_some_cases_fails_ops1_naming_each": "operator crashes",
    f"{CRASHES}::test_a_crash_in_execute_is_in_the_report_the_junit_file_and_verifies": "operator crashes",
    # faults behind the runner: CI keeps execute:segv and execute:hang
    "tests/conformance/test_target_faults.py::test_a_fault_behind_the_runner_fails_the_checks_that_met_it[None]": (
        "runner faults: CI keeps segv and hang"
    ),
    "tests/conformance/test_target_faults.py::test_a_fault_behind_the_runner_fails_the_checks_that_met_it[init:abort]": (
        "runner faults: CI keeps segv and hang"
    ),
    "tests/conformance/test_target_faults.py::test_a_fault_behind_the_runner_fails_the_checks_that_met_it"
    "[execute:imitate-then-segv]": "runner faults: CI keeps segv and hang",
    # real backends' whole runs: CI keeps the scoreboard's short form and XNNPACK's registration
    "tests/scoreboard/test_scoreboard.py::test_a_full_row_run_again_gives_the_committed_outcomes": (
        "a scoreboard row with every check and the model tier (OpenVINO: about 15 minutes)"
    ),
    "tests/kit/test_xnnpack_adapter.py::test_the_adapter_is_certified": "a certify run of XNNPACK behind the kit",
    "tests/scoreboard/test_registration.py::test_an_undeclared_import_registration_fails_rt1_only": "registration",
    "tests/scoreboard/test_registration.py::test_a_backend_that_load_runtime_registers_cannot_claim_import": "registration",
    "tests/scoreboard/test_registration.py::test_registration_by_the_descriptor_module_is_not_registration_at_import": (
        "registration"
    ),
    # operator defects and the model tier: CI keeps one defect, the declared operators and a model defect
    **{
        f"tests/operators/test_operator_defects.py::test_operator_defect_is_caught[{name}]": "operator defects"
        for name in ("INT32_NOT_CLAIMED", "RUNTIME_LACKS_DECLARED", "CHANNELS_LAST_CLAIMED")
    },
    "tests/operators/test_models.py::test_measure_and_table": "the model tier (ResNet, MobileNetV2, ViT, M5)",
    "tests/operators/test_models.py::test_a_model_left_on_cpu_is_reported": "a model tier run",
    # C++ applications linked three ways: CI keeps the shared library and the plain static link
    f"{CPP}::test_application_registers_the_backend_and_matches_eager[static-explicit]": "a static link build",
    f"{CPP}::test_application_registers_the_backend_and_matches_eager[static-whole-archive]": "a static link build",
    "tests/conformance/test_target_ssh.py::test_a_full_disk_on_the_target_fails_the_check_with_the_reason": (
        "ssh faults: CI keeps the lost connection"
    ),
    "tests/conformance/test_lowering_cache.py::test_a_fault_chosen_by_the_environment_is_not_masked": (
        "lowering cache: CI keeps the certify and second-run rules"
    ),
}


def reason(nodeid: str) -> str | None:
    """Why the test ``nodeid`` is in the long tier, or None if it is not."""
    if nodeid in LONG:
        return LONG[nodeid]
    if "[" in nodeid:
        return LONG.get(nodeid[: nodeid.index("[") + 1])
    return None
