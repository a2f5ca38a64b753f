#include "runtime/run_catching.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tessera {
namespace {

TEST(RunCatching, ReturnsTheBodysExitCodeWhenNothingIsThrown) {
  EXPECT_EQ(run_catching("prog", 70, [] { return 3; }), 3);
}

TEST(RunCatching, AnEscapingExceptionIsOneLineOnStderrAndTheGivenCode) {
  testing::internal::CaptureStderr();
  const int code = run_catching("prog: internal error", 70, []() -> int {
    throw std::runtime_error("the table is empty");
  });
  EXPECT_EQ(code, 70);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: internal error: the table is empty\n");
}

TEST(RunCatching, AnExceptionOfAnyTypeIsCaughtAndUnwound) {
  bool unwound = false;
  struct Flag {
    bool* set;
    ~Flag() { *set = true; }
  };
  testing::internal::CaptureStderr();
  const int code = run_catching("prog", 1, [&]() -> int {
    Flag flag{&unwound};
    throw 42;
  });
  EXPECT_EQ(code, 1);
  EXPECT_TRUE(unwound);  // partial outputs' destructors ran
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: an exception of unknown type\n");
}

}  // namespace
}  // namespace tessera
