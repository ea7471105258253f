# Precompiled headers. Nearly every file includes nlohmann/json (through common/json.h), Abseil
# and, in the daemon, client and tests, the API's generated messages and GoogleTest; parsing
# them again in each of ~380 files was a third of a gcc Debug compile (10 files: 78 s, 53 s
# with these), and CI builds the tree three times (Debug, ASan, TSan). Each target parses them
# once. Only third-party and standard headers go in: a project header in a PCH would rebuild
# every file when it changes. ccache caches them with the settings of cmake/Ccache.cmake.
option(AGENT_PCH "Precompile the third-party headers most files include" ON)

set(AGENT_PCH_BASE
  <algorithm> <filesystem> <functional> <memory> <optional> <string> <string_view> <vector>
  "absl/status/statusor.h" "absl/strings/str_cat.h" "nlohmann/json.hpp")
set(AGENT_PCH_PROTO "agent/v1/agent.pb.h")
set(AGENT_PCH_TEST "gtest/gtest.h" "gmock/gmock.h")

# agent_precompile(target [PROTO] [TEST]): the base set, plus the API's messages and GoogleTest.
function(agent_precompile target)
  if(NOT AGENT_PCH)
    return()
  endif()
  cmake_parse_arguments(PCH "PROTO;TEST" "" "" ${ARGN})
  set(headers ${AGENT_PCH_BASE})
  if(PCH_PROTO)
    list(APPEND headers ${AGENT_PCH_PROTO})
  endif()
  if(PCH_TEST)
    list(APPEND headers ${AGENT_PCH_TEST})
  endif()
  list(TRANSFORM headers PREPEND "$<$<COMPILE_LANGUAGE:CXX>:" OUTPUT_VARIABLE wrapped)
  list(TRANSFORM wrapped APPEND ">")
  target_precompile_headers(${target} PRIVATE ${wrapped})
endfunction()
