# Finds OpenVINO's C++ runtime inside the project venv's openvino wheel (scripts/setup.sh installs
# it, pinned with its hash): the wheel ships include/ and libs/libopenvino.so.<N> beside its Python
# package. OpenVINO's own OpenVINOConfig.cmake is not used: it resolves its folder through the venv's
# hashed directory (venv-<hash>), which setup.sh replaces when the requirements change, and it pulls
# TBB's CMake package in for nothing convgate links.
# Search order: -DOPENVINO_PACKAGE_DIR=<site-packages/openvino>, then the set-up script's venv
# ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv, named through its stable symlink so that the
# module's RPATH survives a rebuilt venv.
# Defines the imported target OpenVinoRuntime::runtime, OpenVinoRuntime_LIBRARY_DIR and
# OpenVinoRuntime_VERSION (the wheel's, from its dist-info folder).
include(ConvgateVenvPackage)
convgate_venv_package(openvino "${OPENVINO_PACKAGE_DIR}" _ov_package_dir)

set(OpenVinoRuntime_INCLUDE_DIR "")
set(OpenVinoRuntime_LIBRARY "")
if(_ov_package_dir AND EXISTS "${_ov_package_dir}/include/openvino/openvino.hpp")
  set(OpenVinoRuntime_INCLUDE_DIR "${_ov_package_dir}/include")
  file(GLOB _ov_libraries "${_ov_package_dir}/libs/libopenvino.so.*")
  if(_ov_libraries)
    list(GET _ov_libraries 0 OpenVinoRuntime_LIBRARY)
  endif()
  file(GLOB _ov_dist_info "${_ov_package_dir}/../openvino-*.dist-info")
  if(_ov_dist_info)
    list(GET _ov_dist_info 0 _ov_dist)
    get_filename_component(_ov_dist "${_ov_dist}" NAME)
    string(REGEX REPLACE "^openvino-(.*)\\.dist-info$" "\\1" OpenVinoRuntime_VERSION "${_ov_dist}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenVinoRuntime
  REQUIRED_VARS OpenVinoRuntime_LIBRARY OpenVinoRuntime_INCLUDE_DIR
  VERSION_VAR OpenVinoRuntime_VERSION
  REASON_FAILURE_MESSAGE "run scripts/setup.sh (its venv holds the openvino wheel), or pass -DOPENVINO_PACKAGE_DIR=<site-packages/openvino>")

if(OpenVinoRuntime_FOUND AND NOT TARGET OpenVinoRuntime::runtime)
  get_filename_component(OpenVinoRuntime_LIBRARY_DIR "${OpenVinoRuntime_LIBRARY}" DIRECTORY)
  get_filename_component(_ov_soname "${OpenVinoRuntime_LIBRARY}" NAME)
  add_library(OpenVinoRuntime::runtime SHARED IMPORTED)
  # SYSTEM: OpenVINO's headers are not held to convgate's warning flags.
  set_target_properties(OpenVinoRuntime::runtime PROPERTIES
    IMPORTED_LOCATION "${OpenVinoRuntime_LIBRARY}"
    IMPORTED_SONAME "${_ov_soname}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${OpenVinoRuntime_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenVinoRuntime_INCLUDE_DIR}")
endif()
