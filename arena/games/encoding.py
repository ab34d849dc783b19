"""A game's numeric encoding for training: its ``encoding`` module's ``ENCODING``, a :class:`GameEncoding`.

A learner reads fixed-size numbers, not views. Each game's folder has an ``encoding`` module that turns the
game's :class:`~arena.games.base.View` into a fixed-size vector (numpy ``float32``, every value in 0..1) and
numbers every action a prompt of the game can offer, so that a decision is one index of a ``Discrete`` action
space with a mask of the legal ones. The layout is documented field by field in that module's docstring, and
:meth:`Encoder.text` prints any observation in a text form for debugging.

The encoding reads the view only, so it holds nothing a seat may not see (docs/rules.md G2): what
:mod:`arena.train` builds on it inherits that.

A subset decision (a Cabanga! throw: any set of candidates) is taken one candidate at a time, in the prompt's
order: for each candidate a binary choice between :data:`SKIP` and :data:`TAKE` (two fixed indices of the action
space), with the candidate and the candidates taken so far shown in the observation (:class:`SubsetStep`). Every
subset is reached by exactly one sequence, which a standard masked policy plays, and the probability of a subset
is the product of its binary choices.

Pure, like the rules: numpy is arena's own dependency; nothing here imports the training extra (PettingZoo,
Gymnasium), so a bot that plays a trained policy needs only arena.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from arena.games import game_packages, game_part, get_game
from arena.games.base import Action, GameError, Pick, Prompt, View

SKIP = "skip"
"""The text of the action that leaves a subset decision's candidate out (the throw's "keep this card")."""
TAKE = "take"
"""The text of the action that takes a subset decision's candidate (the throw's "throw this card")."""


class EncodingError(GameError):
    """A game without an encoding, or an action or observation the encoding does not know."""


class SubsetStep(NamedTuple):
    """Which candidate of a subset decision is being decided, and the candidates taken before it."""

    candidate: Action
    taken: tuple[Action, ...]


@dataclass(frozen=True)
class Field:
    """One field of an observation: ``len(labels)`` numbers, each labelled for the text form.

    ``flags`` fields hold 0 or 1 at each position (a one-hot or a set: the label names what a 1 there means);
    the others hold a number divided by ``scale`` and clipped to 1 (the label names what is counted).
    """

    name: str
    labels: tuple[str, ...]
    doc: str
    flags: bool = True
    scale: float = 1.0


class Layout:
    """Fields laid end to end: where each starts, and the observation's size."""

    def __init__(self, fields: Sequence[Field]) -> None:
        self.fields = tuple(fields)
        self.start: dict[str, int] = {}
        at = 0
        for field in self.fields:
            if field.name in self.start:
                raise EncodingError(f"two fields are named {field.name!r}")
            self.start[field.name] = at
            at += len(field.labels)
        self.size = at

    def __getitem__(self, name: str) -> int:
        """Return the position where field ``name`` starts."""
        return self.start[name]

    def table(self) -> str:
        """Return the layout as a Markdown table: field, positions, meaning (for the documentation)."""
        lines = ["| field | positions | meaning |", "|---|---|---|"]
        for field in self.fields:
            start = self.start[field.name]
            scale = "" if field.flags else f" (divided by {field.scale:g}, at most 1)"
            lines.append(f"| `{field.name}` | {start}-{start + len(field.labels) - 1} | {field.doc}{scale} |")
        return "\n".join(lines)


