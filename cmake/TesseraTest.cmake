# tessera_test(<name> <source>...): one GoogleTest binary, discovered by ctest.
# Included from the top CMakeLists (before src/) so a backend folder's tests/
# can use it as well as tests/.
find_package(GTest REQUIRED)
include(GoogleTest)

# One test binary per layer (or backend) keeps rebuilds small.
function(tessera_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE GTest::gtest_main tessera_warnings)
  # The code under test lives in the libraries and keeps the preset's flags;
  # the test drivers themselves (GoogleTest macros, expected values) need no
  # -O3, and -O1 compiles them in ~0.6x the time (TesseraOptimization.cmake).
  tessera_driver_code(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
