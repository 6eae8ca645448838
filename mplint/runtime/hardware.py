"""What this machine offers for 16-bit compute, and whether a policy will be fast on it.

TensorFlow is asked only through ``query_devices`` (the seam tests replace with recorded
details of other machines); everything else here is plain logic over its answer and
the CPU's flags from ``/proc/cpuinfo``, so a V100, an AMD Instinct, an Intel GPU (XPU)
or a Graviton can be judged without owning one.

The hardware decides only the speed advice and the name of the unit that wants aligned
sizes; which hazards are checked never depends on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

# CPU flags that make bfloat16 matrix math fast: Intel AMX (Sapphire Rapids and later),
# AVX512-BF16 (Cooper Lake, AMD Zen 4 and later), and the Arm ``bf16`` feature (Graviton3,
# Neoverse V1/N2), which x86 lists under ``flags`` and aarch64 under ``Features``.
CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16", "bf16")
# AMX-FP16 (Granite Rapids) gives oneDNN float16 tiles. AVX512-FP16 alone does not make
# TensorFlow's float16 fast: a float16 ResNet50 forward pass measured 2.1x slower than
# float32 on a Sapphire Rapids CPU that has it (../shared/reference, performance notes).
CPU_FP16_FLAGS = ("amx_fp16",)
FLOAT32 = "float32"
MIXED_FLOAT16, MIXED_BFLOAT16 = "mixed_float16", "mixed_bfloat16"


def compute_type(policy: str) -> Optional[str]:
    """'float16', 'bfloat16', or None (the policy computes in float32)."""
    if "bfloat16" in policy:
        return "bfloat16"
    return "float16" if "float16" in policy else None


@dataclass(frozen=True)
class Device:
    """One physical device as TensorFlow lists it, with its details (GPUs only)."""

    device_type: str  # "CPU", "GPU", "TPU", "XPU" (Intel GPUs through Intel Extension for TF)
    name: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def compute_capability(self) -> Optional[Tuple[int, int]]:
        cc = self.details.get("compute_capability")
        if not cc:
            return None
        if isinstance(cc, str):  # some builds give "8.6"
            major, _, minor = cc.partition(".")
            return (int(major), int(minor or 0)) if major.isdigit() else None
        return (int(cc[0]), int(cc[1]))

    @property
    def label(self) -> str:
        return str(self.details.get("device_name") or self.name)


# AMD GPU architectures by the ISA name (gfx...) or the product name TensorFlow reports.
# CDNA (Instinct MI100 and later) has matrix cores for float16 and bfloat16; RDNA 3/4
# (Radeon RX 7000/9000, PRO W7000) has WMMA instructions for both; older ones have none.
_AMD_ARCHS: Tuple[Tuple[str, str, bool], ...] = (
    (r"gfx95\d|\bMI35\d", "CDNA 4", True),
    (r"gfx94[0-2]|\bMI3\d\d", "CDNA 3", True),
    (r"gfx90a|\bMI2\d\d", "CDNA 2", True),
    (r"gfx908|\bMI100\b", "CDNA", True),
    (r"gfx12\d\d|\bRX 9\d{3}", "RDNA 4", True),
    (r"gfx11\d\d|\bRX 7\d{3}|\bPRO W7\d{3}", "RDNA 3", True),
    (r"gfx10\d\d|\bRX [56]\d{3}|\bPRO W6\d{3}", "RDNA", False),
    (r"gfx90[06]|\bMI[56]0\b|Radeon VII|Vega", "GCN (Vega)", False),
)
_AMD_NAME = re.compile(r"\bAMD\b|Radeon|Instinct|\bgfx\d|\bMI\d{2,3}", re.IGNORECASE)


def amd_architecture(device: Device) -> Optional[Tuple[str, bool]]:
    """(architecture, has matrix units) of an AMD GPU, or None when the name does not tell."""
    text = " ".join(str(device.details.get(k) or "") for k in ("device_name", "gcn_arch_name"))
    for pattern, arch, matrix in _AMD_ARCHS:
        if re.search(pattern, text, re.IGNORECASE):
            return arch, matrix
    return None


def query_devices() -> List[Device]:
    """The seam: TensorFlow's physical devices with ``get_device_details`` for GPUs.

    NVIDIA builds give ``device_name`` and ``compute_capability``; ROCm builds only
    ``device_name`` (marked here with ``platform: rocm``); Intel GPUs come as ``XPU``."""
    import tensorflow as tf  # type: ignore[import-untyped]

    try:
        rocm = bool(tf.sysconfig.get_build_info().get("is_rocm_build"))
    except Exception:
        rocm = False
    found = []
    for dev in tf.config.list_physical_devices():
        details: Dict[str, Any] = {}
        if dev.device_type in ("GPU", "XPU"):
            try:
                details = dict(tf.config.experimental.get_device_details(dev))
            except Exception:  # older builds or pluggable devices: no details, no guess
                details = {}
            if rocm and dev.device_type == "GPU":
                details["platform"] = "rocm"
        found.append(Device(dev.device_type, dev.name, details))
    return found


def read_cpu_flags(path: str = "/proc/cpuinfo") -> FrozenSet[str]:
    """The bfloat16-relevant CPU flags (x86 ``flags``, aarch64 ``Features``); empty where
    /proc/cpuinfo does not exist."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key = line.split(":", 1)[0].strip().lower()
                if key in ("flags", "features") and ":" in line:
                    words = set(line.split(":", 1)[1].split())
                    return frozenset(f for f in CPU_BF16_FLAGS + CPU_FP16_FLAGS if f in words)
    except OSError:
        pass
    return frozenset()


