"""merged_archive: one static library from the objects of a cc target's deps.

Bazel 4 builds one archive per cc_library and has no rule that merges them.
tools/install.sh installs libbinlog.a, which holds the PIC objects of every
library of the repository the public API needs, and nothing of abseil, zstd,
lz4, ISA-L or zlib: those are dependencies the pkg-config and CMake files
name (a program that links MySQL's own copies must not get a second one
from us).

  merged_archive(
      name = "libbinlog_archive",
      out = "libbinlog.lo",
      deps = [":binlog"],
      packages = ["binlog", "io", "sync"],
  )

The objects are those of the transitive deps whose label is in one of
`packages` of the main repository (PIC objects, so the archive links into
shared libraries and PIE executables alike). `ar` comes from binutils on
PATH. An output named *.lo is what cc rules call an "alwayslink" library: a
cc_binary with linkshared that lists it in srcs links every object of it,
which is how //:libbinlog.so is made from the same objects.
"""

def _merged_archive_impl(ctx):
    objects = []
    seen = {}
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for lib in linker_input.libraries:
                objs = lib.pic_objects or lib.objects or []
                for obj in objs:
                    owner = obj.owner
                    if owner.workspace_name != "":
                        continue
                    if owner.package.split("/")[0] not in ctx.attr.packages:
                        continue
                    if obj.path in seen:
                        continue
                    seen[obj.path] = True
                    objects.append(obj)
    if not objects:
        fail("merged_archive %s: no objects found in %s" %
             (ctx.label, ctx.attr.packages))
    out = ctx.outputs.out
    args = ctx.actions.args()
    args.add(out)
    args.add_all(objects)
    ctx.actions.run_shell(
        inputs = objects,
        outputs = [out],
        arguments = [args],
        # q: append (members with the same base name stay distinct),
        # D: deterministic (zero timestamps and owners), s: symbol index.
        command = 'out="$1"; shift; rm -f "$out"; ar qcsD "$out" "$@"',
        mnemonic = "MergedArchive",
        progress_message = "Merging %d objects into %s" % (len(objects), out.short_path),
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]))]

merged_archive = rule(
    implementation = _merged_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "packages": attr.string_list(mandatory = True),
        "out": attr.output(mandatory = True),
    },
)
