# `tessera verify`: the quick grid passes on the reference (exit 0, JSON says
# ok), an unknown backend is an error, and failures give exit code 1 with the
# failing case named (a 1K memory budget makes every case fail to allocate).
execute_process(COMMAND ${TESSERA} verify --backends reference --json
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verify on reference: rc=${rc}\n${out}${err}")
endif()
string(JSON ok GET "${out}" ok)
string(JSON name GET "${out}" backends 0 name)
string(JSON passed GET "${out}" backends 0 passed)
string(JSON failed GET "${out}" backends 0 failed)
if(NOT ok OR NOT name STREQUAL "reference" OR passed LESS 20 OR NOT failed EQUAL 0)
  message(FATAL_ERROR "verify --json: ok=${ok} name=${name} passed=${passed} failed=${failed}\n${out}")
endif()

execute_process(COMMAND ${TESSERA} verify --backends nosuch
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(FIND "${err}" "no backend named 'nosuch'" pos)
if(rc EQUAL 0 OR pos EQUAL -1)
  message(FATAL_ERROR "verify --backends nosuch: rc=${rc}\n${out}${err}")
endif()

execute_process(COMMAND ${TESSERA} --memory-budget 1K verify --backends reference
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(FIND "${out}" "FAIL B1_Sq7_Sk7_Hq2_Hkv2_D16_f32" pos_case)
string(FIND "${out}" "memory budget" pos_reason)
if(NOT rc EQUAL 1 OR pos_case EQUAL -1 OR pos_reason EQUAL -1)
  message(FATAL_ERROR "verify with failures: rc=${rc} (want 1)\n${out}${err}")
endif()
