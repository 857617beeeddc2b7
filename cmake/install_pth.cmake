# Run by `cmake --install`: makes MIMIC_PACKAGE_DIR importable by /usr/bin/python3 without
# PYTHONPATH. Nothing to do when it is already on sys.path (prefix /usr); else mimic.pth goes to
# a site directory inside the prefix if the interpreter reads one (prefix /usr/local), else to
# the user's site directory (PYTHONUSERBASE moves it), which Python reads for every prefix.
set(python /usr/bin/python3)
execute_process(
  COMMAND ${python} -c "
import os, site, sys
package = os.path.realpath(sys.argv[1])
prefix = os.path.realpath(sys.argv[2])
if package in (os.path.realpath(p) for p in sys.path):
    print('')
else:
    inside = [p for p in site.getsitepackages() if os.path.realpath(p).startswith(prefix + os.sep)]
    print(inside[0] if inside else site.getusersitepackages())
" "${MIMIC_PACKAGE_DIR}" "${CMAKE_INSTALL_PREFIX}"
  OUTPUT_VARIABLE site_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "mimic: ${python} could not name a site directory for mimic.pth")
endif()
if(site_dir)
  file(MAKE_DIRECTORY "${site_dir}")
  file(WRITE "${site_dir}/mimic.pth" "${MIMIC_PACKAGE_DIR}\n")
  message(STATUS "Installing: ${site_dir}/mimic.pth -> ${MIMIC_PACKAGE_DIR}")
endif()
