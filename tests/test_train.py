"""arena.train: every game (the test suite's outside game included) as PettingZoo and Gymnasium environments and a
batched self-play path, seeing views only (G2), with PettingZoo's own API tests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from costs import capped

from arena.games import get_game, register, unregister
from arena.games.base import GameError, MatchState, Pick
from arena.games.cabanga import CABANGA, Cabanga, CabangaState, PlayCard
from arena.games.encoding import SKIP, EncodingError, encoding_of
from arena.train import ActionError, FinishedError, SelfPlay, TrainError

try:
    import gymnasium  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as exc:  # the training extra: CI installs it, so there a missing one fails
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the training extra is not installed ({exc.name}): pip install -e '.[train]'", allow_module_level=True)

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from arena.train import ArenaAEC, ArenaParallel, LearnerEnv

ROOT = Path(__file__).resolve().parent.parent
BUILTIN = [("cabanga", s) for s in range(3, 7)] + [("lama", s) for s in range(2, 7)] + \
          [("goofspiel", s) for s in range(2, 7)]
TINY = [("tiny", 2), ("tiny", 3)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Register the outside game (tests/tinygame, copied as the package ``tinygame``) as ``tiny``."""
    folder = tmp_path_factory.mktemp("pkg")
    shutil.copytree(ROOT / "tests" / "tinygame", folder / "tinygame", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(folder))
    register("tiny", "tinygame")
    try:
        yield "tiny"
    finally:
        unregister("tiny")
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == "tinygame" or n.startswith("tinygame.")]:
            del sys.modules[name]


def configs(request: pytest.FixtureRequest, game: str) -> str:
    if game == "tiny":
        request.getfixturevalue("tiny")
    return game


# ------------------------------------------------------------------------------------------- PettingZoo's tests


