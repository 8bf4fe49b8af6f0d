"""Project macros: every BUILD file uses these instead of copying flags around."""

# Warnings for the project's own code (third-party code is reached through system headers).
TESSEL_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-sign-compare",
    "-Wno-missing-field-initializers",
]

# Flags per instruction-set extension. Kernels for one ISA live in their own library so that only
# those files are built with the extension enabled; the registry checks CPU features at run time.
_ISA_COPTS = {
    "neon": ["-march=armv8-a"],
    "dotprod": ["-march=armv8.2-a+dotprod"],
    "i8mm": ["-march=armv8.2-a+dotprod+i8mm"],
    "sve": ["-march=armv8.2-a+sve"],
    "sve_i8mm": ["-march=armv8.2-a+sve+i8mm"],
    "sve2": ["-march=armv8.5-a+sve2"],
    "avx2": ["-mavx2", "-mfma", "-mf16c"],
    "avxvnni": ["-mavx2", "-mfma", "-mf16c", "-mavxvnni"],
    "avx512": ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mfma", "-mf16c"],
    "avx512vnni": ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512vnni", "-mfma", "-mf16c"],
}

_ARM_ISAS = ["neon", "dotprod", "i8mm", "sve", "sve_i8mm", "sve2"]

def tessel_cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = TESSEL_COPTS + copts, **kwargs)

def tessel_cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = TESSEL_COPTS + copts, **kwargs)

def tessel_cc_test(name, copts = [], deps = [], host_only = False, arch_neutral = False, x86_only = False, tags = [],
                   **kwargs):
    """A GoogleTest test. --config=aarch64 skips three kinds (they still run on the host):
    host_only: needs host tools or data (ONNX, Python references);
    arch_neutral: code with no per-architecture path (graph IR, passes, quantizers, the memory planner),
        which would only repeat the host's result under qemu at a hundred times the cost;
    x86_only: a variant that exercises x86-only choices (stream counts, GFNI), the same as its base
        test elsewhere.

    aarch64 tests link statically: Debian's cross GCC passes --as-needed to the linker ahead of every
    library, so a dynamically linked test would drop the shared objects that only register themselves
    (alwayslink: op schemas, reference kernels, passes); static links take those whole.
    """
    native.cc_test(
        name = name,
        copts = TESSEL_COPTS + copts,
        deps = deps + ["//third_party:gtest_main"],
        tags = tags + (["host_only"] if host_only else []) + (["arch_neutral"] if arch_neutral else []) +
               (["x86_only"] if x86_only else []),
        linkstatic = select({
            "//:aarch64": True,
            "//conditions:default": False,
        }),
        **kwargs
    )

def tessel_isa_cc_library(name, isa, srcs = [], copts = [], **kwargs):
    """A kernel library built with one ISA extension; empty when the target CPU family differs."""
    arm = isa in _ARM_ISAS
    native.cc_library(
        name = name,
        srcs = select({
            "//:aarch64": srcs if arm else [],
            "//conditions:default": [] if arm else srcs,
        }),
        copts = TESSEL_COPTS + copts + select({
            "//:aarch64": _ISA_COPTS[isa] if arm else [],
            "//conditions:default": [] if arm else _ISA_COPTS[isa],
        }),
        **kwargs
    )

# kernels/portable's PORTABLE_COPTS for C++ sources: what GCC's auto-vectorizer needs.
_AUTOVEC_COPTS = [
    "-O3",
    "-fopenmp-simd",
    "-fno-trapping-math",
    "-ffp-contract=fast",
]

def tessel_autovec_isa_libraries(name, isas, copts = [], deps = []):
    """Portable C++ kernels for GCC's auto-vectorizer, built once per ISA: NAME_autovec from
    NAME_autovec.cc at the target's baseline ISA, and for each of `isas` NAME_<isa> from NAME_<isa>.cc
    with that ISA's flags (tessel_isa_cc_library). Each source includes one shared implementation
    header and returns that ISA's kernels."""
    native.cc_library(
        name = name + "_autovec",
        srcs = [name + "_autovec.cc"],
        copts = TESSEL_COPTS + _AUTOVEC_COPTS + copts,
        deps = deps,
    )
    for isa in isas:
        tessel_isa_cc_library(
            name = name + "_" + isa,
            srcs = [name + "_" + isa + ".cc"],
            isa = isa,
            copts = _AUTOVEC_COPTS + copts,
            deps = deps,
        )

def tessel_cc_test_library(name, srcs, deps = [], copts = [], **kwargs):
    """A test's sources compiled once, for several tessel_cc_test / tessel_sve_test variants that differ
    only in arguments or environment (each variant: deps = [":name"], no srcs)."""
    native.cc_library(
        name = name,
        testonly = True,
        srcs = srcs,
        copts = TESSEL_COPTS + copts,
        deps = deps + ["//third_party:gtest"],
        alwayslink = True,
        **kwargs
    )

