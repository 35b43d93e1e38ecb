# The prebuilt ggml libraries of .cache/ggml/lib (npm @node-llama-cpp/linux-x64, the same
# release as the llama.cpp source) as a CMake package, so that llama.cpp's own build
# (LLAMA_USE_SYSTEM_GGML=ON) links them instead of compiling ggml again. The CPU backend
# variants stay dynamic: ggml loads the best one at run time from the programs' folder.
# GGML_LIB_DIR and GGML_INCLUDE_DIR name the folders (scripts/llama/build.sh sets them).
if(NOT GGML_LIB_DIR OR NOT GGML_INCLUDE_DIR)
    message(FATAL_ERROR "ggml-config: set GGML_LIB_DIR and GGML_INCLUDE_DIR")
endif()
include(CMakeFindDependencyMacro)
find_dependency(Threads)
set(GGML_BACKEND_DL ON)
if(NOT TARGET ggml::ggml-base)
    add_library(ggml::ggml-base SHARED IMPORTED)
    set_target_properties(ggml::ggml-base PROPERTIES
        IMPORTED_LOCATION "${GGML_LIB_DIR}/libggml-base.so"
        IMPORTED_SONAME "libggml-base.so"
        INTERFACE_INCLUDE_DIRECTORIES "${GGML_INCLUDE_DIR}"
        INTERFACE_LINK_LIBRARIES Threads::Threads)
    add_library(ggml::ggml SHARED IMPORTED)
    set_target_properties(ggml::ggml PROPERTIES
        IMPORTED_LOCATION "${GGML_LIB_DIR}/libggml.v0.5.0.so"
        IMPORTED_SONAME "libggml.v0.5.0.so"
        INTERFACE_LINK_LIBRARIES ggml::ggml-base)
endif()
set(ggml_FOUND TRUE)
