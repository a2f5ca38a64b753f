# `tessera bench attention --plot FILE.png --peaks ...` through the binary:
# the PNG (signature, IHDR size), the table's %ROOF column, the JSON rows'
# peaks and roofs (min(peak, triad * intensity)), the peaks measured when not
# given, and the errors that stop it before anything is timed.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# One shape per run: ';' cannot pass through a CMake argument list.
# f32: 4*16*16*16 FLOPs over 4 tensors of 16*16 f32 = 4 FLOP/byte; bf16: 8.
set(f32 "B=1,S=16,H=1,D=16,dtype=f32")
set(bf16 "B=1,S=16,H=1,D=16,dtype=bf16")
set(quick --backends reference --iters 1 --warmup 0 --min-seconds 0)

function(expect_png path)
  file(SIZE ${path} size)
  file(READ ${path} head LIMIT 24 HEX)
  # Signature, IHDR length 13, "IHDR", width 1600, height 800.
  if(NOT head STREQUAL "89504e470d0a1a0a0000000d494844520000064000000320" OR size LESS 20000)
    message(FATAL_ERROR "${path} is not the 1600x800 roofline PNG: ${size} bytes, starts ${head}")
  endif()
endfunction()

# Given peaks: the roof of each row is min(peak of its dtype, 10 * intensity).
foreach(dtype_roof "f32|40" "bf16|80")  # min(100, 10 * 4) and min(200, 10 * 8)
  string(REPLACE "|" ";" pair "${dtype_roof}")
  list(GET pair 0 dtype)
  list(GET pair 1 want)
  execute_process(
    COMMAND ${TESSERA} --threads 1 bench attention --shapes ${${dtype}} ${quick}
            --peaks fma=100,triad=10,bf16=200 --plot ${WORK}/given.png --json ${WORK}/given.json
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${out}" "%ROOF" roof_column)
  string(FIND "${err}" "measuring" measured)
  if(NOT rc EQUAL 0 OR roof_column EQUAL -1 OR NOT measured EQUAL -1)
    message(FATAL_ERROR "--plot with --peaks: rc=${rc}, %ROOF column or measuring wrong\n${out}${err}")
  endif()
  expect_png(${WORK}/given.png)
  file(READ ${WORK}/given.json rows)
  string(JSON roof GET "${rows}" 0 roof_gflops)
  string(JSON pct GET "${rows}" 0 pct_of_roof)
  string(JSON fma GET "${rows}" 0 peaks fma_gflops)
  string(JSON source GET "${rows}" 0 peaks source)
  if(NOT roof MATCHES "^${want}(\\.0+)?$" OR NOT pct GREATER 0 OR NOT fma MATCHES "^100(\\.0+)?$"
     OR NOT source STREQUAL "given by --peaks")
    message(FATAL_ERROR "${dtype}: roof ${roof} (want ${want}), pct ${pct}, fma ${fma}, ${source}\n${rows}")
  endif()
endforeach()

# Neither --plot nor --peaks: no peaks, no column, nothing measured.
execute_process(
  COMMAND ${TESSERA} --threads 1 bench attention --shapes ${f32} ${quick} --json ${WORK}/plain.json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${WORK}/plain.json rows)
string(JSON peaks ERROR_VARIABLE no_peaks GET "${rows}" 0 peaks)
string(FIND "${out}" "%ROOF" roof_column)
if(NOT rc EQUAL 0 OR NOT roof_column EQUAL -1 OR NOT no_peaks)
  message(FATAL_ERROR "plain bench: rc=${rc}, unexpected peaks or %ROOF\n${out}${err}")
endif()

# --plot alone measures the peaks first, with a progress line.
execute_process(
  COMMAND ${TESSERA} --threads 1 bench attention --shapes ${f32} ${quick}
          --plot ${WORK}/measured.png --json ${WORK}/measured.json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(FIND "${err}" "measuring this machine's peaks on 1 thread" progress)
file(READ ${WORK}/measured.json rows)
string(JSON source GET "${rows}" 0 peaks source)
string(JSON triad GET "${rows}" 0 peaks triad_gbps)
if(NOT rc EQUAL 0 OR progress EQUAL -1 OR NOT source STREQUAL "measured on 1 thread"
   OR NOT triad GREATER 0)
  message(FATAL_ERROR "--plot without --peaks: rc=${rc}, source '${source}', triad ${triad}\n${out}${err}")
endif()
expect_png(${WORK}/measured.png)

# Errors: each names what is wrong, and nothing is timed (no table header).
foreach(case
    "--plot|${WORK}/roof.svg|must end in .png"
    "--plot|${WORK}/no_such_dir/roof.png|cannot write '${WORK}/no_such_dir/roof.png'"
    "--peaks|fma=abc,triad=10|field 'fma' must be a number > 0, not 'abc'"
    "--peaks|fma=100|field 'triad' is missing"
    "--peaks|fma=100,triad=10,l2=5|field 'l2' is unknown")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 option)
  list(GET parts 1 value)
  list(GET parts 2 needle)
  execute_process(
    COMMAND ${TESSERA} --threads 1 bench attention --shapes ${f32} ${quick} ${option} ${value}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${err}" "${needle}" pos)
  string(FIND "${out}" "BACKEND" timed)
  if(rc EQUAL 0 OR pos EQUAL -1 OR NOT timed EQUAL -1)
    message(FATAL_ERROR "${option} ${value}: rc=${rc}, want '${needle}' and no table\n${out}${err}")
  endif()
endforeach()
if(EXISTS ${WORK}/roof.svg OR EXISTS ${WORK}/no_such_dir)
  message(FATAL_ERROR "a refused --plot path was created")
endif()

execute_process(COMMAND ${TESSERA} bench attention --help OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(FIND "${out}" "--plot" plot_help)
string(FIND "${out}" "fma=GFLOPS,triad=GBS" peaks_help)
if(NOT rc EQUAL 0 OR plot_help EQUAL -1 OR peaks_help EQUAL -1)
  message(FATAL_ERROR "bench attention --help lacks --plot / --peaks:\n${out}")
endif()
