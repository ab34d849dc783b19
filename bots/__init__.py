"""The example bots in other languages (``js``, ``cpp``), each playing several games: a package only so that they
are installed with the arena, where ``arena new --lang js|cpp`` finds and copies them
(:func:`arena.launch.botlist.bundled_folder`). The bundled Python bots live in their games' folders
(``arena/games/GAME/bots/``)."""
