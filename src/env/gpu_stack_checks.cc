#include "env/gpu_stack_checks.h"

#include <algorithm>
#include <cstdio>

#include "env/check_list.h"
#include "env/host_probe.h"
#include "env/nvidia_abi.h"
#include "util/byte_size.h"
#include "util/file.h"

namespace imgpipe::env {
namespace {

constexpr int kBusyGpuPercent = 50;  // a GPU this busy before training starts is shared

// Whether the doctor runs in a container (the driver is then the host's).
bool InContainer(const DoctorReport& r) { return !r.container.empty(); }

// What to tell a container user whose container does not see the host's GPUs.
const char* kContainerGpuAdvice =
    "start the container with the NVIDIA container toolkit so it gets the host's GPUs and "
    "driver libraries: docker run --gpus all ... (podman: --device nvidia.com/gpu=all; "
    "Kubernetes: request nvidia.com/gpu)";
const char* kWslDriverAdvice =
    "install or update the NVIDIA driver on Windows, not inside WSL (a Linux NVIDIA driver "
    "must never be installed in WSL); then restart WSL with wsl --shutdown. libcuda.so.1 "
    "must come from /usr/lib/wsl/lib";

// Where the driver must be updated to support CUDA `needed`.
std::string DriverUpdateAdvice(const DoctorReport& r, const Version& needed) {
  std::string minimum = MinimumDriverForCudaMajor(needed.major);
  std::string what = "a driver that supports CUDA " + needed.ToString(2);
  if (!minimum.empty()) {
    what += " (every CUDA " + std::to_string(needed.major) + ".x runtime needs driver " + minimum +
            " or newer)";
  }
  if (r.wsl.detected) {
    return "update the NVIDIA driver on Windows to " + what +
           "; never install a Linux driver inside WSL";
  }
  if (InContainer(r)) {
    return "update the NVIDIA driver on the host to " + what +
           ": a container uses the host's driver; or use a libtorch built for an older CUDA";
  }
  return "install " + what + ", or use a libtorch built for the CUDA the driver supports";
}

// "550.54.15, supports CUDA up to 12.4, 4 GPUs".
std::string DriverSummary(const NvidiaDriverInfo& d) {
  std::string text = d.driver_version.empty() ? "version unknown" : d.driver_version;
  if (d.driver_cuda_version > 0) {
    text += ", supports CUDA up to " + DecodeCudaVersion(d.driver_cuda_version).ToString(2);
  }
  return text + ", " + Plural(d.GpuCount(), "GPU", "GPUs");
}

// How to get NVML working again after the failure in r.driver.nvml_error_code.
std::string NvmlFix(const DoctorReport& r) {
  switch (r.driver.nvml_error_code) {
    case abi::kNvmlErrorLibRmVersionMismatch:
      return std::string(
                 "the NVIDIA kernel module and the driver libraries are different versions "
                 "(usually after a driver upgrade): reboot") +
             (InContainer(r) ? " the host" : ", or reload the nvidia kernel modules");
    case abi::kNvmlErrorNoPermission:
      return "this user may not open /dev/nvidia*: check their permissions (ls -l /dev/nvidia*)";
    case abi::kNvmlErrorDriverNotLoaded:
      if (r.wsl.detected) return kWslDriverAdvice;
      if (InContainer(r))
        return std::string("load the NVIDIA driver on the host; ") + kContainerGpuAdvice;
      return "load the NVIDIA kernel module (sudo modprobe nvidia; dmesg | grep -i nvrm says why "
             "it "
             "fails; with Secure Boot the module must be signed) or reinstall the driver";
    default:
      return "run nvidia-smi and read dmesg | grep -i nvrm";
  }
}

// platform: WSL (1 or 2, GPU paravirtualisation) and containers.
void CheckPlatform(DoctorReport* r) {
  const WslInfo& wsl = r->wsl;
  if (wsl.detected && !wsl.wsl2) {
    Add(r, "platform", "WSL", CheckStatus::kWarning,
        "WSL1 (" + wsl.kernel + "): WSL1 has no GPU access",
        "convert the distribution to WSL2 (in PowerShell: wsl --set-version <distribution> 2)");
  } else if (wsl.wsl2) {
    Add(r, "platform", "WSL", CheckStatus::kInfo,
        "WSL2: the NVIDIA driver lives on the Windows side; libcuda.so.1 comes from "
        "/usr/lib/wsl/lib",
        "keep the NVIDIA driver up to date on Windows; inside WSL install the CUDA toolkit "
        "without a driver (cuda-toolkit-12-x, never cuda-drivers or nvidia-driver)");
    if (!wsl.has_dxg) {
      Add(r, "platform", "WSL GPU", CheckStatus::kWarning,
          "/dev/dxg is missing: this WSL2 system has no GPU paravirtualisation", kWslDriverAdvice);
    } else if (!wsl.has_wsl_lib) {
      Add(r, "platform", "WSL GPU", CheckStatus::kWarning,
          "/dev/dxg is present but /usr/lib/wsl/lib (the Windows driver's libcuda) is missing",
          "update WSL (in PowerShell: wsl --update) and the NVIDIA driver on Windows");
    }
  }
  if (InContainer(*r)) {
    Add(r, "platform", "container", CheckStatus::kInfo,
        "running in a container (" + r->container +
            "): the GPUs and the NVIDIA driver come from the host");
  }
  if (!wsl.detected && !InContainer(*r)) {
    std::vector<std::string> words = SplitAndTrim(wsl.kernel, ' ');
    if (words.size() > 3) words.resize(3);
    Add(r, "platform", "environment", CheckStatus::kInfo,
        "no container or WSL detected" + (words.empty() ? "" : " (" + Join(words, " ") + ")"));
  }
}

// How to get cuInit working after it failed with `code` on a machine with GPUs.
std::string CudaInitFix(const DoctorReport& r, int code) {
  switch (code) {
    case abi::kCudaErrorNoDevice:
      return "CUDA sees none of the GPUs: check CUDA_VISIBLE_DEVICES and the permissions of "
             "/dev/nvidia*" +
             std::string(InContainer(r) ? "; " + std::string(kContainerGpuAdvice) : "");
    case abi::kCudaErrorSystemDriverMismatch:
      return "libcuda.so.1 and the kernel module are different versions (often a cuda-compat "
             "package on the library path): remove it from the path or reboot after a driver "
             "upgrade";
    case abi::kCudaErrorCompatNotSupportedOnDevice:
      return "CUDA forward compatibility (cuda-compat) works on data-center GPUs only: remove it "
             "from the library path and update the driver instead";
    default:
      return "run nvidia-smi and read dmesg | grep -i nvrm";
  }
}

// libcuda.so.1: loaded from the right place and cuInit works. `driver_seen`: the
// kernel module or NVML shows a driver, so libcuda must be there.
void CheckLibcuda(DoctorReport* r, bool driver_seen) {
  const NvidiaDriverInfo& d = r->driver;
  std::string where = "libcuda.so.1" + (d.libcuda_path.empty() ? "" : " (" + d.libcuda_path + ")");
  if (!d.libcuda_loaded) {
    if (driver_seen) {
      Add(r, "driver", "libcuda", CheckStatus::kError,
          "libcuda.so.1 cannot be loaded (" + d.libcuda_error +
              "): CUDA programs cannot reach the driver",
          InContainer(*r) ? kContainerGpuAdvice
                          : "install the driver's CUDA library, the same version as the driver "
                            "(Debian: libcuda1; NVIDIA's packages: libnvidia-compute-<branch>)");
    }
    return;
  }
  bool from_wsl = d.libcuda_path.empty() || d.libcuda_path.rfind("/usr/lib/wsl/", 0) == 0;
  if (r->wsl.detected && !from_wsl) {
    Add(r, "driver", "libcuda", CheckStatus::kWarning,
        "libcuda.so.1 is loaded from " + d.libcuda_path +
            ", not from /usr/lib/wsl/lib: a Linux NVIDIA driver installed inside WSL hides the "
            "Windows driver",
        "remove the Linux NVIDIA driver packages inside WSL (keep cuda-toolkit-12-x, never "
        "cuda-drivers or nvidia-driver), then run sudo ldconfig");
  } else if (d.cuda_init_ok) {
    Add(r, "driver", "libcuda", CheckStatus::kOk, where + ", cuInit works");
  } else if (d.cuda_init_code == abi::kCudaErrorNoDevice && d.GpuCount() == 0) {
    Add(r, "driver", "libcuda", CheckStatus::kInfo, where + " finds no CUDA device");
  } else {
    Add(r, "driver", "libcuda", CheckStatus::kError, where + " loads but " + d.cuda_init_error,
        CudaInitFix(*r, d.cuda_init_code));
  }
}

// driver: the NVIDIA driver (NVML, kernel module, PCI bus) and libcuda.
void CheckDriver(DoctorReport* r) {
  const NvidiaDriverInfo& d = r->driver;
  bool nvml_loaded = !d.nvml_soname.empty();
  bool nvml_ok = d.nvml_ok();
  bool module_loaded = !d.kernel_module_version.empty();
  bool driver_expected = d.GpuCount() > 0 || module_loaded || (r->wsl.wsl2 && r->wsl.has_dxg);
  // 1. The driver itself.
  if (nvml_ok) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kOk, DriverSummary(d) + " (from NVML)");
  } else if (nvml_loaded && driver_expected) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kError,
        "NVML cannot reach the driver: " + d.nvml_error, NvmlFix(*r));
  } else if (module_loaded) {
    Add(r, "driver", "NVIDIA driver",
        d.libcuda_loaded ? CheckStatus::kWarning : CheckStatus::kError,
        "the kernel module " + d.kernel_module_version +
            " is loaded but NVML is not: " + d.nvml_error,
        InContainer(*r) ? kContainerGpuAdvice
                        : "install the driver's user-space libraries of the same version as the "
                          "kernel module (nvidia-smi, libnvidia-ml.so.1, libcuda.so.1)");
  } else if (r->wsl.wsl2 && d.libcuda_loaded) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kOk,
        "the Windows NVIDIA driver, through WSL: " + DriverSummary(d));
  } else if (r->wsl.wsl2 && r->wsl.has_dxg) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kError,
        "/dev/dxg is present but libcuda.so.1 cannot be loaded: " + d.libcuda_error,
        kWslDriverAdvice);
  } else if (d.cuda_init_ok && d.GpuCount() > 0) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kOk,
        DriverSummary(d) + " (from libcuda; NVML is missing)");
  } else if (d.pci_gpu_count > 0) {
    Add(r, "driver", "NVIDIA driver", CheckStatus::kError,
        Plural(d.pci_gpu_count, "NVIDIA GPU is", "NVIDIA GPUs are") +
            " on the PCI bus but no NVIDIA driver is loaded",
        InContainer(*r)
            ? std::string("install the driver on the host; ") + kContainerGpuAdvice
            : "install the NVIDIA driver (Debian: apt install nvidia-driver, then reboot) "
              "and check that nvidia-smi lists the GPUs");
  } else {
    std::string detail = "no NVIDIA GPU: training runs on CPU";
    if (nvml_loaded) detail += " (libnvidia-ml.so.1 is installed but finds no driver)";
    Add(r, "driver", "NVIDIA driver", CheckStatus::kInfo, detail,
        InContainer(*r) ? std::string("if the host has NVIDIA GPUs, ") + kContainerGpuAdvice : "");
  }
  // 2. libcuda.so.1, through which every CUDA program reaches the driver.
  CheckLibcuda(r, nvml_ok || module_loaded);
}

