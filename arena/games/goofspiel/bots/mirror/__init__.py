"""The bundled example bot goofspiel-mirror, in a folder of its own: its jail shows it none of the other bots."""
