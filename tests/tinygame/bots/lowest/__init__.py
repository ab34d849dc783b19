"""The bundled bot tiny-lowest, in a folder of its own."""