// The soname libtorch needs for `kind` ("" when it needs none), and the version it was
// built with (when known).
std::string NeededSoname(const TorchBuildInfo& t, CudaLibraryKind kind,
                         std::optional<Version>* built_with) {
  if (!t.cuda_build || t.cuda_version <= 0) return "";
  Version cuda = DecodeCudaVersion(t.cuda_version);
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      *built_with = cuda;
      return SonameForMajor(kind, cuda.major);
    case CudaLibraryKind::kCublas:  // cuBLAS N ships with CUDA N
      return SonameForMajor(kind, cuda.major);
    case CudaLibraryKind::kCudnn:
      if (t.cudnn_version <= 0) return "";
      *built_with = DecodeCudnnVersion(t.cudnn_version);
      return SonameForMajor(kind, (*built_with)->major);
    case CudaLibraryKind::kNccl:
      return "";
  }
  return "";
}

// "cuDNN 8.9.2 (libcudnn.so.8, /usr/lib/x86_64-linux-gnu/libcudnn.so.8)"; without
// `with_name`, from the version on.
std::string Described(const CudaLibrary& lib, bool with_name = true) {
  std::string text = with_name ? CudaLibraryName(lib.kind) : "";
  if (lib.version_known) {
    text += (text.empty() ? "" : " ") +
            lib.version.ToString(lib.kind == CudaLibraryKind::kRuntime ? 2 : 3);
  }
  text +=
      (text.empty() ? "(" : " (") + lib.soname + (lib.path.empty() ? "" : ", " + lib.path) + ")";
  if (!lib.version_known && !lib.error.empty()) text += ", version unknown: " + lib.error;
  return text;
}

