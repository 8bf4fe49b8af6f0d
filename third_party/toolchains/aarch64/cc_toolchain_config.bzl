"""C++ toolchain for aarch64-linux-gnu (Debian's GCC 12 cross compiler) against Tessel's arm64 sysroot.

The sysroot holds Debian's arm64 -dev packages unpacked by setup.sh (XNNPACK, Abseil, GoogleTest, ...),
since several of them cannot be installed for amd64 and arm64 side by side."""

load(
    "@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
    "with_feature_set",
)
load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")

# Keep in sync with SYSROOT in setup.sh.
SYSROOT = "/opt/tessel/sysroot-aarch64"

_ALL_COMPILE_ACTIONS = [
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.assemble,
    ACTION_NAMES.preprocess_assemble,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
    ACTION_NAMES.linkstamp_compile,
]

_CPP_COMPILE_ACTIONS = [
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
    ACTION_NAMES.linkstamp_compile,
]

_ALL_LINK_ACTIONS = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

def _impl(ctx):
    prefix = "/usr/bin/aarch64-linux-gnu-"
    tool_paths = [
        tool_path(name = "gcc", path = prefix + "gcc"),
        tool_path(name = "ld", path = prefix + "ld"),
        tool_path(name = "ar", path = prefix + "ar"),
        tool_path(name = "cpp", path = prefix + "cpp"),
        tool_path(name = "gcov", path = prefix + "gcov"),
        tool_path(name = "nm", path = prefix + "nm"),
        tool_path(name = "objdump", path = prefix + "objdump"),
        tool_path(name = "strip", path = prefix + "strip"),
    ]
    libdir = SYSROOT + "/usr/lib/aarch64-linux-gnu"
    features = [
        feature(name = "opt"),
        feature(name = "dbg"),
        feature(name = "fastbuild"),
        feature(name = "supports_pic", enabled = True),
        feature(name = "supports_dynamic_linker", enabled = True),
        feature(
            name = "default_compile_flags",
            enabled = True,
            flag_sets = [
                flag_set(
                    actions = _ALL_COMPILE_ACTIONS,
                    flag_groups = [flag_group(flags = [
                        "-isystem",
                        SYSROOT + "/usr/include",
                        "-march=armv8-a",
                        "-fPIC",
                        "-Wall",
                        "-Wno-unused-parameter",
                        "-fno-omit-frame-pointer",
                        # Reproducible outputs for the disk cache.
                        "-Wno-builtin-macro-redefined",
                        "-D__DATE__=\"redacted\"",
                        "-D__TIMESTAMP__=\"redacted\"",
                        "-D__TIME__=\"redacted\"",
                    ])],
                ),
                flag_set(
                    actions = _CPP_COMPILE_ACTIONS,
                    flag_groups = [flag_group(flags = ["-std=c++17"])],
                ),
                flag_set(
                    actions = _ALL_COMPILE_ACTIONS,
                    flag_groups = [flag_group(flags = ["-O2", "-DNDEBUG", "-ffunction-sections", "-fdata-sections"])],
                    with_features = [with_feature_set(features = ["opt"])],
                ),
                flag_set(
                    actions = _ALL_COMPILE_ACTIONS,
                    flag_groups = [flag_group(flags = ["-O0", "-g"])],
                    with_features = [with_feature_set(features = ["dbg"])],
                ),
            ],
        ),
        feature(
            name = "default_link_flags",
            enabled = True,
            flag_sets = [
                flag_set(
                    actions = _ALL_LINK_ACTIONS,
                    flag_groups = [flag_group(flags = [
                        "-L" + libdir,
                        "-Wl,-rpath-link," + libdir,
                        "-Wl,-rpath-link," + SYSROOT + "/lib/aarch64-linux-gnu",
                        # qemu-aarch64 finds the sysroot's shared libraries through this rpath; DT_RPATH
                        # (not RUNPATH) so that it also serves the libraries' own dependencies.
                        "-Wl,--disable-new-dtags",
                        "-Wl,-rpath," + libdir,
                        "-Wl,-rpath," + SYSROOT + "/lib/aarch64-linux-gnu",
                        "-lstdc++",
                        "-lm",
                        "-pthread",
                    ])],
                ),
                flag_set(
                    actions = _ALL_LINK_ACTIONS,
                    flag_groups = [flag_group(flags = ["-Wl,--gc-sections"])],
                    with_features = [with_feature_set(features = ["opt"])],
                ),
            ],
        ),
    ]
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = features,
        cxx_builtin_include_directories = [
            "/usr/aarch64-linux-gnu/include",
            "/usr/lib/gcc-cross/aarch64-linux-gnu/12/include",
            "/usr/lib/gcc-cross/aarch64-linux-gnu/12/include-fixed",
            "/usr/include/eigen3",
            SYSROOT + "/usr/include",
        ],
        toolchain_identifier = "aarch64-linux-gnu",
        host_system_name = "x86_64-unknown-linux-gnu",
        target_system_name = "aarch64-unknown-linux-gnu",
        target_cpu = "aarch64",
        target_libc = "glibc",
        compiler = "gcc",
        abi_version = "aarch64",
        abi_libc_version = "glibc",
        tool_paths = tool_paths,
    )

aarch64_cc_toolchain_config = rule(
    implementation = _impl,
    attrs = {},
    provides = [CcToolchainConfigInfo],
)
