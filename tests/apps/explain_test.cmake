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
# A variant's name holds ':' after the clause's: the policy parses, and what
# follows depends on the CPU, so the test first asks `backends --json` whether
# the variant can run here. Where it can, explain chooses it; where it cannot
# (no AVX512_BF16: Zen 3, Ice Lake, TESSERA_CPU_CAP=x86-avx2), the policy is
# refused before anything runs, exit 2, naming the policy and the variant with
# its reason.
execute_process(COMMAND ${TESSERA} backends --json OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
string(JSON count LENGTH "${listing}")
set(bf16dot_available "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON row_name GET "${listing}" ${i} name)
  if(row_name STREQUAL "cpu.flash:bf16dot")
    string(JSON bf16dot_available GET "${listing}" ${i} available)
    string(JSON bf16dot_reason GET "${listing}" ${i} unavailable_reason)
  endif()
endforeach()
if(bf16dot_available STREQUAL "")
  message(FATAL_ERROR "backends --json does not list cpu.flash:bf16dot:\n${listing}")
endif()
execute_process(
  COMMAND ${TESSERA} --attention=only:cpu.flash:bf16dot backends --explain
          B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(bf16dot_available)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "policy: only:cpu.flash:bf16dot" OR
     NOT out MATCHES "cpu.flash:bf16dot +chosen +first eligible")
    message(FATAL_ERROR "explain with only:cpu.flash:bf16dot where it runs (rc=${rc}):\n${out}${err}")
  endif()
else()
  string(FIND "${err}" "policy 'only:cpu.flash:bf16dot' leaves no backend" policy_pos)
  string(FIND "${err}" "cpu.flash:bf16dot (unavailable here: ${bf16dot_reason})" reason_pos)
  if(NOT rc EQUAL 2 OR policy_pos EQUAL -1 OR reason_pos EQUAL -1 OR bf16dot_reason STREQUAL "")
    message(FATAL_ERROR "only:cpu.flash:bf16dot where it cannot run (${bf16dot_reason}) is not "
                        "refused with the reason (rc=${rc}):\n${out}${err}")
  endif()
endif()
execute_process(
  COMMAND ${TESSERA} backends --explain B=1,Sq=16,Sk=16,Hq=2,Hkv=2,D=64,dtype=bf16
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
foreach(needle "cpu.flash:f32" "cpu.flash:bf16dot" "cpu.flash:amx")
  string(FIND "${out}" "${needle}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "explain does not list ${needle}:\n${out}${err}")
  endif()
endforeach()
if(NOT out MATCHES "cpu.flash +chosen [^\n]*; kernel path (f32|bf16dot|amx)")
  message(FATAL_ERROR "explain does not name cpu.flash's product path:\n${out}${err}")
endif()
