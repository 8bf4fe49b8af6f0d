"""tessel_static_library: one archive holding a cc_library and everything it links from this workspace,
for applications that link Tessel statically without Bazel. System libraries (Abseil, protobuf,
XNNPACK) stay outside; their flags are written beside the archive (NAME.linkopts)."""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _impl(ctx):
    archives = []
    flags = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            flags += [f for f in linker_input.user_link_flags if f not in flags]
            for lib in linker_input.libraries:
                a = lib.pic_static_library or lib.static_library
                if a and a not in archives:
                    archives.append(a)
    out = ctx.actions.declare_file(ctx.attr.name + ".a")
    linkopts = ctx.actions.declare_file(ctx.attr.name + ".linkopts")
    ctx.actions.write(linkopts, "\n".join(flags) + "\n")
    toolchain = find_cpp_toolchain(ctx)
    script = "create %s\n" % out.path + "".join(["addlib %s\n" % a.path for a in archives]) + "save\nend\n"
    ctx.actions.run_shell(
        inputs = depset(archives, transitive = [toolchain.all_files]),
        outputs = [out],
        command = "printf '%%s' \"$1\" | %s -M" % toolchain.ar_executable,
        arguments = [script],
        mnemonic = "TesselStaticLibrary",
        progress_message = "Merging %d archives into %s" % (len(archives), out.short_path),
    )
    return [DefaultInfo(files = depset([out, linkopts]))]

tessel_static_library = rule(
    implementation = _impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)
