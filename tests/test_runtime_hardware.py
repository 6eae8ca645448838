"""The hardware report, judged from recorded device details of machines we do not have.

Only the seam ``mplint.runtime.hardware.query_devices`` is replaced; CPU flags are read
from real files in cpuinfo format. No TensorFlow is needed here.
"""

import pytest

from mplint.runtime import hardware
from mplint.runtime.hardware import Device, detect_hardware, read_cpu_flags

CPU = Device("CPU", "/physical_device:CPU:0", {})


def gpu(name, cc, index=0):
    return Device("GPU", f"/physical_device:GPU:{index}", {"device_name": name, "compute_capability": cc})


MACHINES = {
    "V100": [CPU, gpu("Tesla V100-SXM2-16GB", (7, 0))],
    "P100": [CPU, gpu("Tesla P100-PCIE-16GB", (6, 0))],
    "A100": [CPU, gpu("NVIDIA A100-SXM4-40GB", (8, 0))],
    "TPU": [CPU, Device("TPU", "/physical_device:TPU:0", {})],
}

PLAIN_CPUINFO = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 avx512f\n"
AMX_CPUINFO = "processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 amx_bf16 amx_tile\n"


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """Install a recorded machine at the seam; returns detect_hardware() for it."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(PLAIN_CPUINFO)

    def install(name):
        monkeypatch.setattr(hardware, "query_devices", lambda: list(MACHINES[name]))
        return detect_hardware(cpuinfo=str(cpuinfo))

    return install


def test_v100_runs_float16_fast_but_not_bfloat16(machine):
    hw = machine("V100")
    assert hw.accelerator == "gpu"
    assert hw.default_policy() == "mixed_float16"
    assert hw.assess("mixed_float16").fast is True
    assert "Tesla V100-SXM2-16GB (7.0)" in hw.assess("mixed_float16").reason
    slow = hw.assess("mixed_bfloat16")
    assert slow.fast is False and "8.0" in slow.reason and "has 7.0" in slow.reason
    d = hw.to_dict("mixed_float16")
    assert d["devices"][1] == {"type": "GPU", "name": "/physical_device:GPU:0",
                               "device_name": "Tesla V100-SXM2-16GB", "compute_capability": [7, 0]}
    assert d["policy_fast"] is True and d["default_policy"] == "mixed_float16"


def test_p100_is_too_old_for_float16_tensor_cores(machine):
    hw = machine("P100")
    assert hw.default_policy() == "mixed_float16"  # an NVIDIA GPU all the same
    verdict = hw.assess("mixed_float16")
    assert verdict.fast is False
    assert "Tesla P100-PCIE-16GB has 6.0" in verdict.reason and "7.0" in verdict.reason
    assert "compute capability 6.0" in hw.summary()


def test_a100_runs_both_16_bit_policies_fast(machine):
    hw = machine("A100")
    assert hw.default_policy() == "mixed_float16"
    assert hw.assess("mixed_float16").fast is True
    assert hw.assess("mixed_bfloat16").fast is True


def test_tpu_wants_bfloat16(machine):
    hw = machine("TPU")
    assert hw.accelerator == "tpu"
    assert hw.default_policy() == "mixed_bfloat16"
    assert hw.assess("mixed_bfloat16").fast is True
    f16 = hw.assess("mixed_float16")
    assert f16.fast is False and "bfloat16" in f16.reason


def test_float32_policy_has_no_16_bit_verdict(machine):
    hw = machine("V100")
    assert hw.assess("float32").fast is None


def test_mixed_old_and_new_gpus_name_the_slow_one(monkeypatch):
    monkeypatch.setattr(hardware, "query_devices",
                        lambda: [CPU, gpu("Tesla T4", (7, 5)), gpu("Tesla K80", (3, 7), 1)])
    verdict = detect_hardware(cpuinfo="/nonexistent").assess("mixed_float16")
    assert verdict.fast is False
    assert "Tesla K80 has 3.7" in verdict.reason and "T4" not in verdict.reason.split("but")[1]


def test_gpu_without_compute_capability_is_not_taken_for_nvidia(monkeypatch):
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU, Device("GPU", "/physical_device:GPU:0", {})])
    hw = detect_hardware(cpuinfo="/nonexistent")
    assert hw.default_policy() == "mixed_bfloat16"
    assert hw.assess("mixed_float16").fast is False
    assert hw.to_dict("mixed_float16")["devices"][1]["compute_capability"] is None


def test_cpu_bfloat16_needs_amx_or_avx512_bf16(tmp_path, monkeypatch):
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU])
    plain, amx = tmp_path / "plain", tmp_path / "amx"
    plain.write_text(PLAIN_CPUINFO)
    amx.write_text(AMX_CPUINFO)
    assert read_cpu_flags(str(plain)) == frozenset()
    assert read_cpu_flags(str(amx)) == {"amx_bf16", "avx512_bf16"}
    assert read_cpu_flags(str(tmp_path / "missing")) == frozenset()
    slow = detect_hardware(cpuinfo=str(plain))
    fast = detect_hardware(cpuinfo=str(amx))
    assert slow.default_policy() == fast.default_policy() == "mixed_bfloat16"
    assert slow.assess("mixed_bfloat16").fast is False
    assert fast.assess("mixed_bfloat16").fast is True
    assert "amx_bf16" in fast.assess("mixed_bfloat16").reason
    assert slow.assess("mixed_float16").fast is False