// How to install the `major` release of a library.
std::string InstallAdvice(CudaLibraryKind kind, int major, int cuda_major) {
  std::string cuda = std::to_string(cuda_major);
  std::string text;
  switch (kind) {
    case CudaLibraryKind::kRuntime:
      text = "install the CUDA " + cuda + " runtime (NVIDIA's cuda-cudart-" + cuda + "-x package)";
      break;
    case CudaLibraryKind::kCudnn:
      text = "install cuDNN " + std::to_string(major) + " for CUDA " + cuda + " (NVIDIA's cudnn" +
             std::to_string(major) + "-cuda-" + cuda +
             " package), or use a libtorch built for the cuDNN you have";
      break;
    case CudaLibraryKind::kCublas:
      text = "install cuBLAS " + cuda + " (NVIDIA's libcublas-" + cuda + "-x package)";
      break;
    case CudaLibraryKind::kNccl:
      text = "install NCCL 2 for CUDA " + cuda + " (NVIDIA's libnccl2 package)";
      break;
  }
  return text +
         "; if it is installed, add its folder to LD_LIBRARY_PATH or register it with ldconfig";
}

// cuda: one library, against the soname and version libtorch needs.
void CheckCudaLibrary(DoctorReport* r, const CudaLibrary& lib) {
  const TorchBuildInfo& t = r->torch;
  int gpus = r->driver.GpuCount();
  const char* name = CudaLibraryName(lib.kind);
  std::optional<Version> built_with;
  std::string needed = NeededSoname(t, lib.kind, &built_with);
  int cuda_major = t.cuda_version > 0 ? DecodeCudaVersion(t.cuda_version).major : 12;
  // 1. A library libtorch does not need: report what is there.
  if (needed.empty()) {
    if (lib.found()) {
      Add(r, "cuda", name, CheckStatus::kOk, Described(lib, false));
    } else if (lib.kind == CudaLibraryKind::kNccl && t.cuda_build && gpus > 1) {
      Add(r, "cuda", name, CheckStatus::kWarning,
          "NCCL not found (" + Join(lib.tried, ", ") +
              "): training on several GPUs all-reduces gradients with NCCL",
          InstallAdvice(lib.kind, 2, cuda_major));
    } else {
      Add(r, "cuda", name, CheckStatus::kInfo, "not found (tried " + Join(lib.tried, ", ") + ")");
    }
    return;
  }
  // 2. The soname libtorch needs is there: is it at least the version it was built with?
  if (lib.soname == needed) {
    if (lib.version_known && built_with &&
        std::pair(lib.version.major, lib.version.minor) <
            std::pair(built_with->major, built_with->minor)) {
      Add(r, "cuda", name, CheckStatus::kWarning,
          Described(lib) + " is older than the " + built_with->ToString(2) +
              " libtorch was built with",
          "update " + std::string(name) + " to " + built_with->ToString(2) + " or newer");
    } else {
      Add(r, "cuda", name, CheckStatus::kOk, Described(lib, false) + ", as libtorch needs");
    }
    return;
  }
  // 3. It is missing.
  std::string detail =
      "libtorch needs " + std::string(name) +
      (built_with ? " " + std::to_string(built_with->major) + " (built with " +
                        built_with->ToString(lib.kind == CudaLibraryKind::kRuntime ? 2 : 3) + ")"
                  : "") +
      " but " + needed + " is not found";
  if (lib.found()) detail += " (found " + Described(lib) + ")";
  CheckStatus status = CheckStatus::kError;
  if (t.cuda_available) {
    status = CheckStatus::kWarning;
    detail += "; libtorch runs CUDA anyway, so it must carry its own copy";
  } else if (gpus == 0) {
    status = CheckStatus::kInfo;
    detail += "; not needed to train on CPU";
  }
  Add(r, "cuda", name, status, detail,
      InstallAdvice(lib.kind, built_with ? built_with->major : cuda_major, cuda_major));
}