class Encoder(ABC):
    """A game's encoding for one match configuration (options and seat count): observation and actions.

    ``layout`` is the observation's fields; ``actions`` the text of every index of the action space, which
    :meth:`index` maps a prompt's choices to. A game with subset decisions ends ``actions`` with :data:`SKIP`
    and :data:`TAKE`.
    """

    layout: Layout
    actions: tuple[str, ...]

    def __init__(self, layout: Layout, actions: Sequence[str], index: Mapping[Hashable, int]) -> None:
        self.layout = layout
        self.actions = tuple(actions)
        self._index = dict(index)
        self.skip = self.actions.index(SKIP) if SKIP in self.actions else -1
        self.take = self.actions.index(TAKE) if TAKE in self.actions else -1

    @property
    def size(self) -> int:
        """Return the number of values of an observation."""
        return self.layout.size

    @abstractmethod
    def encode(self, view: View, subset: SubsetStep | None, ones: list[int], at: list[int],
               values: list[float]) -> None:
        """Append ``view``'s observation: to ``ones`` the positions that hold 1, to ``at`` and ``values`` the
        positions and values of the numbers (each in 0..1). Every other position holds 0. ``subset`` is the
        candidate being decided in a subset decision, else ``None``.

        Lists, not an array: a batch of matches gathers every row's positions and writes them in one go.
        """

    def observation(self, view: View, subset: SubsetStep | None = None) -> npt.NDArray[np.float32]:
        """Return ``view``'s observation as a new ``float32`` array of :attr:`size` values."""
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        self.encode(view, subset, ones, at, values)
        out = np.zeros(self.size, dtype=np.float32)
        out[ones] = 1.0
        out[at] = values
        return out

    def index(self, action: Action) -> int:
        """Return the index of ``action`` in the action space. Raises :class:`EncodingError` for an unknown one."""
        try:
            return self._index[action]  # type: ignore[index]
        except (KeyError, TypeError):
            raise EncodingError(f"{getattr(action, 'text', action)!r} is not in the action space "
                                f"({len(self.actions)} actions)") from None

    def legal(self, prompt: Prompt) -> list[int]:
        """Return the indices of ``prompt``'s legal actions: its choices for a one-of-N decision, :data:`SKIP` and
        :data:`TAKE` for a subset decision's candidate."""
        if prompt.pick is Pick.SUBSET:
            return [self.skip, self.take]
        index = self._index
        return [index[a] for a in prompt.choices]  # type: ignore[index]

    def text(self, observation: npt.ArrayLike) -> str:
        """Return the text form of an observation: one line per field that holds anything, its flags by label
        and its numbers as label=value (scaled back)."""
        values = np.asarray(observation, dtype=np.float64).ravel()
        if values.shape != (self.size,):
            raise EncodingError(f"an observation of this encoding has {self.size} values, got {values.shape}")
        lines = []
        for field in self.layout.fields:
            start = self.layout[field.name]
            part = values[start:start + len(field.labels)]
            if field.flags:
                words = [label for label, v in zip(field.labels, part, strict=True) if v]
            else:
                words = [f"{label}={v * field.scale:g}" for label, v in zip(field.labels, part, strict=True) if v]
            if words:
                lines.append(f"{field.name}: {' '.join(words)}")
        return "\n".join(lines)

    def mask_text(self, mask: npt.ArrayLike) -> str:
        """Return the texts of the actions a mask allows, space separated."""
        return " ".join(self.actions[i] for i in np.flatnonzero(np.asarray(mask)))


class GameEncoding(ABC):
    """What a game's ``encoding`` module offers: an :class:`Encoder` per match configuration."""

    @abstractmethod
    def encoder(self, options: Any, seats: int) -> Encoder:
        """Return the encoder of matches with ``options`` (the game's checked options) at ``seats`` seats."""


def encoding_of(game: str) -> GameEncoding:
    """Return game ``game``'s encoding (the ``ENCODING`` of its ``encoding`` module).

    Raises :class:`EncodingError` naming the module to write when the game has none, :class:`GameError` for an
    unknown game.
    """
    package = game_packages().get(game)
    if package is None:
        get_game(game)  # raises the unknown game's error
    try:
        value = getattr(game_part(game, "encoding"), "ENCODING", None)
    except GameError as exc:
        raise EncodingError(
            f"game {game!r} has no training encoding ({exc}): write {package}.encoding with ENCODING = an "
            f"arena.games.encoding.GameEncoding (docs/training.md, 'Encoding a game')") from None
    if not isinstance(value, GameEncoding):
        raise EncodingError(f"game {game!r}: its module {package}.encoding has no ENCODING (an "
                            f"arena.games.encoding.GameEncoding, got {value!r}); docs/training.md, 'Encoding a game'")
    return value


def relative_labels(seats: int) -> tuple[str, ...]:
    """Return the labels of a per-seat field, listed from the observing seat: ``me``, ``next`` (the seat after it),
    ``+2`` .."""
    return tuple(["me", "next", *(f"+{i}" for i in range(2, seats))][:seats])


__all__ = ["SKIP", "TAKE", "Encoder", "EncodingError", "Field", "GameEncoding", "Layout", "SubsetStep",
           "encoding_of", "relative_labels"]
