// Goofspiel on the replay viewer's table: the prize turned up and the pot, the prizes still face down (seen from
// above: in their order), every seat's hand (or the backs of the cards it may not see) with its total, and the
// bids of the last trick with who took the prize. Draws the data of arena/games/goofspiel/web.py's table();
// registered under the game's name.
(function () {
  "use strict";

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = text;
    return n;
  }

  function card(text, prize) {
    const c = node("span", "card g-card", text);
    c.title = (prize ? "prize " : "card ") + text;
    c.dataset.card = text;
    // the page's stylesheet knows no Goofspiel card: prizes gold, bidding cards plain
    c.style.background = prize ? "#ffe8b3" : "#fffdf5";
    return c;
  }

  function cards(texts, prize) {
    const box = node("span", "cards");
    texts.forEach((t) => box.append(card(t, prize)));
    return box;
  }

  function draw(box, frame, data) {
    const t = frame.table;
    const names = data.names;
    box.replaceChildren();
    const head = node("div", "settings");
    head.append(node("span", null, "round " + t.round), node("span", null, "trick " + t.trick),
      node("span", null, t.prize === null ? "match over" : "bidding"));
    box.append(head);

    const piles = node("div", "piles");
    const prize = node("div", "prize");
    prize.append(node("span", null, "prize: "));
    if (t.prize !== null) prize.append(card(t.prize, true));
    else prize.append(node("span", "muted", "none"));
    if (t.pot) prize.append(node("span", null, " + pot "), node("b", null, String(t.pot)));
    const toCome = node("div", "to-come");
    if (t.prize_deck !== null) {
      toCome.append(node("span", null, "prize deck (top first): "), cards(t.prize_deck, true));
    } else {
      toCome.append(node("span", null, "prizes to come: "), cards(t.to_come, true));
    }
    piles.append(prize, toCome);
    box.append(piles);

    if (t.last !== null) {
      const last = node("div", "last-trick");
      const winner = t.last.winner === null ? "a tie: nobody takes it" : names[t.last.winner] + " takes " + t.last.won;
      last.append(node("span", null, "trick " + t.last.trick + ": " + winner));
      box.append(last);
    }

    const seats = node("div", "seats");
    names.forEach((name, s) => {
      const seat = node("div", "seat");
      seat.dataset.seat = String(s);
      if (t.last !== null && t.last.winner === s) seat.classList.add("active");
      const title = node("div", null);
      title.append(node("span", "name", name), node("span", "total", String(t.totals[s])));
      const hand = node("span", "cards hand");
      if (t.hands[s] === null) {
        hand.classList.add("hidden");
        hand.dataset.size = String(t.hand_sizes[s]);
        for (let i = 0; i < t.hand_sizes[s]; i++) hand.append(node("span", "card back", ""));
      } else {
        t.hands[s].forEach((c) => hand.append(card(c, false)));
      }
      const bid = node("div", "bid");
      if (t.last !== null) bid.append(node("span", null, "bid: "), card(t.last.bids[s], false));
      seat.append(title, hand, bid, node("div", "decision", frame.decisions[String(s)] || ""));
      seats.append(seat);
    });
    box.append(seats);
  }

  window.ArenaGames = window.ArenaGames || {};
  window.ArenaGames.goofspiel = draw;
})();
