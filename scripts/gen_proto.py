"""Regenerate arena/v1 from proto/arena/v1/*.proto (and copy the .proto there): the one way generated code
enters the repo.

Run: python scripts/gen_proto.py [--out DIR]

Uses grpcio-tools (pinned in the test extras, so the output is byte-for-byte reproducible);
tests/test_proto_drift.py runs it into a temporary folder and fails when arena/v1 differs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = pathlib.Path("arena") / "v1"
INIT_TEXT = '"""Generated protobuf and gRPC code for arena.v1 (scripts/gen_proto.py). Never edit by hand."""\n'


def generate(out: pathlib.Path) -> list[pathlib.Path]:
    """Generate the Python modules of every .proto under proto/arena/v1 into ``out``; return their paths.

    Raises RuntimeError when protoc fails.
    """
    import grpc_tools
    from grpc_tools import protoc  # test extra: only needed to regenerate

    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / PACKAGE).glob("*.proto"))
    if not protos:
        raise RuntimeError(f"no .proto files under {PROTO_ROOT / PACKAGE}")
    (out / PACKAGE).mkdir(parents=True, exist_ok=True)
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *protos]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {' '.join(args)}")
    (out / PACKAGE / "__init__.py").write_text(INIT_TEXT, encoding="utf-8")
    for proto in protos:  # the package carries its source: `arena new` gives it to bots in other languages
        (out / proto).write_bytes((PROTO_ROOT / proto).read_bytes())
    return sorted((out / PACKAGE).iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT, help="root to write arena/v1 under")
    args = parser.parse_args()
    for path in generate(args.out):
        print(path.relative_to(args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
