// tessera._tessera: the compiled half of the Python package. The Python
// half (python/tessera/*.py) gives it torch's and sentence-transformers'
// calling conventions; this module only maps the public C++ API.
#include <nanobind/nanobind.h>

#include "runtime_handle.h"
#include "tessera/runtime.h"

NB_MODULE(_tessera, m) {
  m.doc() = "tessera's C++ runtime (use the `tessera` package, not this module)";
  m.attr("__version__") = tessera::library_version();
  tessera::python::bind_runtime(m);
  tessera::python::bind_embedder(m);
  tessera::python::bind_quantize(m);
}