@pytest.mark.parametrize(("game", "seats"), BUILTIN + TINY)
def test_pettingzoos_api_and_seed_tests_pass_for_every_game_and_seat_count(
        request: pytest.FixtureRequest, game: str, seats: int) -> None:
    configs(request, game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice for dict observations, which its classic games share
        api_test(ArenaAEC(game, seats), num_cycles=1000)
        seed_test(lambda: ArenaAEC(game, seats), num_cycles=300)
        parallel_api_test(ArenaParallel(game, seats), num_cycles=3000)
        parallel_seed_test(lambda: ArenaParallel(game, seats), num_cycles=300)
    # the API tests played whole matches: every agent ends terminated with its reward
    env = ArenaAEC(game, seats)
    env.reset(seed=3)
    rewards = play_aec(env, random.Random(3))
    assert set(rewards) == set(env.possible_agents) and env.agents == []
    assert sum(rewards.values()) == pytest.approx(0.0)  # the pairwise score: each pair once for, once against


def play_aec(env: Any, rng: random.Random,
             choose: Callable[[str, dict[str, Any]], int] | None = None) -> dict[str, float]:
    """Play the env's match to the end (random legal actions unless ``choose``); return each agent's reward."""
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            rewards[agent] = reward
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(choose(agent, observation) if choose else int(rng.choice(legal)))
    return rewards


# ------------------------------------------------------------------------------------------------------ hiding


def perturb(state: MatchState, seat: int, rng: random.Random) -> bool:
    """Change what ``seat`` may not see in ``state``: another seat's hand against the hidden pile (Cabanga!,
    L.A.M.A., Tiny Duel), or the order of the prizes face down (Goofspiel, whose hands are public). Return whether
    anything changed. A seat with a pending prompt keeps its hand: the prompt was made from it."""
    if state.game == "goofspiel":
        deck = state._deck  # type: ignore[attr-defined]
        if len(deck) < 2:
            return False
        deck[0], deck[-1] = deck[-1], deck[0]
        return True
    prompted = {p.seat for p in state.pending()}
    others = [s for s in range(state.seats) if s != seat and s not in prompted]
    if not others:
        return False
    if state.game == "cabanga":
        other = rng.choice(others)
        hand, pile = state._hands[other], state._penalty  # type: ignore[attr-defined]
        swaps = [(i, j) for i in range(len(hand)) for j in range(len(pile)) if hand[i] is not pile[j]]
        if not swaps:
            return False
        i, j = rng.choice(swaps)
        hand[i], pile[j] = pile[j], hand[i]
        hand.sort()
        return True
    if state.game == "lama":
        other = rng.choice(others)
        counts, pile = state._hands[other], state._draw  # type: ignore[attr-defined]
        held = [v for v in range(1, 8) if counts[v]]
        swaps = [(v, j) for v in held for j in range(len(pile)) if pile[j].value != v]
        if not swaps:
            return False
        v, j = rng.choice(swaps)
        counts[v] -= 1
        counts[pile[j].value] += 1
        pile[j] = type(pile[j])(v)
        return True
    other = rng.choice(others)  # the outside game
    hand, deck = state._hands[other], state._deck  # type: ignore[attr-defined]
    swaps = [(i, j) for i in range(len(hand)) for j in range(len(deck)) if hand[i] != deck[j]]
    if not swaps:
        return False
    i, j = rng.choice(swaps)
    hand[i], deck[j] = deck[j], hand[i]
    hand.sort(key=lambda c: c.value)
    return True


@pytest.mark.parametrize(("game", "seats"), [("cabanga", 3), ("cabanga", 5), ("lama", 2), ("lama", 4),
                                             ("goofspiel", 3), ("tiny", 2)])
def test_g2_an_observation_and_info_stay_byte_for_byte_when_another_seats_hidden_cards_change(
        request: pytest.FixtureRequest, game: str, seats: int) -> None:
    """At decisions of random matches, the deciding seat's observation and info are made again after another
    seat's hand (or a pile's hidden order) changed: the same bytes. The changes are real: the hand or pile is not
    what it was."""
    configs(request, game)
    rng = random.Random(f"hide/{game}/{seats}")
    checked = match = 0
    while checked < 12 and match < 40:
        match += 1
        env = ArenaAEC(game, seats)
        env.reset(seed=match)
        for agent in env.agent_iter():
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            table = env._table
            seat = env.possible_agents.index(agent)
            before = (observation["observation"].tobytes(), observation["action_mask"].tobytes(), repr(info))
            state = table._state
            zones = state.zones()
            if rng.random() < 0.3 and perturb(state, seat, rng):
                assert state.zones() != zones
                table._views.clear()  # changed behind the table's back: no view of before may be kept
                env._select()  # the observation made again from the changed state
                again = env.observe(agent)
                assert (again["observation"].tobytes(), again["action_mask"].tobytes(),
                        repr(env.infos[agent])) == before, f"{agent} can tell another seat's hidden cards"
                checked += 1
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            env.step(int(rng.choice(legal)))
    assert checked >= 10


class Arranged(Cabanga):
    """Cabanga! whose every match is a copy of ``state`` (a hand-set position)."""

    def __init__(self, state: CabangaState) -> None:
        self.state = state

    def _new(self, options: Any, seats: int, seed: int) -> CabangaState:
        return self.state.clone()


# Two Cabanga! matches that differ only in a card of seat 2's hand (tests/test_hiding.py's pair): seat 0 plays
# R10 onto the right pile, leaving R2..R9 between the row's tops (C10). In A seat 2 holds R5 and is asked whether
# to throw it (it keeps it); in B it holds Y5 and nobody is asked.
PAIR_HANDS = {"A": [["R10", "Y17"], ["B10", "Y10"], ["P13", "R5"]],
              "B": [["R10", "Y17"], ["B10", "Y10"], ["P13", "Y5"]]}
PAIR_SCRIPT = {0: ["R10:right", "Y17:left"], 1: ["B10:right"], 2: ["P13:left"]}


def pair_game(which: str) -> Arranged:
    return Arranged(CabangaState.arranged(PAIR_HANDS[which], options=CABANGA.options({"rounds": 1}), seed=7))


def script(env: Any) -> Callable[[str, dict[str, Any]], int]:
    plays = {f"seat_{s}": iter(texts) for s, texts in PAIR_SCRIPT.items()}
    encoder = env.encoder

    def choose(agent: str, observation: dict[str, Any]) -> int:
        if observation["action_mask"][encoder.skip]:
            return int(encoder.skip)
        return int(encoder.index(PlayCard.parse(next(plays[agent]))))
    return choose


def test_g2_aec_matches_that_differ_only_in_a_hidden_card_look_the_same_to_the_other_seats() -> None:
    seen: dict[str, dict[str, list[tuple[bytes, bytes, str]]]] = {}
    for which in "AB":
        env = ArenaAEC(pair_game(which), 3, {"rounds": 1})
        env.reset(seed=1)
        log: dict[str, list[tuple[bytes, bytes, str]]] = {agent: [] for agent in env.possible_agents}
        choose = script(env)

        def record(agent: str, observation: dict[str, Any], log: Any = log, choose: Any = choose,
                   env: Any = env) -> int:
            log[agent].append((observation["observation"].tobytes(), observation["action_mask"].tobytes(),
                               repr(env.infos[agent])))
            return int(choose(agent, observation))
        # what observe() gives seats 0 and 1 at every step, whoever is selected (each change once)
        watched: dict[str, list[bytes]] = {"seat_0": [], "seat_1": []}

        def watch(env: Any = env, watched: dict[str, list[bytes]] = watched) -> None:
            for agent, shown in watched.items():
                now = env.observe(agent)["observation"].tobytes()
                if not shown or shown[-1] != now:
                    shown.append(now)
        original_step = env.step

        def step(action: Any, original_step: Any = original_step, watch: Any = watch, env: Any = env) -> None:
            original_step(action)
            if env.agents:
                watch()
        env.step = step
        watch()
        play_aec(env, random.Random(0), record)
        for agent in env.possible_agents:  # the final observations too
            log[agent].append((env.observe(agent)["observation"].tobytes(), b"", ""))
        log.update({f"observe {agent}": [(shown, b"", "") for shown in watched[agent]] for agent in watched})
        seen[which] = log
    assert len(seen["A"]["seat_2"]) == len(seen["B"]["seat_2"]) + 1  # A asked seat 2 to throw: a real pair
    for agent in ("seat_0", "seat_1", "observe seat_0", "observe seat_1"):
        assert seen["A"][agent] == seen["B"][agent], f"{agent} can tell the matches apart"


def test_g2_parallel_matches_that_differ_only_in_a_hidden_card_give_the_other_seats_the_same_observations() -> None:
    seen = {}
    for which in "AB":
        env = ArenaParallel(pair_game(which), 3, {"rounds": 1})
        observations, infos = env.reset(seed=1)
        choose = script(env)
        decisions: dict[str, list[tuple[bytes, bytes, str]]] = {agent: [] for agent in env.possible_agents}
        waits: dict[str, set[bytes]] = {agent: set() for agent in env.possible_agents}
        while env.agents:
            actions = {}
            for agent in env.agents:
                observation = observations[agent]
                if observation["action_mask"].any():
                    decisions[agent].append((observation["observation"].tobytes(),
                                             observation["action_mask"].tobytes(), repr(infos[agent])))
                    actions[agent] = choose(agent, observation)
                else:
                    waits[agent].add(observation["observation"].tobytes())
            observations, _, _, _, infos = env.step(actions)
        final = {agent: observations[agent]["observation"].tobytes() for agent in env.possible_agents}
        seen[which] = (decisions, waits, final)
    (dec_a, waits_a, final_a), (dec_b, waits_b, final_b) = seen["A"], seen["B"]
    assert len(dec_a["seat_2"]) == len(dec_b["seat_2"]) + 1
    for agent in ("seat_0", "seat_1"):
        assert dec_a[agent] == dec_b[agent] and final_a[agent] == final_b[agent]
        # waiting, a seat sees its last observation again: nothing that a window would change
        for decisions, waits in ((dec_a, waits_a), (dec_b, waits_b)):
            assert waits[agent] <= {d[0] for d in decisions[agent]} | {initial(pair_game("A"), agent)}


def initial(game: Arranged, agent: str) -> bytes:
    env = ArenaAEC(game, 3, {"rounds": 1})
    env.reset(seed=1)
    return bytes(env.observe(agent)["observation"].tobytes())


def test_no_public_attribute_of_an_environment_leads_to_the_match_state_or_its_seed() -> None:
    envs: list[Any] = [ArenaAEC("cabanga", 4), ArenaParallel("cabanga", 4), LearnerEnv("cabanga", 4, "cabanga-random"),
                       SelfPlay("cabanga", 4, 2)]
    envs[0].reset(seed=5)
    envs[1].reset(seed=5)
    envs[2].reset(seed=5)
    envs[3].reset()
    for env in envs:
        def walk(value: Any, path: str, seen: set[int], depth: int = 0) -> None:
            if id(value) in seen or depth > 4 or isinstance(value, str | bytes | int | float | np.ndarray):
                return
            seen.add(id(value))
            assert not isinstance(value, MatchState | random.Random), f"{path} leads to {type(value).__name__}"
            items: list[tuple[str, Any]] = []
            if isinstance(value, dict):
                items = [(f"{path}[{k!r}]", v) for k, v in value.items()]
            elif isinstance(value, list | tuple | set):
                items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
            elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
                names = [n for n in dir(value) if not n.startswith("_")]
                for name in names:
                    try:
                        attribute = getattr(value, name)
                    except Exception:
                        continue
                    if not callable(attribute) or isinstance(attribute, dict | list):
                        items.append((f"{path}.{name}", attribute))
            for where, item in items:
                walk(item, where, seen, depth + 1)
        walk(env, type(env).__name__, set())


# ------------------------------------------------------------------------------------------ actions and errors


def test_an_illegal_action_plays_the_default_and_is_flagged_one_out_of_range_is_an_error() -> None:
    env = ArenaAEC("lama", 3)
    twin = ArenaAEC("lama", 3)
    env.reset(seed=4)
    twin.reset(seed=4)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    default = int(np.flatnonzero(mask)[0])  # L.A.M.A.'s default: the first choice
    for bad in (-1, 9, 2.0, "L1", None, True):
        with pytest.raises(ActionError):
            env.step(bad)
    env.step(illegal)
    twin.step(default)
    assert env.infos[agent] == {"illegal_action": True} and twin.infos[agent] == {"illegal_action": False}
    for other in env.possible_agents:
        assert env.observe(other)["observation"].tobytes() == twin.observe(other)["observation"].tobytes()
    assert env.agent_selection == twin.agent_selection


def test_an_illegal_throw_choice_keeps_the_card_as_the_referees_default_throws_nothing() -> None:
    env = ArenaAEC(pair_game("A"), 3, {"rounds": 1})
    env.reset(seed=1)
    env.step(int(env.encoder.index(PlayCard.parse("R10:right"))))
    assert env.agent_selection == "seat_2"
    observation = env.observe("seat_2")
    assert env.encoder.mask_text(observation["action_mask"]) == "skip take"
    assert "candidate: R5" in env.encoder.text(observation["observation"])
    env.step(0)  # R1:left: not a throw choice
    assert env.infos["seat_2"] == {"illegal_action": True}
    assert env.agent_selection == "seat_1"
    assert "hand: B10 Y10" in env.encoder.text(env.observe("seat_1")["observation"])
    # seat 2 (next to seat 1) kept R5: two cards; seat 0 played one of its two
    assert "hand_sizes: me=2 next=2 +2=1" in env.encoder.text(env.observe("seat_1")["observation"])


def test_stepping_a_finished_environment_raises_pettingzoos_error_then_ours() -> None:
    env = ArenaAEC("goofspiel", 2, {"cards": 3})
    env.reset(seed=0)
    play_aec_until_terminated(env)
    with pytest.raises(ValueError, match="only valid action is None"):
        env.step(0)
    for _ in env.agent_iter():
        env.step(None)
    with pytest.raises(FinishedError):
        env.step(None)
    parallel = ArenaParallel("goofspiel", 2, {"cards": 3})
    parallel.reset(seed=0)
    while parallel.agents:
        parallel.step(dict.fromkeys(parallel.agents, 0))
    with pytest.raises(FinishedError):
        parallel.step({"seat_0": 0, "seat_1": 0})
    learner = LearnerEnv("goofspiel", 2, "goofspiel-random", {"cards": 3})
    learner.reset(seed=0)
    for _ in capped(what="the episode"):
        _, _, done, _, _ = learner.step(0)
        if done:
            break
    with pytest.raises(FinishedError):
        learner.step(0)


def play_aec_until_terminated(env: Any) -> None:
    for _ in capped(what="the episode"):
        if all(env.terminations.values()):
            break
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_a_parallel_step_needs_an_action_from_every_deciding_seat_and_checks_all_before_applying() -> None:
    env = ArenaParallel("goofspiel", 3)
    env.reset(seed=2)
    with pytest.raises(ActionError, match="seat_2 must decide"):
        env.step({"seat_0": 0, "seat_1": 0})
    with pytest.raises(ActionError, match="out of range"):
        env.step({"seat_0": 0, "seat_1": 0, "seat_2": 13})
    observations, _, _, _, infos = env.step({"seat_0": 0, "seat_1": 0, "seat_2": 0})  # nothing was applied before
    assert "trick: trick=2" in env.encoder.text(observations["seat_0"]["observation"])
    assert all(info == {"illegal_action": False} for info in infos.values())


def test_bad_construction_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GameError, match="unknown game 'chess'"):
        ArenaAEC("chess", 2)
    with pytest.raises(TrainError, match="Cabanga! is played by 3 to 6 seats, not 2"):
        ArenaParallel("cabanga", 2)
    with pytest.raises(GameError, match="option target"):
        SelfPlay("lama", 3, 4, {"target": 0})
    with pytest.raises(TrainError, match="reward must be one of pairwise, points"):
        ArenaAEC("lama", 3, reward="wins")
    with pytest.raises(TrainError, match="opponents: 3 are needed"):
        LearnerEnv("cabanga", 4, ["cabanga-random", "cabanga-greedy"])
    with pytest.raises(TrainError, match="'cabanga-nobody' is not a bundled bot of Cabanga!"):
        LearnerEnv("cabanga", 3, "cabanga-nobody")
    from arena.games.cabanga.bots.greedy.bot import GreedyCabanga

    one = GreedyCabanga()
    with pytest.raises(TrainError, match="cannot play several seats"):
        LearnerEnv("cabanga", 3, [one, one])


