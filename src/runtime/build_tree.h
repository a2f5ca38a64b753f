// The checkout a binary was built from, for a developer's build only.
//
// A few conveniences point into the source checkout: the default model link
// models/all-MiniLM-L6-v2 and the project's .venv (where the xla backend
// finds its PJRT plugin). They must never reach an installed copy: an
// installed libtessera.so or bin/tessera is a copy of the file the build made,
// so the paths are compiled in, and they count only while the file that holds
// this code still lies under the build directory it was made in. Once
// installed elsewhere (or the build moves), checkout_path() is "" and nothing
// depends on the checkout (docs/DECISIONS.md, "Installed models: a data
// directory, not the checkout").
#pragma once

#include <string>

namespace tessera {

// Whether this code runs from the build tree it was compiled in: the
// executable or shared library that holds it lies under that build directory.
bool running_from_build_tree();

// `relative` under the source checkout when running_from_build_tree(), else "".
std::string checkout_path(const std::string& relative);

}  // namespace tessera
