# The installed SDK: `cmake --install build --prefix P` lays out
#   P/include/mimic/             the driver API, the collectives, mimic/torch.h, isa/ (builder, assembler)
#   P/lib/                       libmimic.so, libmimic_isa.a, libmimic_collectives.a
#   P/lib/cmake/mimic/           mimicConfig.cmake: mimic::driver, mimic::isa, mimic::collectives,
#                                mimic::torch
#   P/lib/pkgconfig/mimic.pc
#   P/lib/python3/dist-packages/ torch_mimic (with libmimic_torch.so) and mimic_cli
#   P/bin/                       mimic, mimic-asm, mimic-replay, mimic-probe, mimic-bench-collectives
#   P/share/mimic/               the published-figures files and the conformance tests of the CLI
# Every installed binary finds the others relative to itself (RPATH $ORIGIN/...), so the prefix
# can be moved. The presets are compiled into libmimic.so, so no data file is needed to run.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MIMIC_VERSION 0.1.0)
# Debian's layout for Python packages of a prefix (/usr/lib/python3/dist-packages); the .pth file
# below makes it importable for other prefixes.
set(MIMIC_INSTALL_PYTHONDIR lib/python3/dist-packages
    CACHE STRING "Where the Python packages go, relative to the prefix")
option(MIMIC_INSTALL_PTH
       "Install mimic.pth (the package directory) into a site directory /usr/bin/python3 reads"
       ON)
set(MIMIC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mimic)

# The public headers. sim/isa's headers include each other by file name, so they also work from
# P/include/mimic/isa/.
install(DIRECTORY driver/include/mimic collectives/include/mimic torch_backend/include/mimic
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
file(GLOB MIMIC_ISA_HEADERS ${CMAKE_SOURCE_DIR}/sim/isa/*.h)
install(FILES ${MIMIC_ISA_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mimic/isa)

set_target_properties(mimic PROPERTIES EXPORT_NAME driver INSTALL_RPATH "$ORIGIN")
set_target_properties(mimic_isa PROPERTIES EXPORT_NAME isa)
set_target_properties(mimic_collectives PROPERTIES EXPORT_NAME collectives)
set_target_properties(mimic_torch PROPERTIES EXPORT_NAME torch
                      INSTALL_RPATH "$ORIGIN/../../..")
install(TARGETS mimic mimic_isa mimic_collectives EXPORT mimicTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The backend library stays beside the Python package that loads it (torch.ops.load_library).
install(TARGETS mimic_torch EXPORT mimicTargets
        LIBRARY DESTINATION ${MIMIC_INSTALL_PYTHONDIR}/torch_mimic
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT mimicTargets NAMESPACE mimic:: DESTINATION ${MIMIC_CMAKE_DIR})
configure_package_config_file(cmake/mimicConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/mimicConfig.cmake
                              INSTALL_DESTINATION ${MIMIC_CMAKE_DIR} PATH_VARS MIMIC_INSTALL_PYTHONDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/mimicConfigVersion.cmake
                                 VERSION ${MIMIC_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/mimicConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/mimicConfigVersion.cmake DESTINATION ${MIMIC_CMAKE_DIR})
configure_file(cmake/mimic.pc.in ${CMAKE_BINARY_DIR}/cmake/mimic.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/mimic.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Tools.
set(MIMIC_TOOLS mimic-asm mimic-replay mimic-probe mimic-bench-collectives)
set_target_properties(${MIMIC_TOOLS} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS ${MIMIC_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
configure_file(cmake/mimic_launcher.in ${CMAKE_BINARY_DIR}/cmake/mimic @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/cmake/mimic DESTINATION ${CMAKE_INSTALL_BINDIR})

# The Python packages: the build tree's python/ without its libraries (installed above and here
# with their install RPATH) and without the build tree's paths (_build.py).
install(DIRECTORY ${CMAKE_BINARY_DIR}/python/ DESTINATION ${MIMIC_INSTALL_PYTHONDIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "*.md" PATTERN "__pycache__" EXCLUDE
        PATTERN "_build.py" EXCLUDE)
set_target_properties(mimic_c10d PROPERTIES INSTALL_RPATH "$ORIGIN/../../..;$ORIGIN")
install(TARGETS mimic_c10d LIBRARY DESTINATION ${MIMIC_INSTALL_PYTHONDIR}/torch_mimic)
set_target_properties(mimic_profiler PROPERTIES INSTALL_RPATH "$ORIGIN/../../../..;$ORIGIN/..")
install(TARGETS mimic_profiler LIBRARY DESTINATION ${MIMIC_INSTALL_PYTHONDIR}/torch_mimic/profiler)
file(RELATIVE_PATH MIMIC_PACKAGE_TO_PREFIX /P/${MIMIC_INSTALL_PYTHONDIR}/mimic_cli /P)
configure_file(cmake/mimic_cli_build.py.in ${CMAKE_BINARY_DIR}/cmake/_build.py @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/_build.py DESTINATION ${MIMIC_INSTALL_PYTHONDIR}/mimic_cli)
install(DIRECTORY sim/presets/figures/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mimic/figures)
install(DIRECTORY tests/conformance/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mimic/conformance
        PATTERN "__pycache__" EXCLUDE)

if(MIMIC_INSTALL_PTH)
  install(CODE "set(MIMIC_PACKAGE_DIR \"\${CMAKE_INSTALL_PREFIX}/${MIMIC_INSTALL_PYTHONDIR}\")")
  install(SCRIPT cmake/install_pth.cmake)
endif()
