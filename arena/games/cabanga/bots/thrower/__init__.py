"""The bundled example bot cabanga-thrower, in a folder of its own: its jail shows it none of the other bots."""