// The driver against the CUDA runtime that will run: libtorch's, else the installed one.
void CheckDriverCompatibility(DoctorReport* r) {
  const TorchBuildInfo& t = r->torch;
  std::optional<Version> runtime;
  std::string runtime_name;
  if (t.cuda_build && t.cuda_version > 0) {
    runtime = DecodeCudaVersion(t.cuda_version);
    runtime_name = "the CUDA " + runtime->ToString(2) + " runtime libtorch was built with";
  } else {
    for (const CudaLibrary& lib : r->libraries) {
      if (lib.kind == CudaLibraryKind::kRuntime && lib.found() && lib.version_known) {
        runtime = lib.version;
        runtime_name = "the CUDA " + runtime->ToString(2) + " runtime (" + lib.soname + ")";
      }
    }
  }
  if (!runtime || r->driver.driver_cuda_version <= 0) return;
  Version driver = DecodeCudaVersion(r->driver.driver_cuda_version);
  std::string supports = "the driver supports CUDA up to " + driver.ToString(2);
  if (driver.major < runtime->major) {
    // Only libtorch's runtime decides whether training can use the GPUs.
    Add(r, "cuda", "driver vs runtime", t.cuda_build ? CheckStatus::kError : CheckStatus::kWarning,
        supports + ", too old for " + runtime_name + " (it needs a driver for CUDA " +
            std::to_string(runtime->major) + ")",
        DriverUpdateAdvice(*r, *runtime));
  } else if (std::pair(driver.major, driver.minor) < std::pair(runtime->major, runtime->minor)) {
    Add(r, "cuda", "driver vs runtime", CheckStatus::kWarning,
        supports + ", older than " + runtime_name +
            ": it runs through CUDA minor-version compatibility, but PTX from the newer toolkit "
            "cannot be JIT-compiled and newer features fail",
        DriverUpdateAdvice(*r, *runtime));
  } else {
    Add(r, "cuda", "driver vs runtime", CheckStatus::kOk,
        supports + ", enough for " + runtime_name);
  }
}

