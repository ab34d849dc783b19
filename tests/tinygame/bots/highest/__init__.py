"""The bundled bot tiny-highest, in a folder of its own."""
