# Finds the libtorch the torch backend links, preferring the one the project venv's pinned torch
# wheel ships (site-packages/torch/{include,lib,share/cmake}) to Debian's libtorch-dev: TorchScript
# saved by the venv's torch 2.13 (every current transformer calls
# aten::scaled_dot_product_attention) does not load in Debian's 1.13 ("Unknown builtin op").
# The wheel is found through the venv's stable symlink (${CONVGATE_DEPS:-$HOME/.cache/
# convgate-deps}/venv), so the module's RPATH survives a rebuilt venv; -DTORCH_PACKAGE_DIR=<dir>
# names another site-packages/torch.
#
# The wheel's TorchConfig.cmake searches the system's default paths before its own (find_library
# with PATHS, find_package(Caffe2) without NO_DEFAULT_PATH), so with libtorch-dev installed it
# would mix Debian's libraries into the wheel's headers: its library and Caffe2 config are named
# here before it runs. Debian's TorchConfig.cmake (/usr/lib/x86_64-linux-gnu/cmake/Torch) must
# come after Protobuf (its Caffe2 config reuses protobuf::libprotobuf) and brings gflags/glog.
# The wheel's config warns that it found no kineto (the profiler; the CPU wheel links it into
# libtorch_cpu): harmless. Sets Torch_FOUND, TORCH_LIBRARIES (the target `torch`) and
# CONVGATE_TORCH_SOURCE ("wheel" or "debian").
include(ConvgateVenvPackage)
convgate_venv_package(torch "${TORCH_PACKAGE_DIR}" _torch_dir)

set(CONVGATE_TORCH_SOURCE "")
if(_torch_dir AND EXISTS "${_torch_dir}/share/cmake/Torch/TorchConfig.cmake"
   AND EXISTS "${_torch_dir}/lib/libtorch.so")
  set(Caffe2_DIR "${_torch_dir}/share/cmake/Caffe2")
  set(TORCH_LIBRARY "${_torch_dir}/lib/libtorch.so")
  set(c10_LIBRARY "${_torch_dir}/lib/libc10.so")
  # Torch_DIR is a cache entry: an earlier configure may have left Debian's there.
  set(Torch_DIR "${_torch_dir}/share/cmake/Torch" CACHE PATH "libtorch's CMake config" FORCE)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(CONVGATE_TORCH_SOURCE "wheel")
  endif()
endif()
if(NOT Torch_FOUND)
  unset(Caffe2_DIR)
  unset(TORCH_LIBRARY)
  unset(c10_LIBRARY)
  unset(Torch_DIR CACHE)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(CONVGATE_TORCH_SOURCE "debian")
  endif()
endif()
if(Torch_FOUND)
  message(STATUS "libtorch ${Torch_VERSION} for the torch backend (${CONVGATE_TORCH_SOURCE}: "
                 "${TORCH_LIBRARY})")
endif()
