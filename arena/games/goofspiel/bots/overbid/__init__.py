"""The bundled example bot goofspiel-overbid, in a folder of its own: its jail shows it none of the other bots."""
