# tessera_test(<name> <source>...): one GoogleTest binary, discovered by ctest.
# Included from the top CMakeLists (before src/) so a backend folder's tests/
# can use it as well as tests/.
find_package(GTest REQUIRED)
include(GoogleTest)

# One test binary per layer (or backend) keeps rebuilds small.
# tessera_test(<name> [CPU_DEPENDENT] <source>...): CPU_DEPENDENT labels its
# tests `cpu`: their outcome depends on the CPU kind, so scripts/test.sh runs
# them again under lower kinds (TESSERA_CPU_CAP; docs/RELIABILITY.md, "The
# suite on every CPU kind").
function(tessera_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "CPU_DEPENDENT" "" "")
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE GTest::gtest_main tessera_warnings)
  # The code under test lives in the libraries and keeps the preset's flags;
  # the test drivers themselves (GoogleTest macros, expected values) need no
  # -O3, and -O1 compiles them in ~0.6x the time (TesseraOptimization.cmake).
  tessera_driver_code(${name})
  if(arg_CPU_DEPENDENT)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS cpu)
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