// cuda: every library and the driver's CUDA version; one line when none is there and
// none is needed.
void CheckCuda(DoctorReport* r) {
  bool any_found = std::any_of(r->libraries.begin(), r->libraries.end(),
                               [](const CudaLibrary& lib) { return lib.found(); });
  if (!any_found && r->driver.GpuCount() == 0 && !r->torch.cuda_build) {
    std::vector<std::string> tried;
    for (const CudaLibrary& lib : r->libraries)
      tried.insert(tried.end(), lib.tried.begin(), lib.tried.end());
    Add(r, "cuda", "CUDA libraries", CheckStatus::kInfo,
        "none found (tried " + Join(tried, ", ") + "): not needed to train on CPU");
    return;
  }
  for (const CudaLibrary& lib : r->libraries) CheckCudaLibrary(r, lib);
  CheckDriverCompatibility(r);
}

// gpu: one line per GPU; a busy one is a warning.
void CheckGpus(DoctorReport* r) {
  for (const GpuInfo& gpu : r->driver.gpus) {
    std::string detail = gpu.name.empty() ? "unnamed" : gpu.name;
    if (gpu.memory_total_bytes > 0) {
      detail += ", " + FormatBytes(gpu.memory_total_bytes) + " (" +
                FormatBytes(gpu.memory_used_bytes) + " used)";
    }
    if (gpu.compute_capability_major >= 0) {
      detail += ", compute capability " + std::to_string(gpu.compute_capability_major) + "." +
                std::to_string(gpu.compute_capability_minor);
    }
    if (gpu.utilization_percent >= 0)
      detail += ", " + std::to_string(gpu.utilization_percent) + "% busy";
    if (gpu.source != "NVML") detail += " (from " + gpu.source + ")";
    bool busy = gpu.utilization_percent >= kBusyGpuPercent ||
                (gpu.memory_total_bytes > 0 && gpu.memory_used_bytes * 2 > gpu.memory_total_bytes);
    std::string name = "GPU " + std::to_string(gpu.index);
    if (busy) {
      Add(r, "gpu", name, CheckStatus::kWarning, detail + ": another process is using it",
          "nvidia-smi lists the processes; choose free GPUs with CUDA_VISIBLE_DEVICES");
    } else {
      Add(r, "gpu", name, gpu.source == "NVML" ? CheckStatus::kOk : CheckStatus::kInfo, detail);
    }
  }
}