def test_a_game_without_an_encoding_names_the_module_to_write(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tests" / "tinygame", tmp_path / "plaingame", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "plaingame" / "encoding.py").unlink()
    sys.path.insert(0, str(tmp_path))
    (tmp_path / "plaingame" / "rules.py").write_text(
        (tmp_path / "plaingame" / "rules.py").read_text().replace('name: ClassVar[str] = "tiny"',
                                                                 'name: ClassVar[str] = "plain"'))
    register("plain", "plaingame")
    try:
        with pytest.raises(EncodingError, match=r"write plaingame\.encoding with ENCODING = an "
                                                r"arena\.games\.encoding\.GameEncoding"):
            ArenaAEC("plain", 2)
        (tmp_path / "plaingame" / "encoding.py").write_text("ENCODING = 3\n")
        with pytest.raises(EncodingError, match=r"plaingame\.encoding has no ENCODING"):
            encoding_of("plain")
    finally:
        unregister("plain")
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "plaingame" or n.startswith("plaingame.")]:
            del sys.modules[name]


# ------------------------------------------------------------------------------------------------ the encodings


@pytest.mark.parametrize("game", ["cabanga", "lama", "goofspiel", "tiny"])
def test_every_field_of_an_encoding_is_documented_in_its_folder(request: pytest.FixtureRequest, game: str) -> None:
    configs(request, game)
    the_game = get_game(game)
    encoder = encoding_of(game).encoder(the_game.options(), the_game.min_seats)
    module = sys.modules[type(encoder).__module__]
    assert module.__doc__ is not None
    for field in encoder.layout.fields:
        assert f"``{field.name}``" in module.__doc__, f"{game}: field {field.name} is not documented"
    assert f"Discrete({len(encoder.actions)})" in module.__doc__ or game == "goofspiel"


