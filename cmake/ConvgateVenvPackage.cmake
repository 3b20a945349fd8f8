# convgate_venv_package(NAME OVERRIDE OUT): the folder of Python package NAME in the project venv
# that scripts/setup.sh makes (site-packages/NAME), named through the venv's stable symlink
# ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv so that paths built from it (a module's RPATH)
# survive a rebuilt venv. OVERRIDE, when set, is used as is (-DOPENVINO_PACKAGE_DIR=...). OUT is
# empty when the venv has no such package.
# convgate_deps_dir(OUT): where scripts/setup.sh keeps what it installs, the venv among it:
# ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}.
function(convgate_deps_dir out)
  set(deps "$ENV{CONVGATE_DEPS}")
  if(NOT deps)
    set(deps "$ENV{HOME}/.cache/convgate-deps")
  endif()
  set(${out} "${deps}" PARENT_SCOPE)
endfunction()

function(convgate_venv_package name override out)
  if(override)
    set(${out} "${override}" PARENT_SCOPE)
    return()
  endif()
  convgate_deps_dir(deps)
  file(GLOB candidates LIST_DIRECTORIES true "${deps}/venv/lib/python3*/site-packages/${name}")
  list(SORT candidates)
  set(found "")
  if(candidates)
    list(GET candidates -1 found)
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
