# Finds OpenCV's imgcodecs and imgproc for the image codec module (--data image:,
# src/loaders/image_codec_opencv.cc). Debian 12's libopencv-imgcodecs-dev (4.6) ships no
# OpenCVConfig.cmake, so the header and the three libraries are found directly.
# Defines the imported target OpenCvImage::imgcodecs.
find_path(OpenCvImage_INCLUDE_DIR opencv2/imgcodecs.hpp
  HINTS ${OPENCV_ROOT} $ENV{OPENCV_ROOT}
  PATH_SUFFIXES include/opencv4 opencv4 include)
foreach(_ocv_lib imgcodecs imgproc core)
  find_library(OpenCvImage_${_ocv_lib}_LIBRARY opencv_${_ocv_lib}
    HINTS ${OPENCV_ROOT} $ENV{OPENCV_ROOT} PATH_SUFFIXES lib)
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenCvImage
  REQUIRED_VARS OpenCvImage_imgcodecs_LIBRARY OpenCvImage_imgproc_LIBRARY
                OpenCvImage_core_LIBRARY OpenCvImage_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "apt-get install libopencv-imgcodecs-dev libopencv-imgproc-dev (scripts/setup.sh does)")

if(OpenCvImage_FOUND AND NOT TARGET OpenCvImage::imgcodecs)
  # -isystem (imported): OpenCV's headers trip C++20's -Wdeprecated-enum-enum-conversion.
  add_library(OpenCvImage::imgcodecs INTERFACE IMPORTED)
  set_target_properties(OpenCvImage::imgcodecs PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCvImage_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${OpenCvImage_imgcodecs_LIBRARY};${OpenCvImage_imgproc_LIBRARY};${OpenCvImage_core_LIBRARY}")
endif()
