"""The hardware report, judged from recorded device details of machines we do not have.

Only the seam ``mplint.runtime.hardware.query_devices`` is replaced; CPU flags are read
from real files in cpuinfo format. No TensorFlow is needed here.
"""

import pytest

from mplint.runtime import hardware
from mplint.runtime.hardware import Device, Hardware, detect_hardware, read_cpu_flags

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
    # Without bfloat16 instructions no 16-bit policy is fast on a CPU: nothing to recommend.
    assert slow.default_policy() == "float32"
    assert fast.default_policy() == "mixed_bfloat16"
    assert "mixed_bfloat16" not in slow.assess("mixed_float16").reason
    assert slow.assess("mixed_bfloat16").fast is False
    assert fast.assess("mixed_bfloat16").fast is True
    assert "amx_bf16" in fast.assess("mixed_bfloat16").reason
    assert slow.assess("mixed_float16").fast is False


# -- real /proc/cpuinfo texts (fixtures/runtime/cpuinfo, see its README) ---------------------
CPUINFO = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures" / "runtime" / "cpuinfo"


@pytest.mark.parametrize("name,flags,bf16_fast,unit", [
    ("linux-rhel9-graniterapids", {"amx_bf16", "avx512_bf16"}, True, "AMX tiles"),
    ("linux-amd-epyc-avx512bf16", {"avx512_bf16"}, True, "AVX512-BF16 units"),
    ("linux-rhel9-neoverse_n2", {"bf16"}, True, "BF16 (BFMMLA) units"),
    ("linux-amazon-graviton2", set(), False, None),
    ("linux-ubuntu20.04-znver3", set(), False, None),
])
def test_cpu_verdicts_from_real_cpuinfo(monkeypatch, name, flags, bf16_fast, unit):
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU])
    hw = detect_hardware(cpuinfo=str(CPUINFO / name))
    assert hw.cpu_bf16_flags == flags
    verdict = hw.assess("mixed_bfloat16")
    assert verdict.fast is bf16_fast, verdict.reason
    assert hw.unit("mixed_bfloat16") == unit
    assert hw.default_policy() == ("mixed_bfloat16" if bf16_fast else "float32")
    # float16 has no fast path on any CPU.
    assert hw.assess("mixed_float16").fast is False and hw.unit("mixed_float16") is None
    assert hw.accelerator == "cpu"


def test_aarch64_bf16_is_read_from_features_not_flags():
    assert read_cpu_flags(str(CPUINFO / "linux-rhel9-neoverse_n2")) == {"bf16"}
    assert "Arm CPU has the bf16 feature" in Hardware((CPU,), frozenset({"bf16"})).assess("mixed_bfloat16").reason


def test_intel_xpu_is_judged_as_an_intel_gpu_not_by_the_host_cpu(monkeypatch):
    xpu = Device("XPU", "/physical_device:XPU:0", {"device_name": "Intel(R) Data Center GPU Max 1550"})
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU, xpu])
    hw = detect_hardware(cpuinfo=str(CPUINFO / "linux-ubuntu20.04-znver3"))  # a CPU without bf16
    assert hw.accelerator == "xpu"
    for policy in ("mixed_float16", "mixed_bfloat16"):
        verdict = hw.assess(policy)
        assert verdict.fast is True and "Intel Extension for TensorFlow" in verdict.reason
        assert hw.unit(policy) == "XMX engines"
    assert "XPU Intel(R) Data Center GPU Max 1550" in hw.summary()
    assert hw.to_dict(["mixed_float16"])["accelerator"] == "xpu"


