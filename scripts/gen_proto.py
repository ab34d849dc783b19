"""Regenerate the protocol's Python code: the one way generated code enters the repo.

- the game-neutral envelope: proto/arena/v2/*.proto into arena/v2 (with the .proto copied beside it, for
  `arena new` to hand to bots in other languages);
- every built-in game's own messages: arena/games/<name>/<name>.proto into <name>_pb2.py beside it.

Run: python scripts/gen_proto.py [--out DIR]

Uses grpcio-tools (pinned in the test extras, so the output is byte-for-byte reproducible);
tests/test_proto_drift.py runs it into a temporary folder and fails when the committed code differs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = pathlib.Path("arena") / "v2"
GAMES = pathlib.Path("arena") / "games"
INIT_TEXT = '"""Generated protobuf and gRPC code for arena.v2 (scripts/gen_proto.py). Never edit by hand."""\n'


def game_protos() -> list[pathlib.Path]:
    """Return the built-in games' .proto files, relative to the repository's root."""
    return sorted(p.relative_to(ROOT) for p in (ROOT / GAMES).glob("*/*.proto"))


def generated(out: pathlib.Path) -> list[pathlib.Path]:
    """Return, relative to ``out``, every file :func:`generate` writes."""
    names = sorted(p.name for p in (PROTO_ROOT / PACKAGE).glob("*.proto"))
    files = [PACKAGE / "__init__.py", *(PACKAGE / n for n in names)]
    for name in names:
        stem = name.removesuffix(".proto")
        files += [PACKAGE / f"{stem}_pb2.py", PACKAGE / f"{stem}_pb2.pyi", PACKAGE / f"{stem}_pb2_grpc.py"]
    for game_proto in game_protos():
        base = game_proto.with_suffix("")
        files += [base.with_name(base.name + "_pb2.py"), base.with_name(base.name + "_pb2.pyi")]
    return sorted(files)


def generate(out: pathlib.Path) -> list[pathlib.Path]:
    """Generate the Python modules of the envelope and of every built-in game under ``out``; return their paths.

    Raises RuntimeError when protoc fails.
    """
    import grpc_tools
    from grpc_tools import protoc  # test extra: only needed to regenerate

    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / PACKAGE).glob("*.proto"))
    if not protos:
        raise RuntimeError(f"no .proto files under {PROTO_ROOT / PACKAGE}")
    (out / PACKAGE).mkdir(parents=True, exist_ok=True)
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    runs = [
        [f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}",
         *protos],
        [f"-I{ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}", *map(str, game_protos())],
    ]
    for game_proto in game_protos():
        (out / game_proto).parent.mkdir(parents=True, exist_ok=True)
    for args in runs:
        if protoc.main(["protoc", *args]) != 0:
            raise RuntimeError(f"protoc failed: {' '.join(args)}")
    (out / PACKAGE / "__init__.py").write_text(INIT_TEXT, encoding="utf-8")
    for proto in protos:  # the package carries its source: `arena new` gives it to bots in other languages
        (out / proto).write_bytes((PROTO_ROOT / proto).read_bytes())
    return [out / p for p in generated(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT, help="root to write the generated code under")
    args = parser.parse_args()
    for path in generate(args.out):
        print(path.relative_to(args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
