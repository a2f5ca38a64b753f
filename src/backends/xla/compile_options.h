// The serialized xla.CompileOptionsProto sent with every compile. PJRT takes
// the options as protobuf bytes; tessera links no protobuf, so the few fields
// it needs are encoded by hand here. Empty or partial options abort some
// plugins (a CHECK on num_replicas / num_partitions inside XLA) instead of
// returning an error, so these are always complete for one device.
#pragma once

#include <string>

namespace tessera::xla {

// CompileOptionsProto {
//   executable_build_options (3) {
//     device_ordinal (1): -1     // "any": PJRT assigns the one device
//     num_replicas   (4): 1
//     num_partitions (5): 1
//   }
// }
std::string single_device_compile_options();

}  // namespace tessera::xla
