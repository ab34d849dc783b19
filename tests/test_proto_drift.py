"""The committed generated code (arena/v2, each built-in game's <name>_pb2) must be exactly what
scripts/gen_proto.py makes from the .proto files."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_generator() -> object:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_proto"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_code_matches_proto(tmp_path: pathlib.Path) -> None:
    generator = _load_generator()
    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in generator.generate(tmp_path)}  # type: ignore[attr-defined]
    assert any(p.parts[:2] == ("arena", "games") for p in fresh), "no game's messages were generated"
    envelope = ROOT / "arena" / "v2"
    committed = {p.relative_to(ROOT) for p in envelope.iterdir() if p.is_file()}
    committed |= {p.relative_to(ROOT) for p in (ROOT / "arena" / "games").glob("*/*_pb2.py*")}
    assert sorted(fresh) == sorted(committed), "the committed generated files are not the ones the generator makes"
    stale = [str(name) for name in fresh if fresh[name] != (ROOT / name).read_bytes()]
    assert not stale, f"generated code drifted from its .proto: {stale}; run python scripts/gen_proto.py"
