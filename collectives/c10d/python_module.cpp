// torch_mimic._c10d: the Python binding of ProcessGroupMimic, a subclass of PyTorch's own
// ProcessGroup class, so torch.distributed accepts it as a group.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "collectives/c10d/process_group_mimic.h"

namespace py = pybind11;

PYBIND11_MODULE(_c10d, module) {
  // The base class must be registered before a subclass can name it.
  py::module::import("torch.distributed");
  py::class_<mimic::c10d::ProcessGroupMimic, ::c10d::ProcessGroup,
             c10::intrusive_ptr<mimic::c10d::ProcessGroupMimic>>(module, "ProcessGroupMimic")
      .def(py::init<c10::intrusive_ptr<::c10d::Store>, int, int,
                    c10::intrusive_ptr<::c10d::ProcessGroup>, std::chrono::milliseconds>(),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("data"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("timing_only", &mimic::c10d::ProcessGroupMimic::timingOnly);
}
