# The installed SDK, end to end (ctest sdk_install): installs the build into a fresh prefix, then
#   - builds examples/sdk_kernel against it with find_package(mimic) and runs it (a builder and
#     an assembler kernel launched through the driver API, results checked);
#   - checks pkg-config's flags point into the prefix;
#   - imports torch_mimic with /usr/bin/python3 and PYTHONPATH unset (mimic.pth goes to the user
#     site of a private PYTHONUSERBASE, so the test touches nothing outside DIR) and runs an op;
#   - runs the installed `mimic` command, which loads libmimic.so through the prefix's paths;
#   - checks that no installed binary's RUNPATH names the build tree.
# Arguments: -DBUILD=<build tree> -DSOURCE=<source tree> -DDIR=<scratch directory>
file(REMOVE_RECURSE ${DIR})
set(prefix ${DIR}/prefix)
set(userbase ${DIR}/userbase)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(failed)
    message(FATAL_ERROR "sdk_install: ${what} failed (${failed}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} -E env PYTHONUSERBASE=${userbase}
         ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})

run_step("configuring examples/sdk_kernel" ${CMAKE_COMMAND} -S ${SOURCE}/examples/sdk_kernel
         -B ${DIR}/example -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run_step("building examples/sdk_kernel" ${CMAKE_COMMAND} --build ${DIR}/example)
run_step("running sdk_kernel" ${CMAKE_COMMAND} -E env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
         ${DIR}/example/sdk_kernel)
message(STATUS "${step_output}")

run_step("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/lib/pkgconfig
         pkg-config --cflags --libs mimic)
file(REAL_PATH ${prefix} real_prefix)
if(NOT step_output MATCHES "-I${real_prefix}/include" AND NOT step_output MATCHES "-I${prefix}")
  message(FATAL_ERROR "sdk_install: pkg-config's flags do not point into ${prefix}: ${step_output}")
endif()

run_step("importing the installed torch_mimic" ${CMAKE_COMMAND} -E env --unset=PYTHONPATH
         PYTHONUSERBASE=${userbase} SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 MIMIC_PRESET=tiny
         /usr/bin/python3 -c "
import torch, torch_mimic, mimic_cli
assert torch_mimic.__file__.startswith('${prefix}'), torch_mimic.__file__
x = torch.arange(4, dtype=torch.float32).to(torch_mimic.DEVICE_TYPE)
assert (x + 1).cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
print('torch_mimic from', torch_mimic.__file__)
")
message(STATUS "${step_output}")

run_step("the installed mimic command" ${CMAKE_COMMAND} -E env --unset=PYTHONPATH
         ${prefix}/bin/mimic presets)
if(NOT step_output MATCHES "tiny")
  message(FATAL_ERROR "sdk_install: `mimic presets` does not list the tiny preset:\n${step_output}")
endif()

file(GLOB_RECURSE binaries ${prefix}/*.so ${prefix}/bin/mimic-*)
foreach(binary ${binaries})
  run_step("readelf ${binary}" readelf -d ${binary})
  string(FIND "${step_output}" "${BUILD}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "sdk_install: ${binary} still looks for libraries in the build tree")
  endif()
endforeach()
file(REMOVE_RECURSE ${DIR})
