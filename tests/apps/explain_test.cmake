# `tessera backends --explain` names the chosen backend and a reason for each
# rejection; an unknown backend in the policy is reported, not ignored.
# (';' cannot pass through a CMake argument list, so one clause per run.)
foreach(policy_and_needle "prefer:nosuch|no backend named 'nosuch'" "deny:reference|denied by policy")
  string(REPLACE "|" ";" pair "${policy_and_needle}")
  list(GET pair 0 policy)
  list(GET pair 1 needle)
  execute_process(
    COMMAND ${TESSERA} --attention=${policy} backends --explain
            B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${out}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "explain with ${policy} lacks '${needle}':\n${out}${err}")
  endif()
endforeach()
execute_process(
  COMMAND ${TESSERA} backends --explain B=2,Sq=4,Sk=4,Hq=6,Hkv=4,D=8
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(FIND "${out}" "Hq % Hkv must be 0" pos)
if(pos EQUAL -1 OR rc EQUAL 0)
  message(FATAL_ERROR "invalid shape not explained (rc=${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} backends --json OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(JSON name GET "${out}" 0 name)
if(NOT rc EQUAL 0 OR NOT name STREQUAL "reference")
  message(FATAL_ERROR "backends --json: rc=${rc} first=${name}\n${out}")
endif()
