"""The bundled example bot cabanga-tidy, in a folder of its own: its jail shows it none of the other bots."""
