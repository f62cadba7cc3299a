# cmake -P: fails naming the files that differ from what clang-format (CLANG_FORMAT) makes of
# them under the tree's .clang-format: the C++ and CUDA sources below SOURCE.
file(GLOB_RECURSE files RELATIVE ${SOURCE}
  ${SOURCE}/include/*.hpp ${SOURCE}/src/*.cpp ${SOURCE}/src/*.hpp ${SOURCE}/src/*.cu ${SOURCE}/src/*.cuh
  ${SOURCE}/apps/*.cpp ${SOURCE}/apps/*.hpp ${SOURCE}/tests/*.cpp ${SOURCE}/tests/*.hpp
  ${SOURCE}/bench/*.cpp ${SOURCE}/python/src/*.cpp)
set(differ "")
foreach(f IN LISTS files)
  execute_process(COMMAND ${CLANG_FORMAT} --style=file --dry-run --Werror ${f}
    WORKING_DIRECTORY ${SOURCE} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    list(APPEND differ ${f})
  endif()
endforeach()
list(LENGTH files count)
if(differ)
  list(JOIN differ "\n  " text)
  message(FATAL_ERROR "not formatted as .clang-format says (clang-format -i --style=file FILE):\n  ${text}")
endif()
message(STATUS "${count} files formatted as .clang-format says")
