# cmake -DGATE_COMMAND=<gate binary> -P run_gate.cmake [-- extra args are not used]
# Runs one gate lane, its output passed through, then reports a non-zero exit in a line that the
# test's FAIL_REGULAR_EXPRESSION matches, so the test needs "RESULT: GREEN" AND exit 0.
if(NOT DEFINED GATE_COMMAND OR GATE_COMMAND STREQUAL "")
  message(FATAL_ERROR "run_gate.cmake: pass -DGATE_COMMAND=<gate binary>")
endif()
execute_process(COMMAND ${GATE_COMMAND} RESULT_VARIABLE status)
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "gate exit status ${status}: ${GATE_COMMAND}")
endif()
