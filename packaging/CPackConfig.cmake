# Debian package: both programs, the teaching examples, a .desktop entry, the icon and the Python
# module (python/: /usr/lib/python3/dist-packages/passlens, for Debian's python3).
install(FILES ${CMAKE_SOURCE_DIR}/resources/passlens.desktop DESTINATION share/applications)
install(FILES ${CMAKE_SOURCE_DIR}/resources/passlens.svg DESTINATION share/icons/hicolor/scalable/apps)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME passlens)
set(CPACK_PACKAGE_VENDOR "PassLens")
set(CPACK_PACKAGE_CONTACT "PassLens maintainers <passlens@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # dependencies from dpkg-shlibdeps (Qt, Graphviz, onnx, protobuf)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz")
if(TARGET _passlens)
  # The extension is built for Debian's python3 (its ABI tag is in the file name), as a python3-*
  # package would declare; numpy is what Model.run takes and returns.
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _pyver "${PASSLENS_PYTHON_VERSION}")
  string(REGEX REPLACE "^([0-9]+)\\.([0-9]+)$" "\\2" _pyminor "${_pyver}")
  math(EXPR _pynext "${_pyminor} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${_pyver}), python3 (<< 3.${_pynext})")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz, python3-numpy")
endif()
set(CPACK_PACKAGE_FILE_NAME passlens-${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)   # the package ships stripped binaries; debug info stays in the build tree
include(CPack)

if(PASSLENS_BUILD_TESTS)
  # Build the package, unpack it with dpkg -x and run the installed CLI from there.
  # The instrumented module imports into Debian's python3 only with the sanitizer runtime
  # preloaded; only that python3 gets it (cpack under a preloaded runtime hangs).
  add_test(NAME package_deb
    COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} "-DASAN_RUNTIME=${PASSLENS_ASAN_RUNTIME}"
            -P ${CMAKE_SOURCE_DIR}/packaging/test_package.cmake)
  # Beside the other tests (no test builds, so cpack's preinstall check has the build folder to
  # itself); its cost puts it among the early tests rather than alone at the end.
  set_tests_properties(package_deb PROPERTIES TIMEOUT 600 COST 25)
endif()
