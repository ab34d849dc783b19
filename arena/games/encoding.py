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

A game may also supply a fast path for :mod:`arena.train`'s batch: a :class:`StateEncoder`
(:meth:`GameEncoding.state_encoder`), which makes the same observations and masks straight from the match state,
without building views, as integers that a whole batch turns into arrays at once. It reads the state, so nothing but
a test keeps it to the seat's view: its rows must equal the :class:`Encoder`'s observation of ``state.view(seat)``
at every decision (``tests/test_train_fast.py`` checks that over random matches of every seat count, and runs the
hiding test on its rows too). A game without one is batched through its views.

Pure, like the rules: numpy is arena's own dependency; nothing here imports the training extra (PettingZoo,
Gymnasium), so a bot that plays a trained policy needs only arena.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from arena.games import game_packages, game_part, get_game
from arena.games.base import Action, Decision, GameError, MatchState, Pick, Prompt, View

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


class Number(NamedTuple):
    """Numbers of a :class:`StateEncoder`'s rows: the value at the observation's ``position``, divided by ``scale``
    and, with ``clip``, at most 1 (as an :class:`Encoder` computes it: ``min(1.0, value / scale)``).

    With ``seats``, a block of one value per seat, listed in the row from seat 0, each shown from the observing
    seat's point of view: seat ``s`` at ``position + (s - observer) % seats`` (a field listed ``me``, ``next``..).
    """

    position: int
    scale: float
    clip: bool = True
    seats: int = 0


Values: TypeAlias = bytes | bytearray | list[int]
"""A :class:`Row`'s numbers: ``bytes`` (or a ``bytearray``, which :meth:`StateEncoder.rows_after` may keep and
change) when every one is 0..255, else a list."""

Row: TypeAlias = tuple[int, Values]
"""One seat's observation and mask as a :class:`StateEncoder` makes them, ``(word, values)``, for a batch to expand.

``word``: an integer whose bit ``i`` is set where the observation holds 1 (``i`` < the observation's size: flags,
one-hots, sets), and bit ``size + a`` where action ``a`` is legal (none for a subset decision: a batch adds
:data:`SKIP` and :data:`TAKE`). ``values``: the integer values of the encoder's :class:`Number` entries, in their
order (a block of ``seats`` numbers takes ``seats`` values, from seat 0), as ``bytes`` (or ``bytearray``) when every
one is 0..255 (the common case, which a batch reads several times faster) or else as a list. Every position that no
bit or number sets holds 0. A plain tuple: a row is made at every decision, and a step's seats may share its
``values``."""


