# Static linking of the two programs against Debian's archives (.a files).
#
# `agent` starts for every command and `agentd` stays resident, so both link the C++ stacks
# (gRPC, protobuf, Abseil, RE2, libstdc++) statically: the dynamic loader then resolves no
# C++ symbols at start-up, and the daemon maps only the pages it touches of one binary instead
# of ~60 shared libraries. The README's "Linking" section has the figures.
#
# The project's libraries name their external dependencies with agent_link_external(), so
# that a program marked by agent_link_static() gets the archives instead of the shared
# libraries those imported targets would drag in. Tests and sanitizer builds link shared.

# Links `target` to the imported targets after SCOPE, unless the program being linked is a
# static one: the generator expression is evaluated for the consuming program.
function(agent_link_external target scope)
  foreach(dep ${ARGN})
    target_link_libraries(${target} ${scope}
      "$<$<NOT:$<BOOL:$<TARGET_PROPERTY:AGENT_STATIC_LINK>>>:${dep}>")
  endforeach()
endfunction()

# agent_link_static(TARGET LIBRARIES lib... PACKAGES pkg... [ARCHIVES lib...] [SHARED lib...])
# Links TARGET against the project's LIBRARIES and, in one group with them (so that the
# order of archives does not matter), the pkg-config PACKAGES' --static closure and the extra
# ARCHIVES, each from its .a when Debian ships one. glibc and the libraries named in SHARED
# stay shared.
function(agent_link_static target)
  cmake_parse_arguments(ARG "" "" "LIBRARIES;PACKAGES;ARCHIVES;SHARED" ${ARGN})
  set_target_properties(${target} PROPERTIES AGENT_STATIC_LINK ON)
  pkg_check_modules(static_${target} REQUIRED ${ARG_PACKAGES})
  set(libdir /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  set(link "")
  foreach(lib ${ARG_ARCHIVES} ${static_${target}_STATIC_LIBRARIES})
    if(lib MATCHES "^(c|m|dl|rt|pthread)$" OR lib IN_LIST ARG_SHARED
       OR NOT EXISTS ${libdir}/lib${lib}.a)
      list(APPEND link "-l${lib}")
    else()
      list(APPEND link "-l:lib${lib}.a")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES link)
  target_link_libraries(${target} PRIVATE -Wl,--start-group ${ARG_LIBRARIES} ${link}
    -Wl,--end-group Threads::Threads -static-libstdc++ -static-libgcc)
endfunction()

# Static unless sanitizing: sanitizer builds are for finding bugs, not for start-up time, and
# link the shared libraries as the tests do.
if(AGENT_SANITIZE)
  set(agent_static_default OFF)
else()
  set(agent_static_default ON)
endif()
option(AGENT_STATIC "Link agent and agentd statically against the C++ stacks"
  ${agent_static_default})
