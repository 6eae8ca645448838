"""What this machine offers for 16-bit compute, and whether a policy will be fast on it.

TensorFlow is asked only through ``query_devices`` (the seam tests replace with recorded
details of other machines); everything else here is plain logic over its answer and
the CPU flags, so a V100 or a TPU can be judged without owning one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

# CPU flags that make bfloat16 matrix math fast (Sapphire Rapids AMX, Cooper Lake+).
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")
MIXED_FLOAT16, MIXED_BFLOAT16 = "mixed_float16", "mixed_bfloat16"


@dataclass(frozen=True)
class Device:
    """One physical device as TensorFlow lists it, with its details (GPUs only)."""

    device_type: str  # "CPU", "GPU", "TPU"
    name: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def compute_capability(self) -> Optional[Tuple[int, int]]:
        cc = self.details.get("compute_capability")
        return (int(cc[0]), int(cc[1])) if cc else None

    @property
    def label(self) -> str:
        return str(self.details.get("device_name") or self.name)


def query_devices() -> List[Device]:
    """The seam: TensorFlow's physical devices with ``get_device_details`` for GPUs."""
    import tensorflow as tf

    found = []
    for dev in tf.config.list_physical_devices():
        details: Dict[str, Any] = {}
        if dev.device_type == "GPU":
            try:
                details = dict(tf.config.experimental.get_device_details(dev))
            except Exception:  # older builds or non-CUDA GPUs: no details, no guess
                details = {}
        found.append(Device(dev.device_type, dev.name, details))
    return found


def read_cpu_flags(path: str = "/proc/cpuinfo") -> FrozenSet[str]:
    """The bfloat16-relevant CPU flags; empty where /proc/cpuinfo does not exist."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    words = set(line.split(":", 1)[1].split())
                    return frozenset(f for f in CPU_BF16_FLAGS if f in words)
    except OSError:
        pass
    return frozenset()


@dataclass(frozen=True)
class Assessment:
    fast: Optional[bool]  # None: the policy does no 16-bit compute
    reason: str


@dataclass(frozen=True)
class Hardware:
    devices: Tuple[Device, ...]
    cpu_bf16_flags: FrozenSet[str] = frozenset()

    def of_type(self, device_type: str) -> List[Device]:
        return [d for d in self.devices if d.device_type == device_type]

    @property
    def nvidia_gpus(self) -> List[Device]:
        # Only NVIDIA GPUs report a compute capability (TensorFlow's own docs).
        return [d for d in self.of_type("GPU") if d.compute_capability is not None]

    @property
    def accelerator(self) -> str:
        if self.of_type("TPU"):
            return "tpu"
        return "gpu" if self.of_type("GPU") else "cpu"

    def default_policy(self) -> str:
        """mixed_float16 on NVIDIA GPUs; mixed_bfloat16 on TPUs and CPUs (the guide's advice)."""
        if self.nvidia_gpus and not self.of_type("TPU"):
            return MIXED_FLOAT16
        return MIXED_BFLOAT16

    def assess(self, policy: str) -> Assessment:
        compute = "float16" if "float16" in policy and "bfloat16" not in policy else (
            "bfloat16" if "bfloat16" in policy else None)
        if compute is None:
            return Assessment(None, f"{policy} computes in {policy}")
        if compute == "float16":
            return self._assess_float16()
        return self._assess_bfloat16()

    def _gpu_verdict(self, need: Tuple[int, int], what: str) -> Assessment:
        gpus = self.nvidia_gpus
        slow = [g for g in gpus if g.compute_capability < need]  # type: ignore[operator]
        listing = ", ".join(f"{g.label} ({_cc(g)})" for g in gpus)
        if not slow:
            return Assessment(True, f"{what} needs compute capability {_cc_text(need)}; found {listing}")
        return Assessment(False, f"{what} needs compute capability {_cc_text(need)}, "
                                 f"but {', '.join(f'{g.label} has {_cc(g)}' for g in slow)}")

    def _assess_float16(self) -> Assessment:
        if self.of_type("TPU"):
            return Assessment(False, "TPUs compute in bfloat16, not float16: use mixed_bfloat16")
        if self.nvidia_gpus:
            return self._gpu_verdict((7, 0), "float16 on Tensor Cores")
        if self.of_type("GPU"):
            return Assessment(False, "the GPU reports no compute capability (not NVIDIA?): "
                                     "float16 speed-ups are verified on NVIDIA GPUs only")
        return Assessment(False, "no GPU: float16 runs slowly on CPUs (use mixed_bfloat16 there)")

    def _assess_bfloat16(self) -> Assessment:
        if self.of_type("TPU"):
            return Assessment(True, "TPUs compute natively in bfloat16")
        if self.nvidia_gpus:
            return self._gpu_verdict((8, 0), "bfloat16 on Tensor Cores")
        if self.cpu_bf16_flags:
            return Assessment(True, "the CPU accelerates bfloat16 ("
                                    + ", ".join(sorted(self.cpu_bf16_flags)) + ")")
        return Assessment(False, "the CPU has neither AMX nor AVX512-BF16: bfloat16 is emulated "
                                 "and slower than float32")

    def summary(self) -> str:
        parts = []
        for d in self.devices:
            if d.device_type == "GPU":
                cc = f", compute capability {_cc(d)}" if d.compute_capability else ", no compute capability"
                parts.append(f"GPU {d.label}{cc}")
            elif d.device_type == "TPU":
                parts.append(f"TPU {d.label}")
        cpu = "CPU with " + "/".join(sorted(self.cpu_bf16_flags)) if self.cpu_bf16_flags else \
            "CPU without bfloat16 acceleration"
        return "; ".join(parts + [cpu])

    def to_dict(self, policy: str) -> Dict[str, Any]:
        verdict = self.assess(policy)
        return {
            "accelerator": self.accelerator,
            "devices": [{"type": d.device_type, "name": d.name,
                         "device_name": d.details.get("device_name"),
                         "compute_capability": list(d.compute_capability) if d.compute_capability else None}
                        for d in self.devices],
            "cpu_bf16_flags": sorted(self.cpu_bf16_flags),
            "default_policy": self.default_policy(),
            "policy_fast": verdict.fast,
            "policy_reason": verdict.reason,
            "summary": self.summary(),
        }


def _cc(device: Device) -> str:
    cc = device.compute_capability
    return _cc_text(cc) if cc else "none"


def _cc_text(cc: Sequence[int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def detect_hardware(query: Optional[Callable[[], Sequence[Device]]] = None,
                    cpuinfo: str = "/proc/cpuinfo") -> Hardware:
    """Ask the seam (``query_devices`` unless given) and read the CPU flags."""
    devices = (query or query_devices)()
    return Hardware(tuple(devices), read_cpu_flags(cpuinfo))
