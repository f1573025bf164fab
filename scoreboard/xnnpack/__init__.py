"""A conformance descriptor of ExecuTorch's XNNPACK delegate, as shipped in the executorch 1.5.1 wheel."""