def tessel_sve_test(name, vector_lengths = [128, 256, 512], args = [], tags = [], **kwargs):
    """One test per emulated SVE vector length (the qemu wrapper reads --tessel_sve_vl). Tagged
    aarch64_only: on an x86 host they would all be the same run, every SVE case skipped."""
    tests = []
    for vl in vector_lengths:
        test_name = "%s_vl%d" % (name, vl)
        tessel_cc_test(
            name = test_name,
            args = args + ["--tessel_sve_vl=%d" % vl],
            tags = tags + ["sve", "aarch64_only"],
            **kwargs
        )
        tests.append(test_name)
    # "manual": `//...` does not expand the suite, whose tests --build_tag_filters would not keep out of
    # a host build.
    native.test_suite(name = name, tests = tests, tags = tags + ["manual"])

def tessel_cc_benchmark(name, copts = [], deps = [], tags = [], **kwargs):
    """A Google Benchmark binary (run by hand or by scripts; never a timed unit test)."""
    native.cc_binary(
        name = name,
        copts = TESSEL_COPTS + copts,
        deps = deps + ["//third_party:benchmark_main"],
        tags = tags,
        **kwargs
    )

def tessel_spill_test(name, library, functions):
    """A host test that disassembles `library`'s static archive and fails if a function whose demangled
    name matches the regex `functions` moves a vector register to or from the stack
    (kernels/portable/check_register_spills.py; its counter-example must fail first)."""
    archive = name + "_archive"
    # A cc_library in `data` brings no archive into the runfiles: copy the non-PIC one out.
    native.genrule(
        name = archive,
        srcs = [library],
        outs = [archive + ".a"],
        cmd = "cp $$(echo $(locations %s) | tr ' ' '\\n' | grep -v '\\.pic\\.a$$' | grep '\\.a$$' | head -1) $@" % library,
        tags = ["host_only"],
    )
    # Not under the asan config: its -O1 and sanitizer checks change inlining and register allocation,
    # so the functions checked are missing or spill for reasons the optimized build does not have.
    native.sh_test(
        name = name,
        srcs = ["//kernels/portable:check_register_spills_test.sh"],
        args = ["'%s'" % functions, "$(rootpath :%s)" % archive],
        data = [":" + archive, "//kernels/portable:check_register_spills"],
        tags = ["host_only", "no_asan"],
    )

def _py_testdata_impl(ctx):
    out = ctx.actions.declare_directory(ctx.attr.name)
    ctx.actions.run_shell(
        inputs = ctx.files.script + ctx.files.srcs + ctx.files.data,
        outputs = [out],
        # One BLAS/OpenMP thread per action: Bazel runs several of these at once, and oversubscribed
        # PyTorch trainings (OpenMP + OpenBLAS threads on 2 cores) ran 3-4x slower. 2 MiB pages for
        # malloc's large blocks (as the tests have, .bazelrc): training the small Llama 24.7 -> 21.1 s
        # (Zen 5 under KVM, 2026-11-28).
        command = "HOME=$(mktemp -d) PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES=glibc.malloc.hugetlb=1 PYTHONPATH=. /usr/bin/python3 %s --out %s %s" % (
            ctx.file.script.path,
            out.path,
            " ".join(ctx.attr.args),
        ),
        mnemonic = "PyTestdata",
        progress_message = "Generating %s with %s" % (ctx.label, ctx.file.script.short_path),
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

_py_testdata = rule(
    implementation = _py_testdata_impl,
    attrs = {
        "script": attr.label(allow_single_file = [".py"], mandatory = True),
        "srcs": attr.label_list(allow_files = [".py"]),
        "data": attr.label_list(allow_files = True),
        "args": attr.string_list(),
    },
)

def tessel_py_testdata(name, script, srcs = [], data = [], args = [], trains = False, tags = [], visibility = None):
    """A directory of generated test data: `/usr/bin/python3 SCRIPT --out DIR ARGS` (Debian's PyTorch,
    onnx and numpy). Host only: the aarch64 configuration skips it and the tests that use it.
    trains: the script trains a model (tag "trains_model"); `./test.sh quick` skips it and every test
    that depends on it."""
    _py_testdata(
        name = name,
        script = script,
        srcs = srcs,
        data = data,
        args = args,
        tags = tags + ["host_only"] + (["trains_model"] if trains else []),
        visibility = visibility,
    )

def tessel_fuzz_target(name, srcs, deps = [], seeds = [], mutations = 2000, tags = []):
    """A libFuzzer target (LLVMFuzzerTestOneInput) plus a test that replays the seeds, their
    truncations and `mutations` random mutations of each through the same entry point.

    `bazel build --config=fuzz //pkg:name` links the real fuzzer (clang-14); see
    tools/fuzz/run_fuzzers.sh. `tags` go on the replay test ("arch_neutral": the host runs it, not
    the aarch64 phase)."""
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = TESSEL_COPTS,
        linkopts = ["-fsanitize=fuzzer"],
        deps = deps,
        tags = ["manual", "fuzz"],
        # Test code: a fuzzer may drive layers above the one it fuzzes (tools/layering skips it).
        testonly = True,
    )
    native.cc_test(
        name = name + "_replay_test",
        srcs = srcs,
        copts = TESSEL_COPTS,
        args = ["$(location %s)" % s for s in seeds] + ["--mutations=%d" % mutations],
        data = seeds,
        tags = tags,
        deps = deps + ["//tools/fuzz:fuzz_driver"],
        # Static on aarch64 for the reason given in tessel_cc_test.
        linkstatic = select({
            "//:aarch64": True,
            "//conditions:default": False,
        }),
    )
