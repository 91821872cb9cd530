#include "host_array.h"

#include "dlpack_format.h"

namespace imgpipe::python {
namespace {

// Bytes per element, the buffer protocol's format character and DLPack's type code.
size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kUint8: return 1;
    case ElementType::kInt64: return 8;
    case ElementType::kFloat32: return 4;
  }
  return 1;
}

std::string BufferFormat(ElementType type) {
  switch (type) {
    case ElementType::kUint8: return py::format_descriptor<uint8_t>::format();
    case ElementType::kInt64: return py::format_descriptor<int64_t>::format();
    case ElementType::kFloat32: return py::format_descriptor<float>::format();
  }
  return "B";
}

DLDataType DlpackType(ElementType type) {
  switch (type) {
    case ElementType::kUint8: return {kDLUInt, 8, 1};
    case ElementType::kInt64: return {kDLInt, 64, 1};
    case ElementType::kFloat32: return {kDLFloat, 32, 1};
  }
  return {kDLUInt, 8, 1};
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// What a DLManagedTensor's manager_ctx points to: the tensor, its shape and strides,
// and the reference that keeps the memory alive.
struct DlpackExport {
  DLManagedTensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<const void> owner;
};

void DeleteDlpackExport(DLManagedTensor* tensor) {
  delete static_cast<DlpackExport*>(tensor->manager_ctx);
}

// Frees a capsule's tensor unless a consumer took it (and renamed the capsule).
void DeleteUnconsumedCapsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kDlpackCapsuleName)) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kDlpackCapsuleName));
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

}  // namespace

HostArray::HostArray(std::shared_ptr<const void> owner, void* data, ElementType type,
                     std::vector<int64_t> shape)
    : owner_(std::move(owner)), data_(data), type_(type), shape_(std::move(shape)) {}

const char* HostArray::type_name() const {
  switch (type_) {
    case ElementType::kUint8: return "uint8";
    case ElementType::kInt64: return "int64";
    case ElementType::kFloat32: return "float32";
  }
  return "uint8";
}

py::buffer_info HostArray::BufferInfo() const {
  const auto item = static_cast<py::ssize_t>(ElementSize(type_));
  std::vector<py::ssize_t> shape(shape_.begin(), shape_.end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : RowMajorStrides(shape_)) strides.push_back(s * item);
  return py::buffer_info(data_, item, BufferFormat(type_), static_cast<py::ssize_t>(shape.size()),
                         shape, strides, /*readonly=*/false);
}

py::capsule HostArray::Dlpack() const {
  auto* e = new DlpackExport{{}, shape_, RowMajorStrides(shape_), owner_};
  DLTensor& t = e->tensor.dl_tensor;
  t.data = data_;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape_.size());
  t.dtype = DlpackType(type_);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = DeleteDlpackExport;
  PyObject* capsule = PyCapsule_New(&e->tensor, kDlpackCapsuleName, DeleteUnconsumedCapsule);
  if (capsule == nullptr) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

void BindHostArray(py::module_& m) {
  py::class_<HostArray>(m, "HostArray", py::buffer_protocol(),
                        "Host memory of a batch, shared without a copy (buffer protocol, DLPack).")
      .def_buffer(&HostArray::BufferInfo)
      .def("__dlpack__", [](const HostArray& a, py::object stream) { return a.Dlpack(); },
           py::arg("stream") = py::none(),
           "A DLPack capsule sharing this memory (CPU memory: `stream` is ignored).")
      .def("__dlpack_device__", [](const HostArray&) { return py::make_tuple(int(kDLCPU), 0); },
           "(kDLCPU, 0): the memory is on the host.")
      .def_property_readonly("shape", [](const HostArray& a) {
        py::tuple t(a.shape().size());
        for (size_t i = 0; i < a.shape().size(); ++i) t[i] = a.shape()[i];
        return t;
      })
      .def_property_readonly("dtype", &HostArray::type_name, "NumPy's name of the element type.")
      .def_property_readonly("address", &HostArray::address, "Address of the first element.")
      .def("__len__", [](const HostArray& a) { return a.shape().empty() ? 0 : a.shape()[0]; });
}

}  // namespace imgpipe::python