@pytest.mark.parametrize("device_name,arch,fast", [
    ("AMD Instinct MI250X", "CDNA 2", True),
    ("AMD Instinct MI300X", "CDNA 3", True),
    ("AMD Instinct MI100", "CDNA", True),
    ("AMD Radeon RX 7900 XTX", "RDNA 3", True),
    ("AMD Radeon RX 6800", "RDNA", False),
    ("AMD Instinct MI50", "GCN (Vega)", False),
])
def test_amd_rocm_gpus_are_judged_by_architecture(monkeypatch, device_name, arch, fast):
    # A ROCm build gives only the device name (no compute capability).
    gpu_dev = Device("GPU", "/physical_device:GPU:0", {"device_name": device_name, "platform": "rocm"})
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU, gpu_dev])
    hw = detect_hardware(cpuinfo="/nonexistent")
    assert hardware.amd_architecture(gpu_dev)[0] == arch
    assert hw.amd_gpus == [gpu_dev] and hw.default_policy() == "mixed_float16"
    for policy in ("mixed_float16", "mixed_bfloat16"):
        verdict = hw.assess(policy)
        assert verdict.fast is fast, verdict.reason
        assert arch in verdict.reason
        if fast:
            assert hw.unit(policy) == ("matrix cores" if arch.startswith("CDNA") else "WMMA units")
    assert f"AMD GPU {device_name} ({arch})" in hw.summary()


def test_an_amd_gpu_whose_name_does_not_tell_is_not_called_fast():
    gpu_dev = Device("GPU", "/physical_device:GPU:0", {"device_name": "Device 740f", "platform": "rocm"})
    hw = Hardware((CPU, gpu_dev))
    verdict = hw.assess("mixed_float16")
    assert verdict.fast is False and "cannot tell the architecture of Device 740f" in verdict.reason


def test_query_devices_marks_rocm_gpus(monkeypatch):
    tf = pytest.importorskip("tensorflow")
    # The device list and details are TensorFlow's answers on a ROCm machine.
    physical = [tf.config.PhysicalDevice("/physical_device:CPU:0", "CPU"),
                tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")]
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda *a: physical)
    monkeypatch.setattr(tf.config.experimental, "get_device_details",
                        lambda d: {"device_name": "AMD Instinct MI210"})
    monkeypatch.setattr(tf.sysconfig, "get_build_info", lambda: {"is_rocm_build": True, "is_cuda_build": False})
    devices = hardware.query_devices()
    assert devices[1].details == {"device_name": "AMD Instinct MI210", "platform": "rocm"}
    assert Hardware(tuple(devices)).assess("mixed_bfloat16").fast is True


def test_units_are_named_in_alignment_messages():
    from mplint.runtime.rules import unit_phrase

    assert unit_phrase("Tensor Cores", "float16") == "Tensor Cores stay idle"
    assert unit_phrase("AMX tiles", "bfloat16") == "AMX tiles run padded, wasting work"
    assert "this machine has no matrix unit for float16" in unit_phrase(None, "float16")
    v100 = Hardware(tuple(MACHINES["V100"]))
    assert v100.unit("mixed_float16") == "Tensor Cores" and v100.unit("mixed_bfloat16") is None
    assert Hardware(tuple(MACHINES["TPU"])).unit("mixed_bfloat16") == "MXUs"


def test_cpu_float16_is_judged_fast_only_with_amx_fp16(tmp_path, monkeypatch):
    monkeypatch.setattr(hardware, "query_devices", lambda: [CPU])
    amx_fp16 = tmp_path / "amx_fp16"
    amx_fp16.write_text(PLAIN_CPUINFO.replace("flags\t\t:", "flags\t\t: amx_fp16 avx512_fp16"))
    hw = detect_hardware(cpuinfo=str(amx_fp16))
    assert hw.cpu_bf16_flags == {"amx_fp16"}  # AVX512-FP16 alone is not a fast path
    assert hw.assess("mixed_float16").fast is True and hw.default_policy() == "mixed_float16"
    avx = tmp_path / "avx512_fp16"
    avx.write_text(PLAIN_CPUINFO.replace("flags\t\t:", "flags\t\t: avx512_fp16"))
    assert detect_hardware(cpuinfo=str(avx)).assess("mixed_float16").fast is False
