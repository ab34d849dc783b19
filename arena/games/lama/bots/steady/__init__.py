"""The bundled example bot lama-steady, in a folder of its own: its jail shows it none of the other bots."""
