"""Graph passes of the reference backend, run by ``ReferenceBackend.preprocess``
on the subgraph the partitioner delegated (before serialization).

They are written against public PyTorch pass APIs: ``torch.fx`` graphs and
``torch.fx.passes.infra.pass_base.PassBase`` / ``PassResult``. ExecuTorch's
``executorch.exir.pass_base.ExportPass`` is public by module path too, but it
re-traces the graph, which a pass that inserts backend-specific operators does
not need (docs/out-of-tree-guide.md, "Quantizer and graph passes").
"""

from reference_backend.passes.fold_quantized import FoldQuantizedOps, fold_quantized

__all__ = ["FoldQuantizedOps", "fold_quantized"]
