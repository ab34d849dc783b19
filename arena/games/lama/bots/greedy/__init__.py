"""The bundled example bot lama-greedy, in a folder of its own: its jail shows it none of the other bots."""
