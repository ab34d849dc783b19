"""The package's build step, beside pyproject.toml (which holds everything else): compile the bots' supervisor.

``pip install .`` (and every wheel built from this folder or its sdist) compiles arena/launch/supervisor.c with
the machine's C compiler (``CC``, else ``cc``) into the package, beside arena/launch/native.py, which finds it
there. When the compiler fails, so does the build, showing what the compiler said. The wheel is then one of this
platform (it holds a program), not a pure one.

An editable install (``pip install -e .``) compiles nothing here: it runs the source tree, which may change under
it, and the supervisor is built from it at first use (arena/launch/native.py). On a system other than Linux there
is no supervisor to build (it is Linux's): the package installs without it, and ``arena sandbox`` says so.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.errors import CompileError

ROOT = Path(__file__).resolve().parent


@functools.cache
def native() -> ModuleType:
    """Return arena/launch/native.py (standard library only), loaded by its path: the package's dependencies are not
    installed while it is built."""
    spec = importlib.util.spec_from_file_location("arena_build_native", ROOT / "arena" / "launch" / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class BuildWithSupervisor(build_py):
    """build_py, then the supervisor compiled into the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # built at first use, from the source tree as it is then
        if not sys.platform.startswith("linux"):
            print(f"arena: no bot supervisor on {sys.platform} (it is for Linux): bots will run without isolation",
                  file=sys.stderr)
            return
        build = native()
        target = self._supervisor()
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            build.compile_supervisor(target)
        except build.BuildError as exc:
            said = f"\n{exc.output}" if exc.output else ""
            raise CompileError(f"arena: the bots' supervisor (arena/launch/supervisor.c) is built with the package "
                               f"(CC names the C compiler), and {exc}{said}") from None

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs: list[str] = super().get_outputs(include_bytecode)
        if not self.editable_mode and sys.platform.startswith("linux"):
            outputs.append(str(self._supervisor()))
        return outputs

    def _supervisor(self) -> Path:
        return Path(self.build_lib) / "arena" / "launch" / native().PROGRAM


class PlatformWheel(bdist_wheel):
    """A wheel of this platform (it holds the compiled supervisor), for any Python 3: ``py3-none-PLATFORM``."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildWithSupervisor, "bdist_wheel": PlatformWheel})
