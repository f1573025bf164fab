"""A conformance descriptor of ExecuTorch's OpenVINO delegate, as shipped in the executorch 1.5.1
wheel (``executorch.backends.openvino``, ``executorch/lib/libexecutorch_backend_openvino.so``) with
the OpenVINO runtime from the ``openvino`` package (the ``scoreboard`` extra)."""