// libtorch: CPU-only or CUDA, against the GPUs present.
void CheckTorch(DoctorReport* r) {
  const TorchBuildInfo& t = r->torch;
  int gpus = r->driver.GpuCount();
  if (!t.linked && !t.problem.empty()) {
    Add(r, "libtorch", "libtorch", CheckStatus::kError,
        "train, extract and classify cannot run: " + t.problem,
        "install the libtorch imgpipe-torch was built with (Debian: apt-get install libtorch-dev), "
        "or rebuild imgpipe against the libtorch installed (make build)");
    return;
  }
  if (!t.linked) {
    Add(r, "libtorch", "libtorch", CheckStatus::kInfo,
        "imgpipe was built without libtorch: train, extract and classify are not available",
        "configure with -DIMGPIPE_TORCH=ON (and -DTorch_DIR=<libtorch>/share/cmake/Torch)");
    return;
  }
  if (!t.cuda_build) {
    if (gpus > 0) {
      Add(r, "libtorch", "libtorch", CheckStatus::kError,
          "libtorch " + t.version + " is a CPU-only build but " +
              Plural(gpus, "GPU is", "GPUs are") + " present",
          "build imgpipe against a CUDA build of libtorch (pytorch.org's cxx11-ABI zip for a CUDA "
          "the driver supports): cmake -DTorch_DIR=<libtorch>/share/cmake/Torch. If it is one "
          "already, libtorch_cuda.so was dropped at link time: link with -Wl,--no-as-needed");
    } else {
      Add(r, "libtorch", "libtorch", CheckStatus::kOk,
          "libtorch " + t.version + ", a CPU-only build: training runs on CPU");
    }
    return;
  }
  std::string built =
      "libtorch " + t.version + ", built with CUDA " +
      DecodeCudaVersion(t.cuda_version).ToString(2) +
      (t.cudnn_version > 0 ? " and cuDNN " + DecodeCudnnVersion(t.cudnn_version).ToString() : "");
  if (gpus == 0 && !t.cuda_available) {
    Add(r, "libtorch", "libtorch", CheckStatus::kInfo,
        built + "; no NVIDIA GPU here: training runs on CPU");
  } else if (!t.cuda_available) {
    Add(r, "libtorch", "libtorch", CheckStatus::kError,
        built + ", cannot use the " + Plural(gpus, "GPU", "GPUs") + " present",
        "fix the driver and CUDA problems above; check that CUDA_VISIBLE_DEVICES does not hide "
        "every GPU");
  } else if (gpus > 0 && t.cuda_device_count < gpus) {
    Add(r, "libtorch", "libtorch", CheckStatus::kInfo,
        built + ", uses " + std::to_string(t.cuda_device_count) + " of the " +
            std::to_string(gpus) + " GPUs present (CUDA_VISIBLE_DEVICES?)");
  } else {
    Add(r, "libtorch", "libtorch", CheckStatus::kOk,
        built + ", uses " + Plural(t.cuda_device_count, "GPU", "GPUs"));
  }
}
}  // namespace

void ProbeGpuStack(const SystemRoot& root, LibraryLoader& loader, const TorchBuildInfo& torch, DoctorReport* r) {
  r->torch = torch;
  r->wsl = DetectWsl(root);
  r->container = DetectContainer(root);
  r->driver = ProbeNvidiaDriver(root, loader);
  for (CudaLibraryKind kind : {CudaLibraryKind::kRuntime, CudaLibraryKind::kCudnn,
                               CudaLibraryKind::kCublas, CudaLibraryKind::kNccl}) {
    // The soname libtorch needs is tried first, so an older one beside it is not taken.
    std::optional<Version> built_with;
    std::string needed = NeededSoname(torch, kind, &built_with);
    std::vector<std::string> sonames = DefaultSonames(kind);
    if (!needed.empty()) sonames = PreferSoname(sonames, needed);
    r->libraries.push_back(ProbeCudaLibrary(loader, kind, sonames));
  }
}

void CheckGpuStack(DoctorReport* r) {
  CheckPlatform(r);
  CheckDriver(r);
  CheckCuda(r);
  CheckGpus(r);
  CheckTorch(r);
}

}  // namespace imgpipe::env
