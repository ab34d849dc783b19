"""The bundled example bot goofspiel-matcher, in a folder of its own: its jail shows it none of the other bots."""
