"""Example bots. Each module is a runnable program that speaks only the public protocol (via arena.sdk)."""
