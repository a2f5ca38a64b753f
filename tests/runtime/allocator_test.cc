#include "tessera/allocator.h"

#include <gtest/gtest.h>

#include "tessera/context.h"

namespace tessera {
namespace {

TEST(TrackingAllocator, TracksLiveAndPeakPerOwner) {
  TrackingAllocator alloc;
  Buffer a, b;
  ASSERT_TRUE(Buffer::allocate(alloc, 100, "x", &a).ok());
  ASSERT_TRUE(Buffer::allocate(alloc, 1000, "y", &b).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % TrackingAllocator::kAlignment, 0u);
  EXPECT_EQ(alloc.live_bytes(), 128u + 1024u);  // rounded to 64-byte lines
  a.reset();
  EXPECT_EQ(alloc.live_bytes(), 1024u);
  EXPECT_EQ(alloc.peak_bytes(), 128u + 1024u);
  auto owners = alloc.by_owner();
  EXPECT_EQ(owners["x"].live_bytes, 0u);
  EXPECT_EQ(owners["x"].peak_bytes, 128u);
  EXPECT_EQ(owners["y"].allocations, 1u);
  b.reset();
  EXPECT_TRUE(alloc.leaks().empty());
}

TEST(TrackingAllocator, BudgetRefusesBeforeAllocating) {
  TrackingAllocator alloc(4096);
  Buffer a, b;
  ASSERT_TRUE(Buffer::allocate(alloc, 4000, "first", &a).ok());
  Status s = Buffer::allocate(alloc, 200, "second", &b);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("second"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("4096"), std::string::npos) << s.message();
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(alloc.live_bytes(), 4032u);  // only the first block
  EXPECT_EQ(alloc.by_owner().count("second"), 0u);
}

TEST(TrackingAllocator, ReportsLeaksByOwner) {
  TrackingAllocator alloc;
  void* p = nullptr;
  ASSERT_TRUE(alloc.allocate(256, "leaky", &p).ok());
  auto leaks = alloc.leaks();
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0].owner, "leaky");
  EXPECT_EQ(leaks[0].bytes, 256u);
  alloc.deallocate(p);
  EXPECT_TRUE(alloc.leaks().empty());
}

TEST(Context, LogsLeaksWhenItEnds) {
  std::vector<std::string> lines;
  {
    Context ctx;
    ctx.logger().set_sink([&](LogLevel, std::string_view m) { lines.emplace_back(m); });
    void* p = nullptr;
    ASSERT_TRUE(ctx.allocator().allocate(64, "forgotten", &p).ok());
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("forgotten"), std::string::npos);
  EXPECT_NE(lines[0].find("64 bytes"), std::string::npos);
}


// Memory held outside the allocator (an HTTP answer's std::string) counts
// against the same budget, shows under its owner and as a leak if kept.
TEST(TrackingAllocator, ReservationsCountAgainstTheBudgetAndReleaseOnDestruction) {
  TrackingAllocator alloc(1000);
  {
    Reservation r(alloc, "server.answer");
    ASSERT_TRUE(r.grow(600).ok());
    EXPECT_EQ(alloc.live_bytes(), 600u);
    const Status refused = r.grow(500);
    EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
    EXPECT_NE(refused.message().find("server.answer"), std::string::npos);
    EXPECT_EQ(r.bytes(), 600u);
    void* p = nullptr;
    EXPECT_FALSE(alloc.allocate(500, "model", &p).ok());  // the reservation holds the room
    ASSERT_EQ(alloc.leaks().size(), 1u);
    EXPECT_EQ(alloc.by_owner().at("server.answer").live_bytes, 600u);
    Reservation moved = std::move(r);
    EXPECT_EQ(moved.bytes(), 600u);
  }
  EXPECT_EQ(alloc.live_bytes(), 0u);
  EXPECT_TRUE(alloc.leaks().empty());
  EXPECT_EQ(alloc.peak_bytes(), 600u);
}

}  // namespace
}  // namespace tessera
