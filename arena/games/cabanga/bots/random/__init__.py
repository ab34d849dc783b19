"""The bundled example bot cabanga-random, in a folder of its own: its jail shows it none of the other bots."""
