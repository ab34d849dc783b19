// Cabanga! on the replay viewer's table: the four colour rows with both pile tops, the penalty pile and the
// set-aside cards, and every seat's hand (or the backs of the cards it may not see) with its total.
// Draws the data of arena/games/cabanga/web.py's table(); registered under the game's name.
(function () {
  "use strict";
  const ROW_NAMES = {R: "red", B: "blue", P: "purple", Y: "yellow"};

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }

  function card(text) {
    const c = node("span", "card c-" + text[0], text.slice(1));
    c.title = text;
    c.dataset.card = text;
    return c;
  }

  function hand(cards, size) {
    const box = node("span", "cards hand");
    if (cards === null) {
      box.classList.add("hidden");
      box.dataset.size = String(size);
      for (let i = 0; i < size; i++) box.append(node("span", "card back", ""));
    } else {
      cards.forEach((c) => box.append(card(c)));
    }
    return box;
  }

  function draw(box, frame, data) {
    const t = frame.table;
    const names = data.names;
    box.replaceChildren();
    const over = t.step === null;
    const head = node("div", "settings");
    head.append(node("span", null, "round " + t.round));
    head.append(node("span", null, over ? "match over" : (t.step === "throw" ? "throw after " : "turn of ") + names[t.active]));
    if (t.previous_colour) head.append(node("span", null, "last colour played: " + ROW_NAMES[t.previous_colour]));
    box.append(head);

    const piles = node("div", "piles");
    const penalty = node("div", null);
    penalty.append(node("span", null, "penalty pile: "), node("b", "penalty-size", String(t.penalty_size)));
    const aside = node("div", null, "set aside: ");
    if (t.set_aside === null) aside.append(node("b", null, String(t.set_aside_size)));
    else if (!t.set_aside.length) aside.append(node("span", "muted", "none"));
    else { const cs = node("span", "cards"); t.set_aside.forEach((c) => cs.append(card(c))); aside.append(cs); }
    piles.append(penalty, aside);
    box.append(piles);

    const rows = node("div", "rows");
    rows.style.marginTop = "1em";
    for (const row of t.rows) {
      const label = node("span", "label", ROW_NAMES[row.colour]);
      const left = card(row.left), right = card(row.right);
      left.classList.add("top-left");
      right.classList.add("top-right");
      if (t.throw_row === row.colour) { left.classList.add("throw"); right.classList.add("throw"); }
      const size = (n) => node("span", "muted", n === undefined ? "" : n + " on the piles");
      rows.append(label, left, right, size(row.left_size === undefined ? undefined : row.left_size + row.right_size));
    }
    box.append(rows);

    const seats = node("div", "seats");
    names.forEach((name, s) => {
      const seat = node("div", "seat");
      seat.dataset.seat = String(s);
      if (!over && s === t.active) seat.classList.add("active");
      const title = node("div", null);
      title.append(node("span", "name", name), node("span", "total", String(t.totals[s])));
      const decision = node("div", "decision", frame.decisions[String(s)] || "");
      seat.append(title, hand(t.hands[s], t.hand_sizes[s]), decision);
      seats.append(seat);
    });
    box.append(seats);
  }

  window.ArenaGames = window.ArenaGames || {};
  window.ArenaGames.cabanga = draw;
})();
