"""Helpers of scripts/stack: profiles, processes, services, tokens, emulator add-ons."""
