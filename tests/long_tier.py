"""Which tests marked ``full`` CI runs: the short form of each slow family (CONTRIBUTING.md, "Tests come in
three tiers"). Every other ``full`` test is in the long tier, which ``bash scripts/test.sh --long`` runs.

``CI_KEEPS`` maps a pytest node id, or a node id's prefix ending in ``[`` for every case of a parametrized
test, to why CI runs it. ``tests/conftest.py`` marks each ``full`` test that no key matches ``long``;
tests/ci/test_long_tier.py holds every key to a collected ``full`` test. Figures in the comments are
seconds measured at load 3 (junit times of a fresh clone, 2026-12-03).
"""

from __future__ import annotations

T = "tests/conformance/"

CI_KEEPS: dict[str, str] = {
    # Arm's TOSA row in its own environment, through the TOSA reference model (the scoreboard's short form)
    "tests/scoreboard/test_arm_row.py::test_the_arm_tosa_row_runs_in_the_reference_model_marked_simulated": (
        "a real simulator: Arm's TOSA flow"
    ),
    # Arm's integer flow: every sample and corpus case quantized by Arm's own quantizer (quantized.every_sample)
    "tests/scoreboard/test_arm_row.py::test_the_arm_integer_row_quantizes_every_sample_and_case_with_arms_quantizer": (
        "an integer-only backend: Arm's TOSA INT flow"
    ),
    # Arm's Ethos-U rows ahead of time, Vela compiling for each NPU: two operators, one a zero-size case Vela
    # dies on (declared unsupported), and the runtime checks not applicable (40 s a row on an idle machine)
    "tests/scoreboard/test_arm_row.py::test_the_ethos_u_rows_compile_with_vela_for_their_npu_ahead_of_time[": (
        "an NPU flow ahead of time: Arm's Ethos-U55 and U85 through Vela"
    ),
    # a vendor's simulator that hangs, and two that hand back what the bridge cannot use (docs/contract.md,
    # "Simulated runtimes"); the default tier keeps wrong numbers, a refusal and a crash
    "tests/simulator/test_simulated_runs.py::test_a_misbehaving_simulator_fails_the_check_that_met_it[HANGS]": (
        "a simulator that hangs"
    ),
    "tests/simulator/test_simulated_runs.py::test_a_misbehaving_simulator_fails_the_check_that_met_it[NOT_A_DELEGATE]": (
        "a simulator returning no delegate"
    ),
    "tests/simulator/test_simulated_runs.py::test_a_misbehaving_simulator_fails_the_check_that_met_it[TOO_FEW_OUTPUTS]": (
        "a simulator returning too few outputs"
    ),
    # a runtime that really hangs (destroy, under xdist), one that asks for too much memory, one that dies
    # after the last task: the timeout, memory and liveness paths (the default tier keeps execute:segv)
    f"{T}test_misbehaving_runtimes.py::test_more_faults_fail_rt3_with_the_right_reason[destroy:hang (xdist)]": "hang",
    f"{T}test_misbehaving_runtimes.py::test_more_faults_fail_rt3_with_the_right_reason[init:memory-bomb]": "memory",
    f"{T}test_misbehaving_runtimes.py::test_a_runtime_thread_that_kills_the_process_after_the_last_task_is_a_crash": (
        "liveness after the last task"
    ),
    # the state clause's defect that only STATE-1 sees (90 s)
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[SCRATCHES_STATE]": "state across calls",
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[WRITES_INPUTS]": "a runtime writing its inputs",
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[FORGES_ACCEPTED]": (
        "RT-5 through a descriptor's incompatible_blobs"
    ),
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[ACCEPTS_INCOMPATIBLE]": (
        "RT-5: a runtime accepting an incompatible blob"
    ),
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[LEAVES_DEQUANTIZE]": (
        "QNT: a partitioner leaving a dequantize on CPU"
    ),
    f"{T}test_misbehaving_runtimes.py::test_a_runtime_that_keeps_memory_fails_rt9_with_the_growth[execute:leak]": (
        "memory kept per execute"
    ),
    f"{T}test_misbehaving_runtimes.py::test_a_slow_init_is_not_charged_to_the_checks_timeout": "slow init()",
    f"{T}test_nan_modes.py::test_a_backend_is_judged_by_the_nan_mode_it_declares[reference-propagates]": (
        "OPS-2 judging by a declared nan_mode"
    ),
    f"{T}test_misbehaving_runtimes.py::test_a_runtime_wrong_under_concurrency_fails_rt10[execute:shared-scratch]": (
        "methods sharing a scratch buffer across threads"
    ),
    f"{T}test_misbehaving_runtimes.py::test_the_same_runtime_without_a_fault_passes": "the fault-free baseline",
    # a claim carried over RT-6's stricter requirement: also CI's run of a library registering a second id
    # (the EXTRA_ID case of test_broken_backends runs every RT check: --long)
    f"{T}test_carried_claims.py::test_a_claim_of_0_5_0_carries_over_what_0_6_0_made_stricter": "a claim carries over",
    # the reference runtime under ThreadSanitizer: 8 threads each executing their own Method (40 s)
    "tests/cpp/test_concurrency.py::test_threads_share_a_program_and_get_correct_results[thread]": "TSan",
    # the vendor side in an environment of its own (two runs, 30 s)
    f"{T}test_vendor_python.py::test_the_vendor_side_runs_the_vendors_python_and_only_there": "--vendor-python",
    # the runtime defect that only a program of two methods loaded together shows (MTH-1)
    f"{T}test_broken_backends.py::test_defect_is_caught_by_the_right_check[LAST_INIT_WINS]": "several methods",
    # the scoreboard's short form (XNNPACK, a few operators: 108 s) and the vendor path of the template (112 s)
    "tests/scoreboard/test_scoreboard.py::test_the_short_form_runs_one_backend_and_renders_it_as_a_row": "scoreboard",
    "tests/kit/test_new_backend.py::test_the_generated_package_passes_its_tests_and_is_certified": "new-backend",
    # targets: the RT checks on aarch64 under QEMU, the blob format on aarch64 and s390x, a real ssh server,
    # faults behind the runner, and every one-line refusal of bad target input (cheap)
    f"{T}test_target_qemu.py::test_the_rt_checks_pass_on_aarch64_under_qemu": "QEMU",
    f"{T}test_target_qemu.py::test_the_cross_build_refuses_bad_input_in_one_line[": "bad input",
    f"{T}test_target_qemu.py::test_the_cross_build_records_what_the_target_needs": "cross build",
    f"{T}test_target_qemu.py::test_a_runner_built_for_this_host_is_refused_before_the_run": "bad input",
    f"{T}test_target_qemu.py::test_a_bad_qemu_target_is_one_line[": "bad input",
    f"{T}test_target_qemu.py::test_no_emulator_on_this_host_is_one_line": "bad input",
    f"{T}test_target_qemu.py::test_a_sysroot_for_a_machine_debian_names_no_triple_for_must_be_given": "bad input",
    f"{T}test_target_qemu.py::test_a_fault_of_the_emulated_runtime_is_the_checks_outcome[execute:segv-crashed-reason1]": (
        "a fault under QEMU"
    ),
    f"{T}test_target_qemu_portability.py::test_the_header_codec_judges_every_vector_alike_on_another_machine[": "codec",
    f"{T}test_target_qemu_portability.py::test_the_reference_runtime_refuses_to_build_for_a_big_endian_machine": "BE",
    f"{T}test_target_qemu_portability.py::test_a_blob_runs_alike_at_every_alignment_on_aarch64"
    "[0.4.0 default (format 1.4, header 2)]": "the newest blob format at every alignment",
    f"{T}test_target_local.py::test_bad_target_input_is_one_line[": "bad input",
    f"{T}test_target_local.py::test_an_unreachable_host_is_one_line_and_quick": "bad input",
    f"{T}test_target_adb.py::": "adb: cheap, no device needed",
    # programs of several methods through the runner's methods entry: MTH and both LLM rows, and a runtime
    # wrong only with two methods loaded (90 s together)
    f"{T}test_target_methods.py::test_the_methods_and_the_llm_tier_run_on_the_runner": "methods on a target",
    f"{T}test_target_methods.py::test_a_runtime_wrong_with_two_methods_loaded_fails_mth1_on_the_runner": (
        "a methods defect on a target"
    ),
    f"{T}test_target_ssh.py::test_runtime_checks_pass_on_an_ssh_target": "a real ssh server (56 s)",
    f"{T}test_target_ssh.py::test_a_lost_connection_fails_the_check_with_the_target_named": "ssh fault",
    f"{T}test_target_faults.py::test_a_fault_behind_the_runner_fails_the_checks_that_met_it[execute:segv]": "runner",
    f"{T}test_target_faults.py::test_a_fault_behind_the_runner_fails_the_checks_that_met_it[execute:hang]": "runner",
    # golden descriptors load as their releases read them (one), Ctrl-C under xdist and while lowering
    "tests/api/test_golden_descriptors.py::test_golden_descriptor_loads_as_its_release_read_it"
    "[suite_0_4_0.every_field:DESCRIPTOR]": "every field of 0.4.0",
    "tests/api/test_golden_descriptors.py::test_every_recorded_run_names_its_command_and_release": "data",
    "tests/api/test_golden_descriptors.py::test_the_measured_breaks_are_in_the_recorded_data": "data",
    f"{T}test_interrupt_points.py::test_an_interrupted_run_is_never_conformant_and_writes_no_badge[xdist]": "Ctrl-C",
    f"{T}test_work_ahead.py::test_a_run_starts_ndata5_ahead_and_runs_it_last": "NDATA-5 made ahead (1 GiB)",
    "tests/docs/test_docs_command.py::test_the_wheel_carries_the_documents_and_describes_the_package": (
        "the suite's wheel: documents, runner sources, description"
    ),
    f"{T}test_interrupt_points.py::test_ctrl_c_at_any_point_ends_the_run_cleanly[lowering]": "Ctrl-C",
    # vendor code that breaks a run, and one that hangs on import
    f"{T}test_trustworthy_verdicts.py::test_broken_backend_fails_the_right_check[partitioner that raises]": "vendor",
    f"{T}test_trustworthy_verdicts.py::test_broken_backend_fails_the_right_check"
    "[runtime library that did not register]": "vendor",
    f"{T}test_trustworthy_verdicts.py::test_a_descriptor_module_that_crashes_exits_or_hangs_on_import_is_a_descriptor_error"
    "[hang]": "a descriptor import that hangs",
    f"{T}test_judge_startup_code.py::test_a_wheel_s_pth_runs_in_the_vendor_process_but_not_in_the_judge": "trust",
    f"{T}test_lowering_cache.py::test_a_warm_cache_stands_for_the_lowering_and_aot5_still_lowers_twice": (
        "a warm cache stands for a lowering"
    ),
    f"{T}test_lowering_cache.py::test_no_cache_and_a_certify_run_never_read_the_cache": "certify never reads",
    f"{T}test_cli.py::test_expectations_mark_checks_and_certify_forbids_expected_failures": "expectations",
    # C++ applications, named data through the runner, ABI and packaging (cheap once built)
    "tests/cpp/test_cpp_integration.py::test_application_registers_the_backend_and_matches_eager[shared]": "C++",
    "tests/cpp/test_cpp_integration.py::test_plain_static_link_drops_the_registration": "C++",
    "tests/cpp/test_cpp_integration.py::test_runtime_of_another_minor_release_is_refused_at_registration": "C++",
    "tests/cpp/test_cpp_integration.py::test_cmake_package_refuses_another_executorch_minor": "C++",
    "tests/cpp/test_cpp_integration.py::test_runner_rejects_wrong_number_of_values": "C++",
    "tests/named_data/test_named_data_cpp.py::": "named data through the runner",
    "tests/named_data/test_named_data_suite.py::test_checks_are_registered_as_must_with_their_clauses": "NDATA",
    "tests/named_data/test_named_data_suite.py::test_reference_backend_passes[": "NDATA",
    "tests/named_data/test_named_data_suite.py::test_not_applicable_without_named_data[": "NDATA",
    "tests/named_data/test_named_data_suite.py::test_lowering_writes_a_small_pte_and_one_ptd": "NDATA",
    "tests/named_data/test_named_data_suite.py::test_descriptor_validation": "NDATA",
    "tests/named_data/test_named_data_suite.py::test_a_key_missing_from_the_ptd_is_named": "NDATA",
    "tests/api/test_api_snapshot.py::": "the vendor API's promises (cheap)",
    "tests/api/test_report_deprecations.py::": "deprecations",
    "tests/api/test_check_backend.py::test_a_malformed_descriptor_is_a_descriptor_error_naming_it": "check_backend",
    "tests/api/test_check_backend.py::test_check_backend_from_the_vendors_tests": "check_backend",
    "tests/abi/test_abi_variants.py::test_a_backend_with_its_own_registry_gets_that_verdict[": "ABI",
    "tests/abi/test_abi_variants.py::test_the_text_report_says_what_it_means_and_what_to_do": "ABI",
    "tests/abi/test_abi_variants.py::test_symbols_from_a_sibling_library_bind_there": "ABI",
    "tests/abi/test_abi_variants.py::test_a_sibling_that_is_not_shipped_names_what_is_missing": "ABI",
    "tests/abi/test_abi_variants.py::test_check_wheel_passes_the_split_wheel": "ABI",
    "tests/abi/test_abi_variants.py::test_a_requirement_that_admits_a_rebuild_release_is_an_error": "ABI",
    "tests/abi/test_abi_variants.py::test_a_wheel_with_a_private_registry_library_is_an_error": "ABI",
    "tests/abi/test_abi_variants.py::test_a_runpath_into_the_build_machine_is_an_error": "ABI",
    "tests/abi/test_abi_variants.py::test_check_wheel_refuses_what_is_not_a_wheel": "ABI",
    "tests/abi/test_abi_variants.py::test_check_wheel_unknown_release_and_unknown_build": "ABI",
    "tests/abi/test_real_vendor_wheel.py::": "ABI of a real vendor wheel",
    "tests/packaging/test_wheel.py::": "the wheels",
    "tests/kit/test_kit_packaging.py::": "the kit's wheel",
    "tests/kit/test_example_vendor.py::": "the kit's example vendor",
    "tests/kit/test_xnnpack_adapter.py::test_the_blob_is_xnnpack_s_behind_the_contract_header": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_xnnpack_s_named_data_passes_through_unchanged": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_execute_is_bit_identical_to_plain_xnnpack": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_a_forged_header_is_refused_with_the_reason": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_a_corrupted_payload_is_refused_before_xnnpack_reads_it": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_a_blob_without_the_header_is_refused": "adapter",
    "tests/kit/test_xnnpack_adapter.py::test_a_header_naming_another_backend_is_refused": "adapter",
    # one operator defect, the model tier's defect and its option, one crash of an operator
    "tests/operators/test_operator_defects.py::test_operator_defect_is_caught[NEVER_CLAIMS_DECLARED]": "OPS",
    "tests/operators/test_models.py::test_a_defect_only_a_model_exposes_is_reported": "models",
    "tests/operators/test_models.py::test_models_selection_is_validated": "models",
    "tests/operators/test_models.py::test_corpus_has_no_convolution_wider_than_16_channels": "models",
    # the LLM tier: the reference backend decodes eager PyTorch's tokens (one lowering of the decoder; the
    # broken case, a decode without the prompt's cache, lowers it again: --long)
    "tests/operators/test_llm_tier.py::test_the_reference_backend_decodes_as_eager_pytorch": "LLM tier",
    # the quantized LLM row: the reference quantizer's decoder, and a runtime a quantization step off (45 s)
    f"{T}test_llm_quantized.py::test_the_reference_backend_decodes_its_quantized_decoder_as_the_converted_model": (
        "quantized LLM row"
    ),
    f"{T}test_llm_quantized.py::test_a_runtime_a_step_off_is_a_token_mismatch_of_the_quantized_row": (
        "quantized LLM row, broken"
    ),
    f"{T}test_operator_crashes.py::test_a_crash_in_load_or_destroy_stops_the_operator_after_its_first_case"
    "[destroy:segv-destroy]": "an operator's crash",
    "tests/compat/test_acceptance_check.py::test_compat_reads_the_rules_the_installed_descriptor_declares": "compat",
    "tests/scoreboard/test_registration.py::test_xnnpack_registered_at_import_passes_rt1_and_rt2": "registration",
    "tests/scoreboard/test_library_environments.py::test_the_base_environment_of_a_layered_venv_is_inside": "PKG-6",
    "tests/certification/test_real_report.py::test_rerun_refuses_a_report_of_another_backend_than_its_options_name"
    "[made-up-backend]": "rerun",
    # the reference runtime's hardening against forged limits and damaged data (the rest: --long, and
    # the fuzzers)
    "reference_backend/tests/test_hostile_blobs.py::test_a_forged_limit_is_still_bounded_by_the_applications_maximum": (
        "hardening"
    ),
    "reference_backend/tests/test_hostile_blobs.py::test_a_damaged_ptd_fails_its_checksum_with_the_key_and_the_file": (
        "hardening"
    ),
    # OPS-2 judging by the subnormals a runtime with flush-to-zero declares: undeclared, it fails (70 s)
    f"{T}test_subnormals.py::test_an_undeclared_flush_fails_ops2_on_the_subnormal_cases": "declared subnormals",
    # a standalone reproducer of a real XNNPACK defect and of a passing case (15 s each)
    "tests/reproduce/test_reproduce.py::": "standalone reproducers",
    # the reference backend's release grid: 0.4.0 and a release adding an opcode without a format bump (48 s),
    # and a runtime release that crashes (31 s; the one that hangs is in the long tier: 170 s)
    "tests/release_grid/test_reference_release_grid.py::test_an_operator_added_without_a_format_bump_is_caught": (
        "a vendor's own release grid"
    ),
    f"{T}test_release_grid_faults.py::test_a_runtime_release_that_crashes_fails_its_cells_with_the_signal": (
        "a crashing runtime in the release grid"
    ),
    # the tier list's own checks: one collection of the whole tree (17 s)
    "tests/ci/test_long_tier.py::": "this list's own checks",
}


def _matches(key: str, nodeid: str) -> bool:
    return nodeid == key or (key.endswith(("[", "::")) and nodeid.startswith(key))


def kept(nodeid: str) -> str | None:
    """Why CI runs the ``full`` test ``nodeid``, or None if it is in the long tier."""
    return next((why for key, why in CI_KEEPS.items() if _matches(key, nodeid)), None)
