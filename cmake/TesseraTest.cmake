# tessera_test(<name> <source>...): one GoogleTest binary, discovered by ctest.
# Included from the top CMakeLists (before src/) so a backend folder's tests/
# can use it as well as tests/.
find_package(GTest REQUIRED)
include(GoogleTest)

# One test binary per layer (or backend) keeps rebuilds small.
function(tessera_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE GTest::gtest_main tessera_warnings)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
