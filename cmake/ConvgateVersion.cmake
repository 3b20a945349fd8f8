# Records the build commit in a generated header so every report can say which code produced it.
find_package(Git QUIET)
set(CONVGATE_BUILD_COMMIT "unknown")
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE _commit
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _commit)
    execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain --untracked-files=no
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE _dirty ERROR_QUIET)
    set(CONVGATE_BUILD_COMMIT "${_commit}")
    if(_dirty)
      set(CONVGATE_BUILD_COMMIT "${_commit}-dirty")
    endif()
  endif()
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/version.h.in"
               "${PROJECT_BINARY_DIR}/generated/convgate/version.h" @ONLY)
