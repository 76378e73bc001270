"""The input of `collsweep workload from-ddp`: a model's parameters (and buffers) as JSON.

PARAMS.json is either a JSON list of the model's parameters, in `model.named_parameters()`
order, or an object {"parameters": [...], "buffers": [...]} ("buffers" optional, in
`model.named_buffers()` order). A parameter is an object

    {"name": "fc.weight", "shape": [1000, 2048], "dtype": "float32", "requires_grad": true}

with "shape" (a list of sizes; [] for a scalar) or "numel" (its element count); "dtype" a
PyTorch datatype name, "torch." allowed (default float32); "requires_grad" default true;
"name" optional. A bare integer is a float32 parameter of that many elements that requires
grad. A buffer has the same keys but "requires_grad". Nothing else is accepted, so a
misspelt key is an error rather than a default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from runners.domain.workload.file import WorkloadError, integer
from runners.domain.workload.sources import TORCH_ITEMSIZE

MAX_ELEMENTS = 2**48  # per tensor: far above any real one, low enough to catch garbage
MAX_DIMS = 64
ALIASES = {  # torch's older names for the same datatypes
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "chalf": "complex32",
    "long": "int64",
    "int": "int32",
    "short": "int16",
}
PARAMETER_KEYS = frozenset({"name", "shape", "numel", "dtype", "requires_grad"})
BUFFER_KEYS = PARAMETER_KEYS - {"requires_grad"}


@dataclass(frozen=True)
class Tensor:
    """A parameter or buffer as DDP sees it: its size and datatype. `dims` is None where only
    the element count was given."""

    name: str
    numel: int
    dtype: str
    dims: int | None
    requires_grad: bool = False

    @property
    def nbytes(self) -> int:
        """Its size in bytes (numel x element size)."""
        return self.numel * TORCH_ITEMSIZE[self.dtype]


@dataclass(frozen=True)
class ModelTensors:
    """A model's parameters and buffers, each in the model's registration order."""

    parameters: tuple[Tensor, ...]
    buffers: tuple[Tensor, ...] = ()

    @property
    def trained(self) -> tuple[Tensor, ...]:
        """The parameters DDP reduces: those that require grad, in order."""
        return tuple(p for p in self.parameters if p.requires_grad)


def model_from_json(data: Any, where: str) -> ModelTensors:
    """The model a PARAMS.json value describes; WorkloadError naming the first problem."""
    raw_parameters: Any
    raw_buffers: Any
    if isinstance(data, list):
        raw_parameters, raw_buffers = data, []
    elif isinstance(data, dict):
        extra = sorted(set(data) - {"parameters", "buffers"})
        if extra:
            raise WorkloadError(f"{where}: unknown key {extra[0]!r} (parameters, buffers)")
        raw_parameters, raw_buffers = data.get("parameters"), data.get("buffers", [])
    else:
        raise WorkloadError(
            f'{where} must be a list of parameters or an object {{"parameters": [...], '
            f'"buffers": [...]}}'
        )
    for key, value in (("parameters", raw_parameters), ("buffers", raw_buffers)):
        if not isinstance(value, list):
            raise WorkloadError(f"{where}: {key} must be a list")
    if not raw_parameters:
        raise WorkloadError(f"{where}: no parameters")
    parameters = tuple(
        _tensor(entry, f"{where}: parameters[{i}]", PARAMETER_KEYS)
        for i, entry in enumerate(raw_parameters)
    )
    buffers = tuple(
        _tensor(entry, f"{where}: buffers[{i}]", BUFFER_KEYS) for i, entry in enumerate(raw_buffers)
    )
    return ModelTensors(parameters, buffers)


def _tensor(entry: Any, where: str, keys: frozenset[str]) -> Tensor:
    if isinstance(entry, int) and not isinstance(entry, bool):
        numel = _elements(integer(entry, where), where)
        return Tensor("", numel, "float32", None, "requires_grad" in keys)
    if not isinstance(entry, dict):
        raise WorkloadError(f"{where} must be an object with a shape or numel, or an integer")
    extra = sorted(set(entry) - keys)
    if extra:
        raise WorkloadError(f"{where}: unknown key {extra[0]!r} ({', '.join(sorted(keys))})")
    name = entry.get("name", "")
    if not isinstance(name, str) or len(name) > 1000:
        raise WorkloadError(f"{where}: name must be a string")
    numel, dims = _size(entry, where)
    requires_grad = entry.get("requires_grad", "requires_grad" in keys)
    if not isinstance(requires_grad, bool):
        raise WorkloadError(f"{where}: requires_grad must be true or false")
    dtype = dtype_name(entry.get("dtype", "float32"), where)
    return Tensor(name, numel, dtype, dims, requires_grad)


def _size(entry: dict, where: str) -> tuple[int, int | None]:
    """(element count, dimensions or None) from "shape" or "numel" (exactly one)."""
    if ("shape" in entry) == ("numel" in entry):
        raise WorkloadError(f"{where}: give either shape or numel")
    if "numel" in entry:
        return _elements(integer(entry["numel"], f"{where}: numel"), where), None
    shape = entry["shape"]
    if not isinstance(shape, list) or len(shape) > MAX_DIMS:
        raise WorkloadError(f"{where}: shape must be a list of at most {MAX_DIMS} sizes")
    sizes = [integer(size, f"{where}: shape[{i}]") for i, size in enumerate(shape)]
    return _elements(math.prod(sizes), where), len(sizes)


def _elements(numel: int, where: str) -> int:
    if numel > MAX_ELEMENTS:
        raise WorkloadError(f"{where}: {numel} elements is not a tensor DDP could hold")
    return numel


def dtype_name(value: Any, where: str) -> str:
    """PyTorch's name of a datatype ("float32") from what a user wrote ("torch.float")."""
    if not isinstance(value, str):
        raise WorkloadError(f"{where}: dtype must be a string, got {value!r}")
    name = value.removeprefix("torch.")
    name = ALIASES.get(name, name)
    if name not in TORCH_ITEMSIZE:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise WorkloadError(f"{where}: unknown dtype {shown!r} (a PyTorch name: float32, ...)")
    return name