@pytest.mark.parametrize(("game", "seats"), BUILTIN + TINY)
def test_observations_are_in_their_space_and_their_text_form_names_the_hand(
        request: pytest.FixtureRequest, game: str, seats: int) -> None:
    configs(request, game)
    env = ArenaAEC(game, seats)
    env.reset(seed=seats)
    space = env.observation_space("seat_0")
    for _ in range(40):
        if not env.agents or env.terminations[env.agent_selection]:
            break
        agent = env.agent_selection
        observation = env.observe(agent)
        assert space.contains(observation)
        view = env._table.view(env.possible_agents.index(agent))
        text = env.encoder.text(observation["observation"])
        assert text.splitlines()[0].startswith(("hand: ", "holds: ")), text
        if game in ("cabanga", "goofspiel"):
            assert text.splitlines()[0] == "hand: " + " ".join(card.text for card in view.hand)
        prompt = env._table.prompt(env.possible_agents.index(agent))
        legal = env.encoder.mask_text(observation["action_mask"])
        assert legal == (f"{SKIP} take" if prompt.pick is Pick.SUBSET
                         else " ".join(dict.fromkeys(a.text for a in prompt.choices)))
        env.step(int(np.flatnonzero(observation["action_mask"])[-1]))


# ---------------------------------------------------------------------------------------------- one learner


def test_the_learner_env_passes_gymnasiums_checker_rotates_seats_and_repeats_with_a_seed() -> None:
    from arena.games.cabanga.bots.random.bot import RandomCabanga

    env = LearnerEnv("cabanga", 4, ["cabanga-greedy", RandomCabanga, "cabanga-thrower"], {"rounds": 1})
    check_env(env, skip_render_check=True)

    def episodes(seed: int) -> list[tuple[int, float, int]]:
        out = []
        observation, info = env.reset(seed=seed)
        for episode in range(5):
            if episode:
                observation, info = env.reset()
            rng = np.random.default_rng(episode)
            steps = 0
            for _ in capped(what="the episode"):
                assert (env.action_masks() == observation["action_mask"].astype(bool)).all()
                observation, reward, done, _, info = env.step(rng.choice(np.flatnonzero(observation["action_mask"])))
                steps += 1
                if done:
                    break
            out.append((info["seat"], reward, steps))
        return out
    first = episodes(11)
    assert [seat for seat, _, _ in first] == [0, 1, 2, 3, 0]
    assert episodes(11) == first
    assert episodes(12) != first


def test_the_learner_env_tells_its_bots_the_match_as_the_referee_does() -> None:
    from arena.games.bot import Bot
    from arena.games.lama.bots.greedy.bot import GreedyLama

    class Listener(GreedyLama):
        def __init__(self) -> None:
            self.calls: list[str] = []

        def on_match_start(self, info: Any) -> None:
            self.calls.append(f"start {info.seat}")

        def on_events(self, events: Any) -> None:
            self.calls.append("events")

        def on_match_end(self, result: Any, events: Any) -> None:
            self.calls.append(f"end {len(result.places)}")

    listener = Listener()
    assert isinstance(listener, Bot)
    env = LearnerEnv("lama", 2, [listener], {"rounds": 1})
    env.reset(seed=1)
    for _ in capped(what="the episode"):
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if done:
            break
    assert listener.calls[0] == "start 1" and listener.calls[-1] == "end 2" and "events" in listener.calls


