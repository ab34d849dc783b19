"""The bundled example bot goofspiel-random, in a folder of its own: its jail shows it none of the other bots."""
