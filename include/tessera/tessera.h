// Umbrella header: the whole public contract.
#pragma once

#include "tessera/allocator.h"
#include "tessera/attention.h"
#include "tessera/backend.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"
#include "tessera/dtype.h"
#include "tessera/logging.h"
#include "tessera/profiler.h"
#include "tessera/registry.h"
#include "tessera/status.h"
#include "tessera/tensor.h"
#include "tessera/thread_pool.h"
