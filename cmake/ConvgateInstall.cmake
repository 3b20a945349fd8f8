# `cmake --install BUILD --prefix PREFIX`: the binary, its modules, the runtime Python, the API
# header and libconvgate.so with a CMake package (find_package(convgate) -> convgate::convgate):
#   PREFIX/bin/convgate
#   PREFIX/lib/libconvgate.so.1               the in-process API (src/api)
#   PREFIX/lib/convgate/*.so                  modules loaded on first use (core/module_loader.h)
#   PREFIX/lib/cmake/convgate/                the package
#   PREFIX/include/convgate/convgate.h        the API's one header
#   PREFIX/share/convgate/runtime/*.py        the Python programs convgate runs
#                                             (core/install_layout.h finds them there)
# The venv those programs run in stays where ./scripts/setup.sh made it (CONVGATE_VENV).
# tests/install/install_test.sh installs into a fresh prefix and builds a program against it.
include(CMakePackageConfigHelpers)

# lib/, not GNUInstallDirs' lib/<multiarch> under /usr: the binary looks for its modules in
# ../lib/convgate, whatever the platform.
set(CONVGATE_INSTALL_LIBDIR lib)
set(CONVGATE_INSTALL_CMAKEDIR ${CONVGATE_INSTALL_LIBDIR}/cmake/convgate)

install(TARGETS convgate RUNTIME DESTINATION bin)
install(TARGETS convgate_api EXPORT convgateTargets
  LIBRARY DESTINATION ${CONVGATE_INSTALL_LIBDIR}
  INCLUDES DESTINATION include)
foreach(module convgate_backend_torch convgate_backend_opencv convgate_backend_openvino
        convgate_store_postgres convgate_image_codec)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION ${CONVGATE_INSTALL_LIBDIR}/convgate)
  endif()
endforeach()
install(FILES "${PROJECT_SOURCE_DIR}/include/convgate/convgate.h" DESTINATION include/convgate)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/" DESTINATION share/convgate/runtime
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

install(EXPORT convgateTargets NAMESPACE convgate:: DESTINATION ${CONVGATE_INSTALL_CMAKEDIR})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/convgateConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/convgateConfig.cmake" INSTALL_DESTINATION ${CONVGATE_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API (a new convgate::vN namespace).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/convgateConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/convgateConfig.cmake"
              "${PROJECT_BINARY_DIR}/convgateConfigVersion.cmake"
  DESTINATION ${CONVGATE_INSTALL_CMAKEDIR})
