// The DLPack exchange structs (dmlc/dlpack include/dlpack/dlpack.h, ABI of v0.6-0.8,
// the version torch 1.13 and NumPy 1.24 read), declared here because the package
// must not depend on a framework's copy of the header. A producer hands out a
// PyCapsule named "dltensor" holding a DLManagedTensor*; the consumer renames it
// "used_dltensor" and calls `deleter` when it is done with the memory.
#pragma once

#include <cstdint>

namespace imgpipe::python {

enum DLDeviceType : int32_t { kDLCPU = 1 };

struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};

enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };

struct DLDataType {
  uint8_t code;  // DLDataTypeCode
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;    // ndim values
  int64_t* strides;  // ndim values, in elements; null: compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// The capsule names of the Python protocol (__dlpack__).
inline constexpr const char* kDlpackCapsuleName = "dltensor";
inline constexpr const char* kUsedDlpackCapsuleName = "used_dltensor";

}  // namespace imgpipe::python
