"""The committed generated code in arena/v1 must be exactly what scripts/gen_proto.py makes from proto/."""

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
    fresh = {p.name: p.read_bytes() for p in generator.generate(tmp_path)}  # type: ignore[attr-defined]
    committed_dir = ROOT / "arena" / "v1"
    committed = {p.name: p.read_bytes() for p in committed_dir.iterdir() if p.is_file()}
    assert sorted(fresh) == sorted(committed), "arena/v1 holds other files than the generator makes"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"arena/v1 drifted from proto/: {stale}; run python scripts/gen_proto.py"
