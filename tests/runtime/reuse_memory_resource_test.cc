// ReuseMemoryResource keeps large freed blocks for later requests, within its
// capacity, drops a kept block when a larger one of its generation is made,
// and gives every block back to its upstream in the end.
#include "runtime/reuse_memory_resource.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "tessera/context.h"

namespace tessera {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Upstream that counts what it hands out and gets back.
class CountingResource final : public MemoryResource {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    void* p = std::aligned_alloc(alignment, bytes);
    live.insert(p);
    ++allocations;
    return p;
  }
  void deallocate(void* ptr) override {
    EXPECT_EQ(live.erase(ptr), 1u) << "freed twice or never allocated";
    returned.push_back(ptr);
    std::free(ptr);
  }
  std::set<void*> live;
  std::vector<void*> returned;  // in the order they came back
  int allocations = 0;
};

TEST(ReuseMemoryResource, HandsAFreedLargeBlockOutAgain) {
  CountingResource up;
  {
    ReuseMemoryResource r(up, 16 * kMiB);
    void* a = r.allocate(4 * kMiB, 64);
    r.deallocate(a);
    EXPECT_EQ(r.kept_bytes(), 4 * kMiB);
    void* b = r.allocate(3 * kMiB, 64);  // at least half the kept block: reused
    EXPECT_EQ(b, a);
    EXPECT_EQ(r.reuses(), 1u);
    EXPECT_EQ(r.kept_bytes(), 0u);
    void* c = r.allocate(1 * kMiB, 64);  // nothing kept: fresh
    EXPECT_NE(c, a);
    r.deallocate(b);
    void* e = r.allocate(kMiB + 1, 64);  // under half the kept 4 MiB: fresh
    EXPECT_NE(e, a);
    EXPECT_EQ(up.live.count(a), 1u);     // and the 4 MiB stays kept
    // Larger than the kept 4 MiB: fresh, and the 4 MiB (at least half of 5)
    // goes back. Judged by the upstream's counts, not by d != a: once a is
    // back upstream, the fresh block may legitimately get a's address.
    void* d = r.allocate(5 * kMiB, 64);
    EXPECT_EQ(up.allocations, 4);
    ASSERT_EQ(up.returned.size(), 1u);
    EXPECT_EQ(up.returned[0], a);
    EXPECT_EQ(r.kept_bytes(), 0u);
    EXPECT_EQ(r.reuses(), 1u);
    for (void* p : {c, d, e}) {
      r.deallocate(p);
    }
    EXPECT_EQ(up.live.size(), 3u);  // all kept: 1 + 5 + 1.125 MiB <= 16
  }
  EXPECT_TRUE(up.live.empty()) << "the destructor returns every kept block";
}

TEST(ReuseMemoryResource, KeepsAtMostItsCapacityOldestOutFirst) {
  CountingResource up;
  ReuseMemoryResource r(up, 5 * kMiB);
  void* a = r.allocate(2 * kMiB, 64);
  void* b = r.allocate(2 * kMiB, 64);
  void* c = r.allocate(2 * kMiB, 64);
  void* huge = r.allocate(6 * kMiB, 64);  // over the capacity: never kept
  void* small = r.allocate(1024, 64);     // under 1 MiB: never kept (sizes are multiples of 64,
                                          // as aligned_alloc requires)
  r.deallocate(a);
  r.deallocate(b);
  r.deallocate(c);  // 6 MiB > 5: a, the oldest, goes back
  r.deallocate(huge);
  r.deallocate(small);
  EXPECT_EQ(r.kept_bytes(), 4 * kMiB);
  EXPECT_EQ(up.live, (std::set<void*>{b, c}));
  void* again = r.allocate(2 * kMiB, 64);
  EXPECT_EQ(again, c);  // the most recent first
  r.deallocate(again);
}

// Through a Context: the tracked accounting is the same with reuse on, and a
// second per-call workspace of the same size costs no new memory.
TEST(ReuseMemoryResource, ContextAccountingIsUnchanged) {
  ContextOptions options;
  options.reuse_memory_bytes = 64 * kMiB;
  Context ctx(options);
  void* first = nullptr;
  {
    Buffer b;
    ASSERT_TRUE(Buffer::allocate(ctx.allocator(), 8 * kMiB, "test.workspace", &b).ok());
    first = b.data();
  }
  EXPECT_EQ(ctx.allocator().live_bytes(), 0u);
  Buffer again;
  ASSERT_TRUE(Buffer::allocate(ctx.allocator(), 8 * kMiB, "test.workspace", &again).ok());
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(ctx.allocator().live_bytes(), 8 * kMiB);
  EXPECT_EQ(ctx.allocator().by_owner().at("test.workspace").allocations, 2u);
  again.reset();
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera
