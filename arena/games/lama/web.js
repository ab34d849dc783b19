// L.A.M.A. on the replay viewer's table: the discard pile's top, the draw pile, every seat's hand (or the
// backs of the cards it may not see), who is still in the round, and each total as black (10) and white (1)
// chips. Draws the data of arena/games/lama/web.py's table(); registered under the game's name.
(function () {
  "use strict";

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }

  function card(text) {
    const c = node("span", "card l-card l-" + text, text === "LL" ? "llama" : text.slice(1));
    c.title = text;
    c.dataset.card = text;
    return c;
  }

  function chips(counts) {
    const box = node("span", "chips");
    for (let i = 0; i < counts[0]; i++) box.append(node("span", "chip black", ""));
    for (let i = 0; i < counts[1]; i++) box.append(node("span", "chip white", ""));
    return box;
  }

  function draw(box, frame, data) {
    const t = frame.table;
    const names = data.names;
    box.replaceChildren();
    const head = node("div", "settings");
    head.append(node("span", null, "round " + t.round));
    head.append(node("span", null, t.active === null ? "match over" : "turn of " + names[t.active]));
    box.append(head);

    const piles = node("div", "piles");
    const discard = node("div", null);
    const top = card(t.discard);
    top.classList.add("discard");
    discard.append(node("span", null, "discard: "), top, node("span", "muted", " (" + t.discard_size + " cards)"));
    const drawPile = node("div", null);
    drawPile.append(node("span", null, "draw pile: "), node("b", null, String(t.draw_size)));
    piles.append(discard, drawPile);
    box.append(piles);

    const seats = node("div", "seats");
    names.forEach((name, s) => {
      const seat = node("div", "seat");
      seat.dataset.seat = String(s);
      if (s === t.active) seat.classList.add("active");
      if (!t.in_round[s]) seat.classList.add("out");
      const title = node("div", null);
      title.append(node("span", "name", name), node("span", "total", String(t.totals[s])));
      const cards = node("span", "cards hand");
      if (t.hands[s] === null) {
        cards.classList.add("hidden");
        cards.dataset.size = String(t.hand_sizes[s]);
        for (let i = 0; i < t.hand_sizes[s]; i++) cards.append(node("span", "card back", ""));
      } else {
        t.hands[s].forEach((c) => cards.append(card(c)));
      }
      const state = node("div", "decision", (t.in_round[s] ? "" : "quit this round. ") +
        (frame.decisions[String(s)] || ""));
      seat.append(title, cards, node("div", null), chips(t.chips[s]), state);
      seats.append(seat);
    });
    box.append(seats);
  }

  window.ArenaGames = window.ArenaGames || {};
  window.ArenaGames.lama = draw;
})();
