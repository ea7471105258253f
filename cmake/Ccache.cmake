# Compiler cache. CI builds the tree four times (Debug, ASan, TSan, fuzz) on a machine that
# keeps ~/.cache/ccache between runs, in a fresh clone each time: with the settings below a
# second run in another folder finds its objects again. Off with -DAGENT_CCACHE=OFF.
#   base_dir + no hash_dir: the clone's absolute path does not enter the key (the debug info
#     then names the folder that first compiled an object);
#   sloppiness: what precompiled headers need (ccache's manual, "Precompiled headers"), and
#     header times, which a fresh clone changes without changing a byte.
option(AGENT_CCACHE "Compile through ccache when it is installed" ON)
find_program(AGENT_CCACHE_PROGRAM ccache)
if(AGENT_CCACHE AND AGENT_CCACHE_PROGRAM)
  set(launcher
    ${CMAKE_COMMAND} -E env
    CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
    CCACHE_NOHASHDIR=1
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    ${AGENT_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # clang stamps a PCH with its headers' times, which ccache cannot reproduce.
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:SHELL:-Xclang -fno-pch-timestamp>")
  endif()
endif()