# ---------------------------------------------------------------------------------------------- the batch


def test_the_batch_steps_n_matches_its_rows_the_deciding_seats_view_and_rewards_on_done() -> None:
    """The views path, row by row against the encoder of the deciding seat's view (tests/test_train_fast.py holds
    the fast path to it); a twin with the fast path makes the same batches."""
    play = SelfPlay("cabanga", 3, 5, {"rounds": 1}, seed=3, views=True)
    twin = SelfPlay("cabanga", 3, 5, {"rounds": 1}, seed=3)
    assert twin.fast and not play.fast
    batch, other = play.reset(), twin.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        assert batch.observations.shape == (5, play.size) and batch.masks.shape == (5, play.actions)
        for row, table in enumerate(play._matches.tables):  # type: ignore[attr-defined]
            seat = int(batch.seats[row])
            assert seat == table.deciders()[0]
            expected = play.encoder.observation(table.view(seat), table.subset_step(seat))
            assert batch.observations[row].tobytes() == expected.tobytes()
            assert sorted(np.flatnonzero(batch.masks[row])) == sorted(table.legal(seat))
        assert batch.observations.tobytes() == other.observations.tobytes()
        assert batch.masks.tobytes() == other.masks.tobytes()
        noise = rng.random(batch.masks.shape)
        noise[~batch.masks] = -1
        actions = noise.argmax(axis=1)
        actions[0] = 143 if not batch.masks[0, 143] else 144 if not batch.masks[0, 144] else 0
        batch, other = play.step(actions), twin.step(actions)
        assert batch.illegal[0] and not batch.illegal[1:].any()
        for row in np.flatnonzero(batch.done):
            ended += 1
            assert sum(batch.rewards[row]) == pytest.approx(0.0) and batch.rewards[row].any()
        assert not batch.rewards[~batch.done].any()
    assert ended >= 5 and play.decisions > 400
    with pytest.raises(ActionError, match="out of range"):
        play.step(np.full(5, 146))
    with pytest.raises(ActionError, match="5 integer indices"):
        play.step(np.zeros(4, dtype=np.int64))