class StateEncoder(ABC):
    """A game's fast path for :mod:`arena.train`'s batch: ``encoder``'s observations and masks made straight from the
    match state, as :class:`Row` values, without building a view.

    Optional (:meth:`GameEncoding.state_encoder`). It reads the match state, so the one thing that keeps it to what
    the seat may see (G2) is that its rows are exactly the encoder's: at every decision, the row of a seat expands
    (:meth:`write`) to the bytes of ``encoder.observation(state.view(seat), subset)`` and to the mask of
    ``encoder.legal(prompt)``. ``tests/test_train_fast.py`` checks that at every decision of random matches of every
    seat count of the game. Write one only where views cost too much, from the same layout, and keep it beside the
    encoder it copies.

    Why this form: a batch joins its rows' words into one buffer and unpacks every bit with one numpy call, and
    joins every row's values (bytes) into one array that it scales, places and rotates to each observer with a few
    numpy operations. What a row costs in Python is then reading the state, where building a view and its positions
    costs more per decision than the rules themselves.
    """

    def __init__(self, encoder: Encoder, values: Sequence[Number]) -> None:
        self.encoder = encoder
        self.values = tuple(values)
        size = self.size = encoder.size
        """Where a row's mask bits start: action ``a`` is bit ``size + a`` of its word."""
        self.actions = len(encoder.actions)
        self.subset_mask = (1 << size + encoder.skip | 1 << size + encoder.take) if encoder.take >= 0 else 0
        """The mask bits of a subset decision's step: :data:`SKIP` and :data:`TAKE`."""
        self._width = (size + self.actions + 7) // 8  # a word's bytes
        # index -> action: how a batch turns a one-of-N row's action back into the prompt's choice
        choices: list[Any] = [None] * self.actions
        for action, index in encoder._index.items():
            if choices[index] is not None:
                raise EncodingError(f"actions {choices[index]!r} and {action!r} share index {index}: a state encoder "
                                    f"needs one action per index")
            choices[index] = action
        self.choices: tuple[Any, ...] = tuple(choices)
        """The action of every index of the action space (``None`` for :data:`SKIP` and :data:`TAKE`)."""
        # per action object, its mask bit: by identity, as the games intern their actions (and an identity is hashed
        # in C, where a card's own hash may be a Python method)
        self._mask_bits = {id(action): 1 << size + index for action, index in encoder._index.items()}
        self._masks: dict[int, tuple[Prompt, int]] = {}  # id(prompt) -> (prompt, its mask bits): see mask()
        # the values' columns, each with its position per observing seat
        seats = max([v.seats for v in self.values] + [1])
        where: list[list[int]] = []
        scales: list[float] = []
        clips: list[bool] = []
        for value in self.values:
            for s in range(max(value.seats, 1)):
                where.append([value.position + (s - observer) % value.seats if value.seats else value.position
                              for observer in range(seats)])
                scales.append(value.scale)
                clips.append(value.clip)
        self.columns = len(where)
        """How many values a row has."""
        self._where = np.array(where, dtype=np.intp).reshape(self.columns, seats).T.copy()  # [observer, column]
        self._scales = np.array(scales, dtype=np.float64)
        self._clip = np.array(clips, dtype=np.bool_)
        # per column, what each value 0..255 becomes, made as the encoder makes it (a Python float, then float32),
        # the columns end to end: column c's value v at 256 * c + v
        self._offsets = np.arange(self.columns, dtype=np.intp) * 256
        self._table = np.array([min(1.0, v / scale) if clip else v / scale
                                for scale, clip in zip(scales, clips, strict=True) for v in range(256)],
                               dtype=np.float32)
        self._index = np.arange(0)[:, None]

    @abstractmethod
    def rows(self, state: MatchState, prompts: Sequence[Prompt]) -> list[Row]:
        """Return the row of each prompt's seat in ``state`` now (the prompts of its pending step), in their order.

        For a subset decision the row is the seat's view alone: :meth:`subset_flags` adds the step's candidate.
        """

    follows = False
    """Whether this encoder follows a match from step to step (:meth:`rows_after`): a batch then keeps a
    :meth:`memo` per match and asks :meth:`rows_after` instead of :meth:`rows`."""

    def memo(self) -> Any:
        """Return a new, empty memo for :meth:`rows_after` (one per match a batch steps; the first call fills it)."""
        return None

    def rows_after(self, state: MatchState, prompts: Sequence[Prompt], memo: Any,
                   decisions: Mapping[int, Decision] | None) -> list[Row]:
        """Return :meth:`rows` of ``prompts`` in ``state``, made from what changed since the last call with ``memo``.

        ``memo`` (from :meth:`memo`) holds what the encoder made at its last call for this match; ``decisions`` are
        what was applied to the state since, as one step (``None`` when that is unknown: a new match, several
        steps, or the caller's own changes; the rows are then made anew). An encoder that follows (:attr:`follows`)
        updates the memo where a step is easy to follow and makes everything anew where it is not; its rows must
        equal :meth:`rows`' (``tests/test_train_fast.py`` checks that at every decision). A row's ``values`` may be
        the memo's own ``bytearray``, changed in place by the next call: read a row before that. The default, for an
        encoder that does not follow, is :meth:`rows`.
        """
        return self.rows(state, prompts)

    def mask(self, prompt: Prompt) -> int:
        """Return the mask bits of a one-of-N ``prompt``'s choices, for a game whose actions are interned (one object
        per action, those of the encoder's index). Raises ``KeyError`` for any other object.

        Remembered per prompt object for a game that interns its prompts too (L.A.M.A. builds every prompt ahead):
        the memo holds the prompt, so its id stays its own; it is emptied when it grows past a few thousand."""
        known = self._masks.get(id(prompt))
        if known is not None:
            return known[1]
        bits: int = sum(map(self._mask_bits.__getitem__, map(id, prompt.choices)))
        if len(self._masks) >= 4096:
            self._masks.clear()
        self._masks[id(prompt)] = (prompt, bits)
        return bits

    def subset_flags(self, candidate: Action) -> int:
        """Return the bit that shows a subset decision's ``candidate`` being decided (the ``candidate`` field of
        :class:`SubsetStep`). Raises :class:`EncodingError` in a game without subset decisions."""
        raise EncodingError(f"{type(self).__name__} has no subset decisions")

    def taken_flags(self, candidate: Action) -> int:
        """Return the bit that shows a subset decision's ``candidate`` taken (the ``taken`` field of
        :class:`SubsetStep`). Raises :class:`EncodingError` in a game without subset decisions."""
        raise EncodingError(f"{type(self).__name__} has no subset decisions")

    def write(self, words: Sequence[int], values: Sequence[Values], seats: npt.NDArray[np.intp],
              observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]) -> None:
        """Write rows into ``observations`` (shape (rows, size)) and ``masks`` (shape (rows, actions)): ``words`` and
        ``values`` one per row (:class:`Row`), ``seats`` the observing seat of each row."""
        rows = len(words)
        width = self._width
        little: Literal["little"] = "little"
        raw = np.frombuffer(b"".join(map(int.to_bytes, words, repeat(width, rows), repeat(little, rows))),
                            dtype=np.uint8)
        bits = np.unpackbits(raw, bitorder="little").reshape(rows, 8 * width)  # flat: faster than by rows
        size = self.size
        observations[:] = bits[:, :size]
        masks[:] = bits[:, size:size + self.actions].view(np.bool_)
        if not self.columns:
            return
        try:  # every value 0..255: bytes, one array at once
            small = np.frombuffer(b"".join(values), dtype=np.uint8).reshape(rows, self.columns)  # type: ignore[arg-type]
        except TypeError:  # a row with a value beyond: computed as the encoder computes it
            whole = np.array([list(v) for v in values], dtype=np.float64).reshape(rows, self.columns)
            exact = whole / self._scales
            np.minimum(exact, 1.0, out=exact, where=self._clip)
            numbers = exact.astype(np.float32)
        else:
            numbers = self._table.take(small + self._offsets)  # flat: several times faster than by column
        index = self._index
        if len(index) != rows:
            index = self._index = np.arange(rows)[:, None]
        observations[index, self._where[seats]] = numbers

    def observation(self, row: Row, seat: int, subset: SubsetStep | None = None) -> tuple[npt.NDArray[np.float32],
                                                                                        npt.NDArray[np.bool_]]:
        """Return ``seat``'s row's observation and mask as arrays (with ``subset``, a subset decision's step), as the
        batch writes them: for tests and debugging."""
        word, values = row
        if subset is not None:
            word |= self.subset_flags(subset.candidate) | self.subset_mask
            for taken in subset.taken:
                word |= self.taken_flags(taken)
        observations = np.zeros((1, self.size), dtype=np.float32)
        masks = np.zeros((1, self.actions), dtype=np.bool_)
        self.write([word], [values], np.array([seat], dtype=np.intp), observations, masks)
        return observations[0], masks[0]


class GameEncoding(ABC):
    """What a game's ``encoding`` module offers: an :class:`Encoder` per match configuration, and optionally the
    batch's fast path (:class:`StateEncoder`)."""

    @abstractmethod
    def encoder(self, options: Any, seats: int) -> Encoder:
        """Return the encoder of matches with ``options`` (the game's checked options) at ``seats`` seats."""

    def state_encoder(self, encoder: Encoder) -> StateEncoder | None:
        """Return the fast path that makes ``encoder``'s rows from the match state, or ``None`` (the default: the
        batch encodes views)."""
        return None


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


__all__ = ["SKIP", "TAKE", "Encoder", "EncodingError", "Field", "GameEncoding", "Layout", "Number", "Row",
           "StateEncoder", "SubsetStep", "Values", "encoding_of", "relative_labels"]
