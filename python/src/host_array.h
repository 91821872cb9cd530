// HostArray: a typed, row-major view of host memory that a C++ object owns (a
// pipeline batch's buffer), exported to Python without a copy through the buffer
// protocol (np.asarray, memoryview) and DLPack (__dlpack__ / __dlpack_device__:
// torch.from_dlpack, np.from_dlpack). Every export holds a reference to the owner, so
// the memory stays valid for as long as anything in Python references it.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace imgpipe::python {

namespace py = pybind11;

enum class ElementType { kUint8, kInt64, kFloat32 };

class HostArray {
 public:
  // `data` points into memory that `owner` keeps alive; `shape` in elements.
  HostArray(std::shared_ptr<const void> owner, void* data, ElementType type,
            std::vector<int64_t> shape);

  // The buffer protocol's description (writable, row-major strides in bytes).
  py::buffer_info BufferInfo() const;
  // A "dltensor" capsule holding a DLManagedTensor whose deleter releases `owner_`;
  // a capsule never consumed releases it when the capsule is freed.
  py::capsule Dlpack() const;

  const std::vector<int64_t>& shape() const { return shape_; }
  ElementType type() const { return type_; }
  // NumPy's name of the element type: "uint8", "int64" or "float32".
  const char* type_name() const;
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(data_); }

 private:
  std::shared_ptr<const void> owner_;
  void* data_;
  ElementType type_;
  std::vector<int64_t> shape_;
};

// Registers the class as imgpipe._imgpipe.HostArray.
void BindHostArray(py::module_& m);

}  // namespace imgpipe::python