@dataclass(frozen=True)
class Assessment:
    fast: Optional[bool]  # None: the policy does no 16-bit compute
    reason: str
    unit: Optional[str] = None  # the matrix unit that runs this policy's 16-bit math here


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
    def amd_gpus(self) -> List[Device]:
        return [d for d in self.of_type("GPU") if d.compute_capability is None and (
            d.details.get("platform") == "rocm" or _AMD_NAME.search(d.label))]

    @property
    def accelerator(self) -> str:
        if self.of_type("TPU"):
            return "tpu"
        if self.of_type("GPU"):
            return "gpu"
        return "xpu" if self.of_type("XPU") else "cpu"

    def default_policy(self) -> str:
        """The policy the hardware facts say runs fastest here: mixed_float16 on NVIDIA and
        AMD GPUs, mixed_bfloat16 on TPUs, Intel GPUs and CPUs with bfloat16 instructions,
        and float32 on a CPU where no 16-bit policy is fast. Advice only: by
        default both 16-bit types are checked, and ``--measure`` replaces it with what it
        measured."""
        if self.of_type("TPU"):
            return MIXED_BFLOAT16
        if self.nvidia_gpus or self.amd_gpus:
            return MIXED_FLOAT16
        if self.of_type("GPU") or self.of_type("XPU"):
            return MIXED_BFLOAT16
        for policy in (MIXED_BFLOAT16, MIXED_FLOAT16):  # a CPU: by its instructions
            if self.assess(policy).fast:
                return policy
        return FLOAT32

    def assess(self, policy: str) -> Assessment:
        compute = compute_type(policy)
        if compute is None:
            return Assessment(None, f"{policy} computes in {policy}")
        if self.of_type("TPU"):
            if compute == "float16":
                return Assessment(False, "TPUs compute in bfloat16, not float16: use mixed_bfloat16")
            return Assessment(True, "TPUs compute natively in bfloat16", "MXUs")
        if self.nvidia_gpus:
            need = (7, 0) if compute == "float16" else (8, 0)
            return self._nvidia_verdict(need, f"{compute} on Tensor Cores")
        if self.amd_gpus:
            return self._amd_verdict(compute)
        if self.of_type("GPU"):
            return Assessment(False, "the GPU reports neither a compute capability (NVIDIA) nor an "
                                     "AMD name: its 16-bit speed is unknown")
        if self.of_type("XPU"):
            names = ", ".join(d.label for d in self.of_type("XPU"))
            return Assessment(True, f"Intel GPU ({names}) through Intel Extension for TensorFlow, "
                                    f"which runs mixed_float16 and mixed_bfloat16 on XPUs",
                              "XMX engines")
        return self._cpu_verdict(compute)

    def _nvidia_verdict(self, need: Tuple[int, int], what: str) -> Assessment:
        gpus = self.nvidia_gpus
        slow = [g for g in gpus if g.compute_capability < need]  # type: ignore[operator]
        listing = ", ".join(f"{g.label} ({_cc(g)})" for g in gpus)
        if not slow:
            return Assessment(True, f"{what} needs compute capability {_cc_text(need)}; found {listing}",
                              "Tensor Cores")
        return Assessment(False, f"{what} needs compute capability {_cc_text(need)}, "
                                 f"but {', '.join(f'{g.label} has {_cc(g)}' for g in slow)}")

    def _amd_verdict(self, compute: str) -> Assessment:
        judged = [(g, amd_architecture(g)) for g in self.amd_gpus]
        unknown = [g.label for g, arch in judged if arch is None]
        if unknown:
            return Assessment(False, f"cannot tell the architecture of {', '.join(unknown)} from the name "
                                     f"TensorFlow reports: {compute} is fast only on CDNA (Instinct "
                                     f"MI100 and later) and RDNA 3+")
        slow = [f"{g.label} ({arch[0]})" for g, arch in judged if arch and not arch[1]]
        if slow:
            return Assessment(False, f"{', '.join(slow)} has no matrix cores: {compute} runs on the "
                                     f"vector units, at most 2x float32")
        listing = ", ".join(f"{g.label} ({arch[0]})" for g, arch in judged if arch)
        cdna = all(arch and arch[0].startswith("CDNA") for _, arch in judged)
        unit = "matrix cores" if cdna else "WMMA units"
        return Assessment(True, f"{compute} on AMD {unit}: {listing}", unit)

    def _cpu_verdict(self, compute: str) -> Assessment:
        flags = self.cpu_bf16_flags
        if compute == "float16":
            if "amx_fp16" in flags:
                return Assessment(True, "the CPU has AMX-FP16 tiles, which oneDNN uses for float16 "
                                        "(not measured here: --measure tells)", "AMX tiles")
            better = "; mixed_bfloat16 is the CPU policy here" if self._cpu_verdict("bfloat16").fast else \
                "; keep float32 here"
            return Assessment(False, "no GPU, and the CPU has no AMX-FP16: float16 runs slowly (TensorFlow "
                                     "falls back to plain kernels)" + better)
        if "amx_bf16" in flags:
            return Assessment(True, "the CPU has AMX-BF16 tiles (" + ", ".join(sorted(flags)) + ")",
                              "AMX tiles")
        if "avx512_bf16" in flags:
            return Assessment(True, "the CPU has AVX512-BF16 (no AMX)", "AVX512-BF16 units")
        if "bf16" in flags:  # aarch64
            return Assessment(True, "the Arm CPU has the bf16 feature (BFMMLA), which oneDNN uses",
                              "BF16 (BFMMLA) units")
        return Assessment(False, "the CPU has no bfloat16 instructions (AMX, AVX512-BF16, Arm bf16): "
                                 "bfloat16 is emulated and slower than float32")

    def unit(self, policy: str) -> Optional[str]:
        """The matrix unit that wants aligned sizes for this policy here (None: none here)."""
        verdict = self.assess(policy)
        return verdict.unit if verdict.fast else None

    def summary(self) -> str:
        parts = []
        for d in self.devices:
            if d.device_type == "GPU":
                if d.compute_capability:
                    parts.append(f"GPU {d.label}, compute capability {_cc(d)}")
                elif d in self.amd_gpus:
                    arch = amd_architecture(d)
                    parts.append(f"AMD GPU {d.label}" + (f" ({arch[0]})" if arch else ", architecture unknown"))
                else:
                    parts.append(f"GPU {d.label}, no compute capability")
            elif d.device_type in ("TPU", "XPU"):
                parts.append(f"{d.device_type} {d.label}")
        cpu = "CPU with " + "/".join(sorted(self.cpu_bf16_flags)) if self.cpu_bf16_flags else \
            "CPU without bfloat16 or float16 instructions"
        return "; ".join(parts + [cpu])

    def to_dict(self, policies: Sequence[str]) -> Dict[str, Any]:
        if isinstance(policies, str):
            policies = [policies]
        verdicts = {p: self.assess(p) for p in policies}
        first = verdicts[policies[0]] if policies else Assessment(None, "")
        return {
            "accelerator": self.accelerator,
            "devices": [{"type": d.device_type, "name": d.name,
                         "device_name": d.details.get("device_name"),
                         "compute_capability": list(d.compute_capability) if d.compute_capability else None}
                        for d in self.devices],
            "cpu_bf16_flags": sorted(self.cpu_bf16_flags),
            "default_policy": self.default_policy(),
            "policy_fast": first.fast,
            "policy_reason": first.reason,
            "verdicts": {p: {"fast": v.fast, "reason": v.reason, "unit": v.unit} for p, v in verdicts.items()},
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
