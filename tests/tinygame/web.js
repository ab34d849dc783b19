// Tiny Duel on the replay viewer's table: each seat's hand (or nothing it may not see) and its total.
(function () {
  "use strict";
  function draw(box, frame, data) {
    const t = frame.table;
    t.hands.forEach((hand, s) => {
      const line = document.createElement("div");
      line.className = "tiny-seat";
      line.textContent = data.names[s] + ": " + (hand === null ? "?" : hand.join(" ")) + " = " + t.totals[s];
      box.append(line);
    });
  }
  window.ArenaGames = window.ArenaGames || {};
  window.ArenaGames.tiny = draw;
})();
