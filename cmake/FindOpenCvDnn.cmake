# Finds OpenCV's DNN module for the "opencv" backend. Debian 12's libopencv-dnn-dev (4.6) ships no
# OpenCVConfig.cmake, and its opencv4.pc comes only with the full libopencv-dev, so the header and
# the two libraries the backend links (opencv_dnn, opencv_core) are found directly.
# Search order: -DOPENCV_ROOT=..., $ENV{OPENCV_ROOT}, then the system paths.
# Defines the imported target OpenCvDnn::dnn and OpenCvDnn_VERSION ("4.6.0").
find_path(OpenCvDnn_INCLUDE_DIR opencv2/dnn.hpp
  HINTS ${OPENCV_ROOT} $ENV{OPENCV_ROOT}
  PATH_SUFFIXES include/opencv4 opencv4 include)
find_library(OpenCvDnn_LIBRARY opencv_dnn HINTS ${OPENCV_ROOT} $ENV{OPENCV_ROOT} PATH_SUFFIXES lib)
find_library(OpenCvDnn_CORE_LIBRARY opencv_core
  HINTS ${OPENCV_ROOT} $ENV{OPENCV_ROOT} PATH_SUFFIXES lib)

if(OpenCvDnn_INCLUDE_DIR AND EXISTS "${OpenCvDnn_INCLUDE_DIR}/opencv2/core/version.hpp")
  file(STRINGS "${OpenCvDnn_INCLUDE_DIR}/opencv2/core/version.hpp" _ocv_version_lines
       REGEX "^#define CV_VERSION_(MAJOR|MINOR|REVISION) +[0-9]+")
  foreach(_ocv_part MAJOR MINOR REVISION)
    string(REGEX REPLACE ".*#define CV_VERSION_${_ocv_part} +([0-9]+).*" "\\1" _ocv_${_ocv_part}
           "${_ocv_version_lines}")
  endforeach()
  set(OpenCvDnn_VERSION "${_ocv_MAJOR}.${_ocv_MINOR}.${_ocv_REVISION}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenCvDnn
  REQUIRED_VARS OpenCvDnn_LIBRARY OpenCvDnn_CORE_LIBRARY OpenCvDnn_INCLUDE_DIR
  VERSION_VAR OpenCvDnn_VERSION
  REASON_FAILURE_MESSAGE "apt-get install libopencv-dnn-dev (scripts/setup.sh does), or pass -DOPENCV_ROOT=<dir with include/opencv4 and lib/>")

if(OpenCvDnn_FOUND AND NOT TARGET OpenCvDnn::dnn)
  add_library(OpenCvDnn::core UNKNOWN IMPORTED)
  set_target_properties(OpenCvDnn::core PROPERTIES IMPORTED_LOCATION "${OpenCvDnn_CORE_LIBRARY}")
  # Imported include directories are -isystem: OpenCV's headers trip C++20's
  # -Wdeprecated-enum-enum-conversion, which must not drown our own warnings.
  add_library(OpenCvDnn::dnn UNKNOWN IMPORTED)
  set_target_properties(OpenCvDnn::dnn PROPERTIES
    IMPORTED_LOCATION "${OpenCvDnn_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCvDnn_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES OpenCvDnn::core)
endif()
