# Finds the ONNX Runtime that scripts/setup.sh installed (pinned 1.29.0, checksums verified).
# Search order: -DONNXRUNTIME_ROOT=..., $ENV{ONNXRUNTIME_ROOT}, then the set-up script's cache
# ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/onnxruntime-1.29.0.
# Defines the imported target OnnxRuntime::onnxruntime and OnnxRuntime_VERSION.
set(_ort_cache_dir "$ENV{CONVGATE_DEPS}")
if(NOT _ort_cache_dir)
  set(_ort_cache_dir "$ENV{HOME}/.cache/convgate-deps")
endif()

find_path(OnnxRuntime_INCLUDE_DIR onnxruntime_cxx_api.h
  HINTS ${ONNXRUNTIME_ROOT} $ENV{ONNXRUNTIME_ROOT} "${_ort_cache_dir}/onnxruntime-1.29.0"
  PATH_SUFFIXES include NO_DEFAULT_PATH)
find_library(OnnxRuntime_LIBRARY onnxruntime
  HINTS ${ONNXRUNTIME_ROOT} $ENV{ONNXRUNTIME_ROOT} "${_ort_cache_dir}/onnxruntime-1.29.0"
  PATH_SUFFIXES lib NO_DEFAULT_PATH)

if(OnnxRuntime_INCLUDE_DIR)
  # The API version is the minor version of the release (ORT_API_VERSION 29 <-> 1.29).
  file(STRINGS "${OnnxRuntime_INCLUDE_DIR}/onnxruntime_c_api.h" _ort_api_line
       REGEX "^#define ORT_API_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _ort_api "${_ort_api_line}")
  set(OnnxRuntime_VERSION "1.${_ort_api}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OnnxRuntime
  REQUIRED_VARS OnnxRuntime_LIBRARY OnnxRuntime_INCLUDE_DIR
  VERSION_VAR OnnxRuntime_VERSION
  REASON_FAILURE_MESSAGE "run scripts/setup.sh (it installs ONNX Runtime 1.29.0), or pass -DONNXRUNTIME_ROOT=<dir with include/ and lib/>")

if(OnnxRuntime_FOUND AND NOT TARGET OnnxRuntime::onnxruntime)
  add_library(OnnxRuntime::onnxruntime SHARED IMPORTED)
  set_target_properties(OnnxRuntime::onnxruntime PROPERTIES
    IMPORTED_LOCATION "${OnnxRuntime_LIBRARY}"
    IMPORTED_SONAME "libonnxruntime.so.1"
    INTERFACE_INCLUDE_DIRECTORIES "${OnnxRuntime_INCLUDE_DIR}")
  get_filename_component(OnnxRuntime_LIBRARY_DIR "${OnnxRuntime_LIBRARY}" DIRECTORY)
endif()
