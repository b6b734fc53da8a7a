# What the standalone fuzzer projects (queuefile/fuzz, protocol/fuzz,
# control/fuzz) share: C++20, clang (libFuzzer comes with clang; the main
# build uses g++), and one function that builds a fuzzer with libFuzzer,
# ASan and UBSan.  Each project's CMakeLists.txt calls project() itself and
# then includes this file.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "the fuzzer needs clang: CXX=clang++ cmake -S ${CMAKE_CURRENT_SOURCE_DIR} ...")
endif()

# The repository's top, for include directories outside the fuzzed library.
get_filename_component(CQMGR_SOURCE_TOP "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

# cqmgr_fuzzer(NAME SOURCES file... [INCLUDES dir...] [LIBRARIES target...])
# builds the fuzzer NAME from SOURCES (its entry point and the library
# sources it fuzzes), with warnings as errors and every sanitizer report
# fatal.
function(cqmgr_fuzzer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;INCLUDES;LIBRARIES")
  set(sanitize -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
               -fno-omit-frame-pointer)
  add_executable(${name} ${arg_SOURCES})
  target_include_directories(${name} PRIVATE ${arg_INCLUDES})
  target_link_libraries(${name} PRIVATE ${arg_LIBRARIES})
  target_compile_options(${name} PRIVATE -Wall -Wextra -Werror -g -O1 ${sanitize})
  target_link_options(${name} PRIVATE ${sanitize})
endfunction()