def test_a_game_without_a_fast_path_is_batched_through_its_views(tiny: str) -> None:
    """The outside game has an encoder and no state encoder: its batch encodes each deciding seat's view."""
    assert encoding_of(tiny).state_encoder(encoding_of(tiny).encoder(get_game(tiny).options(), 2)) is None
    play = SelfPlay(tiny, 2, 3, seed=1)
    assert not play.fast
    batch = play.reset()
    for _ in range(30):
        for row, table in enumerate(play._matches.tables):  # type: ignore[attr-defined]
            seat = int(batch.seats[row])
            expected = play.encoder.observation(table.view(seat), table.subset_step(seat))
            assert batch.observations[row].tobytes() == expected.tobytes()
        batch = play.step(batch.masks.argmax(axis=1))
    assert play.decisions >= 30


@pytest.mark.process
def test_training_imports_no_grpc_and_the_encodings_no_training_extra() -> None:
    code = ("import sys\n"
            "import arena.games.cabanga.encoding, arena.games.lama.encoding, arena.games.goofspiel.encoding\n"
            "assert not {'pettingzoo', 'gymnasium'} & set(sys.modules), 'an encoding imports the extra'\n"
            "from arena.train import ArenaAEC, ArenaParallel, LearnerEnv, SelfPlay\n"
            "ArenaAEC('cabanga', 3).reset(seed=1); ArenaParallel('lama', 2).reset(seed=1)\n"
            "SelfPlay('goofspiel', 2, 2).reset()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'arena')))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout
    assert "'grpc" not in loaded and "arena.protocol" not in loaded and "arena.sdk" not in loaded, loaded
    assert "arena.train.aec" in loaded


def test_every_loop_of_the_training_guide_runs_as_written() -> None:
    """docs/training.md's Python blocks, each run as it is written (a guide whose loop fails is worse than none)."""
    import contextlib
    import io
    import re

    guide = ROOT / "docs" / "training.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 5
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(block, str(guide), "exec"), {"__name__": "guide"})
    assert "holds: " in out.getvalue() and "quit" in out.getvalue()  # the last block: the text form
