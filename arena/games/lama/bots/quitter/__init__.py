"""The bundled example bot lama-quitter, in a folder of its own: its jail shows it none of the other bots."""
